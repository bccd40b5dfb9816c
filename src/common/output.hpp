#pragma once
// Where results go, written once for every command: stdout, or a file that a
// reader never sees half-written.
#include <string>

namespace ioacct {

// `text` to stdout, flushed, or, when `path` is not empty, to that file with
// write_atomically(). Throws RuntimeError when stdout cannot take it
// ("cannot write to stdout: ...") or the file cannot be written (naming `flag`).
void write_output(const std::string& text, const std::string& path = "", const std::string& flag = "--output");

// Writes `text` to `path`, never replacing anything but a regular file:
// - a new or regular file (through any symlinks, which stay) gets a temporary
//   name and a rename, so a reader never sees it half-written and an
//   interrupted run leaves none;
// - a character device (/dev/null) or FIFO is written straight into; a FIFO
//   waits for its reader (said once on stderr) until a stop signal is pending;
// - a directory, block device or socket is refused (RuntimeError here; the
//   same check before the run is check_output_writable()'s usage error).
// Errors name `flag`.
void write_atomically(const std::string& path, const std::string& text, const std::string& flag = "--output");

// Fails before a run, not after it, if `path` cannot be written or is a
// directory, block device or socket: throws UsageError naming `flag`
// (creating nothing, so a failed run leaves no file).
void check_output_writable(const std::string& flag, const std::string& path);

}  // namespace ioacct
