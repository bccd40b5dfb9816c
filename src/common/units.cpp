#include "common/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <ctime>
#include <cmath>
#include <limits>

#include "common/errors.hpp"

namespace ioacct {
namespace {

[[noreturn]] void fail(std::string_view flag, std::string_view text, std::string_view what,
                       std::string_view hint) {
  throw UsageError(fmt::format("{}: cannot read '{}' as {} ({})", flag, text, what, hint));
}

// Splits "12.5KiB" into the number 12.5 (kept as integer and fraction so that
// whole values never pass through floating point) and the suffix "KiB".
struct Number {
  uint64_t whole = 0;
  uint64_t frac = 0;       // fractional digits as an integer
  uint64_t frac_scale = 1; // 10^digits
  std::string_view suffix;
};

bool split_number(std::string_view text, Number& n) {
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == 0) return false;  // also rejects "-1", "+1", " 1", ".5"
  auto [p, ec] = std::from_chars(text.data(), text.data() + i, n.whole);
  if (ec != std::errc{} || p != text.data() + i) return false;
  if (i < text.size() && text[i] == '.') {
    size_t j = ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    if (i == j || i - j > 9) return false;
    std::from_chars(text.data() + j, text.data() + i, n.frac);
    for (size_t k = j; k < i; ++k) n.frac_scale *= 10;
  }
  n.suffix = text.substr(i);
  return true;
}

// n * mult, exactly; false when it overflows or is not a whole number.
bool scale(const Number& n, uint64_t mult, uint64_t& out) {
  if (n.whole > std::numeric_limits<uint64_t>::max() / mult) return false;
  uint64_t whole = n.whole * mult;
  if (n.frac != 0) {
    // frac/frac_scale * mult must be whole: check with 128-bit arithmetic.
    unsigned __int128 f = static_cast<unsigned __int128>(n.frac) * mult;
    if (f % n.frac_scale != 0) return false;
    unsigned __int128 total = static_cast<unsigned __int128>(whole) + f / n.frac_scale;
    if (total > std::numeric_limits<uint64_t>::max()) return false;
    whole = static_cast<uint64_t>(total);
  }
  out = whole;
  return true;
}

bool iec_multiplier(std::string_view s, uint64_t& mult) {
  static constexpr struct { std::string_view a, b, c; int shift; } kTable[] = {
      {"", "b", "B", 0},       {"k", "K", "KiB", 10}, {"m", "M", "MiB", 20},
      {"g", "G", "GiB", 30},   {"t", "T", "TiB", 40}, {"p", "P", "PiB", 50},
  };
  for (const auto& e : kTable) {
    if (s == e.a || s == e.b || s == e.c) {
      mult = uint64_t{1} << e.shift;
      return true;
    }
  }
  return false;
}

}  // namespace

uint64_t parse_size(std::string_view flag, std::string_view text) {
  constexpr std::string_view kWhat = "a size", kHint = "sizes are IEC: 4k = 4096 bytes, 64KiB, 1m, 2g";
  Number n;
  if (!split_number(text, n)) fail(flag, text, kWhat, kHint);
  uint64_t mult = 0;
  if (!iec_multiplier(n.suffix, mult)) {
    if (n.suffix.size() == 2 && (n.suffix[1] == 'B' || n.suffix[1] == 'b'))
      fail(flag, text, kWhat, "'kB'/'MB' are ambiguous; write 4k or 4KiB for 4096 bytes");
    fail(flag, text, kWhat, kHint);
  }
  uint64_t out = 0;
  if (!scale(n, mult, out)) fail(flag, text, kWhat, "not a whole number of bytes, or too large");
  return out;
}

uint64_t parse_count(std::string_view flag, std::string_view text) {
  constexpr std::string_view kWhat = "a count", kHint = "counts are SI: 1000, 10k = 10000, 2M";
  Number n;
  if (!split_number(text, n)) fail(flag, text, kWhat, kHint);
  uint64_t mult = 0;
  const std::string_view s = n.suffix;
  if (s.empty()) mult = 1;
  else if (s == "k" || s == "K") mult = 1000;
  else if (s == "M") mult = 1000 * 1000;
  else if (s == "G") mult = 1000ull * 1000 * 1000;
  else if (s == "T") mult = 1000ull * 1000 * 1000 * 1000;
  else fail(flag, text, kWhat, kHint);
  uint64_t out = 0;
  if (!scale(n, mult, out)) fail(flag, text, kWhat, "not a whole number, or too large");
  return out;
}

