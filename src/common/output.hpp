#pragma once
// Where results go, written once for every command: stdout, or a file that a
// reader never sees half-written.
#include <string>

namespace ioacct {

// `text` to stdout, flushed, or, when `path` is not empty, to that file with
// write_atomically(). Throws RuntimeError when stdout cannot take it
// ("cannot write to stdout: ...") or the file cannot be written (naming `flag`).
void write_output(const std::string& text, const std::string& path = "", const std::string& flag = "--output");

// Writes `text` to `path` through a temporary name and a rename, so that a
// reader never sees a half-written file, and an interrupted run leaves none;
// errors name `flag`.
void write_atomically(const std::string& path, const std::string& text, const std::string& flag = "--output");

// Fails before a run, not after it, if `path` cannot be written: throws
// UsageError naming `flag` (creating nothing, so a failed run leaves no file).
void check_output_writable(const std::string& flag, const std::string& path);

}  // namespace ioacct
