#pragma once
// Parsers for the kernel's text files. Pure functions over text: no I/O, so
// they are unit-tested on fixed lines and fuzzed (tests/fuzz/). Each one
// tolerates what older or newer kernels add (extra fields are ignored or
// kept) and returns nothing, never garbage, for a line it cannot read.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ioacct {

// One line of /proc/PID/mountinfo (proc(5)):
// "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue"
struct MountInfo {
  unsigned major = 0, minor = 0;
  std::string mount_point;  // octal escapes (\040 for space) decoded
  std::string fs_type;
  std::string source;
};
std::optional<MountInfo> parse_mountinfo_line(std::string_view line);
std::vector<MountInfo> parse_mountinfo(std::string_view text);

// /proc/swaps: the first column of every line after the header.
std::vector<std::string> parse_swaps(std::string_view text);

// /proc/uptime ("12345.67 23456.78"): the first figure in 1/100 s, read as
// sysstat does (seconds, a dot, two digits of hundredths).
std::optional<uint64_t> parse_uptime_cs(std::string_view text);

// One line of /proc/diskstats (Documentation/admin-guide/iostats.rst):
// major minor name, then 11 (before 4.18), 15 (4.18+) or 17 (5.5+) counters.
struct DiskStats {
  unsigned major = 0, minor = 0;
  std::string name;
  uint64_t reads = 0, reads_merged = 0, sectors_read = 0, read_ms = 0;
  uint64_t writes = 0, writes_merged = 0, sectors_written = 0, write_ms = 0;
  uint64_t in_flight = 0, io_ms = 0, weighted_ms = 0;
  uint64_t discards = 0, discards_merged = 0, sectors_discarded = 0, discard_ms = 0;  // 4.18+
  uint64_t flushes = 0, flush_ms = 0;                                                 // 5.5+
  int fields = 0;  // counters present: 11, 15 or 17
};
std::optional<DiskStats> parse_diskstats_line(std::string_view line);

// /proc/PID/fdinfo/FD of an io_uring: "Key:\tvalue" lines. Values are kept
// as text (some are lists); numeric ones are read with fdinfo_number().
// The per-entry dumps that follow "SqEntries:"/"CQEs:" headers are skipped.
using FdInfo = std::map<std::string, std::string, std::less<>>;
FdInfo parse_fdinfo(std::string_view text);
std::optional<uint64_t> fdinfo_number(const FdInfo& info, std::string_view key);
// A "0x..." value (SqMask, CqMask); nothing for decimal or anything else.
std::optional<uint64_t> fdinfo_hex(const FdInfo& info, std::string_view key);
// The indented entry lines the kernel prints under a header line such as
// "CqOverflowList:" or "UserFiles:\t2" (one per overflowed CQE, registered
// file ...); 0 if the header is missing. parse_fdinfo skips these lines.
size_t fdinfo_entries(std::string_view text, std::string_view header);

}  // namespace ioacct