uint64_t parse_id(std::string_view flag, std::string_view text, std::string_view what) {
  // An identifier is a name that happens to be a number: "1k" is no pid.
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || text[0] < '0' || text[0] > '9' || ec != std::errc{} || p != text.data() + text.size())
    fail(flag, text, what, "plain decimal digits, no suffix");
  return v;
}

double parse_percent(std::string_view flag, std::string_view text) {
  constexpr std::string_view kWhat = "a percentage", kHint = "a share above 0 and below 100: 5%, 2.5%";
  Number n;
  if (!split_number(text, n) || !(n.suffix.empty() || n.suffix == "%")) fail(flag, text, kWhat, kHint);
  const double pct = static_cast<double>(n.whole) + static_cast<double>(n.frac) / static_cast<double>(n.frac_scale);
  if (!(pct > 0 && pct < 100)) fail(flag, text, kWhat, kHint);
  return pct / 100;
}

std::optional<std::array<std::string, 3>> split_directions(std::string_view text) {
  std::array<std::string, 3> f;
  size_t from = 0;
  for (size_t d = 0; d < 3; ++d) {
    const size_t comma = std::min(text.find(',', from), text.size());
    f[d] = std::string(text.substr(from, comma - from));
    if (comma == text.size()) {  // no comma after it: it goes on to the rest
      for (size_t rest = d + 1; rest < 3; ++rest) f[rest] = f[d];
      return f;
    }
    from = comma + 1;
    if (from == text.size() && d < 2) return f;  // "a,": the rest unset
  }
  return std::nullopt;
}

std::optional<double> percentile_of(const std::string& text) {
  char* end = nullptr;
  const double p = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end || !(p > 0 && p <= 100)) return std::nullopt;
  return p;
}

