#pragma once
// Reading the kernel's small text files (/proc, /sys), and the files a user
// names (job files, configurations, certificates, saved results), in one
// place.
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace ioacct {

// The whole file; "" if it cannot be read (a process or device that went away).
std::string read_file(const std::string& path);
// Its first line, without the newline; "" if it cannot be read. `ok`, if
// given, tells an unreadable file from an empty line.
std::string read_first_line(const std::string& path, bool* ok = nullptr);

// How long a FIFO or pipe given as a user's file may send nothing before
// the read gives up: `cat job.fio | ioacct bench --fio /dev/stdin` sends at
// once, and a FIFO that nobody writes must not hang the run.
inline constexpr std::chrono::seconds kUserFileIdle{10};

// A file the user named, whole: at most `limit` bytes. A FIFO, pipe or
// character device is read while it keeps sending (each wait at most `idle`),
// and its open never waits for a writer. nullopt with `error` set ("No such
// file or directory (ENOENT)", "larger than 1 MiB", "a FIFO that sent
// nothing for 10 s") when it cannot be read; `errno_out`, if given, gets the
// errno behind an open or read failure (0 for the others).
std::optional<std::string> read_user_file(const std::string& path, size_t limit, std::string& error,
                                          std::chrono::milliseconds idle = kUserFileIdle, int* errno_out = nullptr);

}  // namespace ioacct
