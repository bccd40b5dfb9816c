#pragma once
// Where results go, written once for every command: stdout, or a file that a
// reader never sees half-written.
#include <string>

namespace ioacct {

// `text` to stdout, flushed, or, when `path` is not empty, to that file with
// write_atomically(). Throws RuntimeError when stdout cannot take it
// ("cannot write to stdout: ...") or the file cannot be written (naming `flag`
// and the errno); in that case the text has gone to stdout instead, and the
// error says so, so that a full disk does not cost the results.
void write_output(const std::string& text, const std::string& path = "", const std::string& flag = "--output");

// Writes `text` to `path`, never replacing anything but a regular file:
// - a symlink (at the end of `path`, or one it leads to) in a sticky
//   world-writable directory such as /tmp is followed only when the caller
//   (euid) or the directory's owner owns it, as fs.protected_symlinks=1 does
//   whatever the sysctl says; anyone else's is refused;
// - a new or regular file (through any symlinks, which stay) is written into
//   an unnamed file (O_TMPFILE; else a new random name, O_EXCL|O_NOFOLLOW)
//   in its directory and renamed over it, so a reader never sees it
//   half-written, an interrupted run leaves none, and no name planted
//   beforehand is ever written through;
// - a character device (/dev/null) or FIFO is written straight into; a FIFO
//   waits for its reader (said once on stderr) until a stop signal is pending;
// - a directory, block device or socket is refused (RuntimeError here; the
//   same check before the run is check_output_writable()'s usage error).
// Errors name `flag`.
void write_atomically(const std::string& path, const std::string& text, const std::string& flag = "--output");

// Fails before a run, not after it, if `path` cannot be written, is a
// directory, block device or socket, or leads through someone else's symlink
// in a sticky world-writable directory: throws UsageError naming `flag`
// (creating nothing, so a failed run leaves no file).
void check_output_writable(const std::string& flag, const std::string& path);

}  // namespace ioacct