std::chrono::nanoseconds parse_duration(std::string_view flag, std::string_view text) {
  constexpr std::string_view kWhat = "a duration", kHint = "give a unit: 10s, 500ms, 2m, 250us";
  Number n;
  if (!split_number(text, n)) fail(flag, text, kWhat, kHint);
  uint64_t mult = 0;
  const std::string_view s = n.suffix;
  if (s == "ns") mult = 1;
  else if (s == "us" || s == "µs") mult = 1000;
  else if (s == "ms") mult = 1000 * 1000;
  else if (s == "s") mult = 1000ull * 1000 * 1000;
  else if (s == "m" || s == "min") mult = 60ull * 1000 * 1000 * 1000;
  else if (s == "h") mult = 3600ull * 1000 * 1000 * 1000;
  else fail(flag, text, kWhat, kHint);
  uint64_t out = 0;
  if (!scale(n, mult, out) || out > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    fail(flag, text, kWhat, "not a whole number of nanoseconds, or too long");
  return std::chrono::nanoseconds(static_cast<int64_t>(out));
}

uint64_t parse_bandwidth(std::string_view flag, std::string_view text) {
  std::string_view size = text;
  if (size.ends_with("/s")) size.remove_suffix(2);
  Number n;
  uint64_t mult = 0, out = 0;
  if (!split_number(size, n) || !iec_multiplier(n.suffix, mult) || !scale(n, mult, out))
    fail(flag, text, "a bandwidth", "a size per second, IEC: 50m or 50MiB/s = 50 x 2^20 bytes/s");
  return out;
}

std::vector<int> parse_cpu_list(std::string_view flag, std::string_view text) {
  std::vector<int> cpus;
  std::vector<bool> seen(65536);
  auto bad = [&] { fail(flag, text, "a CPU list", "e.g. 0,2-3"); };
  if (text.empty()) bad();
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    auto read_int = [&](std::string_view s) {
      int v = -1;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (s.empty() || ec != std::errc{} || p != s.data() + s.size() || v < 0 || v > 65535) bad();
      return v;
    };
    size_t dash = item.find('-');
    int lo = read_int(item.substr(0, dash));
    int hi = dash == std::string_view::npos ? lo : read_int(item.substr(dash + 1));
    if (hi < lo) bad();
    for (int c = lo; c <= hi; ++c) {
      if (seen[static_cast<size_t>(c)])
        throw UsageError(fmt::format("{}: CPU {} is listed twice in '{}'", flag, c, text));
      seen[static_cast<size_t>(c)] = true;
      cpus.push_back(c);
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return cpus;
}

std::string format_size(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  uint64_t b = bytes;
  while (u < 5 && b >= 1024 && b % 1024 == 0) { b /= 1024; ++u; }
  if (b < 1024 || u == 5) return fmt::format("{} {}", b, kUnits[u]);
  double v = static_cast<double>(bytes);
  u = 0;
  while (u < 5 && v >= 1024) { v /= 1024; ++u; }
  return fmt::format("{:.2f} {}", v, kUnits[u]);
}

std::string format_bandwidth(double bps) {
  static constexpr const char* kUnits[] = {"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"};
  int u = 0;
  while (u < 4 && bps >= 1024) { bps /= 1024; ++u; }
  const int prec = bps >= 100 ? 0 : bps >= 10 ? 1 : 2;
  return fmt::format("{:.{}f} {}", bps, prec, kUnits[u]);
}

std::string format_count(double n) {
  static constexpr const char* kUnits[] = {"", "k", "M", "G", "T"};
  int u = 0;
  while (u < 4 && n >= 1000) { n /= 1000; ++u; }
  if (u == 0) return fmt::format("{:.0f}", n);
  return fmt::format("{:.{}f}{}", n, n >= 100 ? 1 : 2, kUnits[u]);
}

std::string format_duration_ns(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.{}f} µs", ns / 1e3, ns < 1e4 ? 2 : 1);
  if (ns < 1e9) return fmt::format("{:.{}f} ms", ns / 1e6, ns < 1e7 ? 2 : 1);
  if (ns < 1e12) return fmt::format("{:.2f} s", ns / 1e9);
  // From 1000 s on, hours, minutes and whole seconds: "100000 h", never
  // "360000000.00 s".
  const auto total = static_cast<uint64_t>(std::llround(ns / 1e9));
  std::string out;
  auto part = [&](uint64_t v, const char* unit) {
    if (v) out += fmt::format("{}{} {}", out.empty() ? "" : " ", v, unit);
  };
  part(total / 3600, "h");
  part(total % 3600 / 60, "min");
  part(total % 60, "s");
  return out;
}

std::string plural(uint64_t n, std::string_view one, std::string_view many) {
  if (n == 1) return fmt::format("1 {}", one);
  return many.empty() ? fmt::format("{} {}s", n, one) : fmt::format("{} {}", n, many);
}

namespace {

// An instant as RFC 3339 in UTC with `digits` of the second's fraction (3
// or 9). Floor division, so that instants before 1970 print as they should.
std::string rfc3339(int64_t unix_ns, int digits) {
  int64_t secs = unix_ns / 1'000'000'000, ns = unix_ns % 1'000'000'000;
  if (ns < 0) {
    ns += 1'000'000'000;
    --secs;
  }
  const auto t = static_cast<time_t>(secs);
  tm utc{};
  gmtime_r(&t, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:0{}}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                     utc.tm_hour, utc.tm_min, utc.tm_sec, digits == 3 ? ns / 1'000'000 : ns, digits);
}

}  // namespace

std::string format_rfc3339(int64_t unix_ns) { return rfc3339(unix_ns, 3); }

}  // namespace ioacct

