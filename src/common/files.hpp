#pragma once
// Reading the kernel's small text files (/proc, /sys), in one place.
#include <string>

namespace ioacct {

// The whole file; "" if it cannot be read (a process or device that went away).
std::string read_file(const std::string& path);
// Its first line, without the newline; "" if it cannot be read. `ok`, if
// given, tells an unreadable file from an empty line.
std::string read_first_line(const std::string& path, bool* ok = nullptr);

}  // namespace ioacct
