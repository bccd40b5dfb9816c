#pragma once
// Strict parsing and printing of unit-bearing values, in one place.
//   sizes:     IEC, 4k = 4096. Suffixes k m g t p (any case), KiB MiB GiB TiB PiB,
//              b/B or none for bytes. "KB"/"MB" are refused as ambiguous.
//   counts:    SI, 10k = 10000. Suffixes k K M G T.
//   durations: a unit is required: ns us ms s m h (10s, 500ms, 1.5m).
//   bandwidth: a size per second: "50m", "50MiB/s" (IEC, like sizes).
//   ids:       a pid or a CPU number: plain decimal digits, no suffix.
// Every parser throws UsageError("<flag>: ...") on anything it cannot read:
// never a silent default, never a partial read ("4q", "10", "-1", "").
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ioacct {

uint64_t parse_size(std::string_view flag, std::string_view text);
uint64_t parse_count(std::string_view flag, std::string_view text);
std::chrono::nanoseconds parse_duration(std::string_view flag, std::string_view text);
uint64_t parse_bandwidth(std::string_view flag, std::string_view text);  // bytes/s
// `what` names the kind in the message: "a process id", "a CPU number".
uint64_t parse_id(std::string_view flag, std::string_view text, std::string_view what);
// "5%" or "5" -> 0.05: a share in percent, above 0 and below 100.
double parse_percent(std::string_view flag, std::string_view text);
// fio's list for reads, writes and trims (rate=r,w,t, bs=r,w): "a" sets all
// three, "a,b" reads a and writes and trims b, "a," reads only, ",b" writes
// and trims. The three fields, "" where a direction is left unset; nullopt
// for more than three. --rate-iops R,W,T and fio's rate options read it.
std::optional<std::array<std::string, 3>> split_directions(std::string_view text);
// "99.9" -> 99.9: a percentage above 0 and at most 100 (--latency-percentile,
// fio's latency_percentile); nullopt for anything else.
std::optional<double> percentile_of(const std::string& text);
// "0,2-3,7" -> {0,2,3,7}; duplicates and descending ranges are errors.
std::vector<int> parse_cpu_list(std::string_view flag, std::string_view text);

// Printing, also in one place. GiB means 2^30 bytes, always.
std::string format_size(uint64_t bytes);            // "4 KiB", "1.50 GiB"
std::string format_bandwidth(double bytes_per_s);   // 3 significant digits: "482 MiB/s", "48.2 MiB/s"
std::string format_count(double n);                 // "123.4k", "12.35M"
std::string format_duration_ns(double ns);          // "812 ns", "45.6 µs", "1.23 ms", "10.00 s", "2 h 30 min"
// "1 I/O", "2 I/Os"; `many` where adding "s" is wrong ("1 mismatch", "2 mismatches").
std::string plural(uint64_t n, std::string_view one, std::string_view many = {});
// RFC 3339 in UTC to the millisecond, as JavaScript's Date.toISOString():
// "2026-12-01T15:40:00.123Z". `unix_ns`: nanoseconds since the epoch.
std::string format_rfc3339(int64_t unix_ns);
// The same to the nanosecond ("2026-12-01T15:40:00.123456789Z"): a window's
// edges, which a merge of several hosts' runs sets side by side.
std::string format_rfc3339_ns(int64_t unix_ns);
// An instant, for --start-at: RFC 3339 ("2026-12-01T15:40:00Z",
// "2026-12-01T16:40:00.5+01:00"; 'T' or ' ' between date and time, 'z' or
// 'Z', up to nine fraction digits) or "@SECONDS" since the epoch ("@1796139600",
// "@1796139600.25"). Returns nanoseconds since the epoch; throws UsageError
// naming `flag` for anything else (no time zone, a field out of range).
int64_t parse_instant(std::string_view flag, std::string_view text);

}  // namespace ioacct