namespace ioacct {

std::string format_rfc3339_ns(int64_t unix_ns) { return rfc3339(unix_ns, 9); }

namespace {

// Digits at text[pos, pos+n) as a number, or -1 when they are not all digits.
int digits_at(std::string_view text, size_t pos, size_t n) {
  if (pos + n > text.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

// "@SECONDS[.FRACTION]": whole seconds and up to nine fraction digits, read
// as integers so that "@1796139600.25" is exact.
int64_t parse_epoch(std::string_view flag, std::string_view text) {
  const std::string_view body = text.substr(1);
  const size_t dot = body.find('.');
  const std::string_view whole = body.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? std::string_view{} : body.substr(dot + 1);
  int64_t secs = 0;
  const auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), secs);
  const bool bad_frac = dot != std::string_view::npos &&
                        (frac.empty() || frac.size() > 9 || digits_at(frac, 0, frac.size()) < 0);
  if (whole.empty() || ec != std::errc{} || end != whole.data() + whole.size() || secs < 0 || bad_frac ||
      secs > std::numeric_limits<int64_t>::max() / 1'000'000'000 - 1)
    throw UsageError(fmt::format("{}: '{}' is not @SECONDS since the epoch (e.g. @1796139600)", flag, text));
  int64_t ns = 0;
  for (size_t i = 0; i < 9; ++i) ns = ns * 10 + (i < frac.size() ? frac[i] - '0' : 0);
  return secs * 1'000'000'000 + ns;
}

}  // namespace

int64_t parse_instant(std::string_view flag, std::string_view text) {
  if (!text.empty() && text[0] == '@') return parse_epoch(flag, text);
  const auto bad = [&](std::string_view why) {
    return UsageError(fmt::format("{}: '{}' is not an RFC 3339 time such as 2026-12-01T15:40:00Z or @SECONDS "
                                  "since the epoch ({})", flag, text, why));
  };
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  const int year = digits_at(text, 0, 4), mon = digits_at(text, 5, 2), day = digits_at(text, 8, 2);
  const int hour = digits_at(text, 11, 2), min = digits_at(text, 14, 2), sec = digits_at(text, 17, 2);
  if (text.size() < 20 || year < 0 || mon < 0 || day < 0 || hour < 0 || min < 0 || sec < 0 || text[4] != '-' ||
      text[7] != '-' || (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || text[13] != ':' || text[16] != ':')
    throw bad("the layout");
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) throw bad("a field out of range");
  size_t pos = 19;
  int64_t ns = 0;
  if (text[pos] == '.') {
    size_t n = 0;
    while (pos + 1 + n < text.size() && text[pos + 1 + n] >= '0' && text[pos + 1 + n] <= '9') ++n;
    if (n == 0 || n > 9) throw bad("the fraction takes 1 to 9 digits");
    for (size_t i = 0; i < 9; ++i) ns = ns * 10 + (i < n ? text[pos + 1 + i] - '0' : 0);
    pos += 1 + n;
  }
  int64_t offset_s = 0;
  const std::string_view zone = text.substr(pos);
  if (zone == "Z" || zone == "z") {
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':' && digits_at(zone, 1, 2) >= 0 &&
             digits_at(zone, 4, 2) >= 0 && digits_at(zone, 1, 2) <= 23 && digits_at(zone, 4, 2) <= 59) {
    offset_s = (digits_at(zone, 1, 2) * 3600 + digits_at(zone, 4, 2) * 60) * (zone[0] == '-' ? -1 : 1);
  } else {
    throw bad("the time zone: Z or +HH:MM");
  }
  tm t{};
  t.tm_year = year - 1900;
  t.tm_mon = mon - 1;
  t.tm_mday = day;
  t.tm_hour = hour;
  t.tm_min = min;
  t.tm_sec = std::min(sec, 59);  // a leap second is the next second's start
  const time_t secs = timegm(&t);
  tm back{};
  gmtime_r(&secs, &back);
  if (back.tm_mday != day) throw bad("no such day in that month");
  // Nanoseconds since the epoch in 64 bits: 1970 to 2262.
  const int64_t total = static_cast<int64_t>(secs) + (sec == 60 ? 1 : 0) - offset_s;
  if (total < 0 || total > std::numeric_limits<int64_t>::max() / 1'000'000'000 - 1)
    throw bad("outside 1970 to 2262, the instants ns since the epoch hold");
  return total * 1'000'000'000 + ns;
}

}  // namespace ioacct
