#include "acct/procfs.hpp"

#include <charconv>

namespace ioacct {
namespace {

// Splits on runs of spaces and tabs.
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

template <typename T>
bool to_num(std::string_view s, T& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc{} && p == s.data() + s.size();
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(std::string_view s) {
  std::string out;
  const auto octal = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '7'; };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      out += static_cast<char>(((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) | (s[i + 3] - '0'));
      i += 3;
      continue;
    }
    out += s[i];
  }
  return out;
}

template <typename F>
void for_each_line(std::string_view text, F&& f) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    f(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
}

}  // namespace

std::optional<MountInfo> parse_mountinfo_line(std::string_view line) {
  const auto f = fields(line);
  // id parent maj:min root mount-point options [optional...] - fstype source superopts
  if (f.size() < 10) return std::nullopt;
  MountInfo m;
  const auto colon = f[2].find(':');
  if (colon == std::string_view::npos || !to_num(f[2].substr(0, colon), m.major) ||
      !to_num(f[2].substr(colon + 1), m.minor))
    return std::nullopt;
  m.mount_point = unescape(f[4]);
  size_t sep = 6;
  while (sep < f.size() && f[sep] != "-") ++sep;
  if (sep + 2 >= f.size()) return std::nullopt;
  m.fs_type = std::string(f[sep + 1]);
  m.source = unescape(f[sep + 2]);
  return m;
}

std::vector<MountInfo> parse_mountinfo(std::string_view text) {
  std::vector<MountInfo> out;
  for_each_line(text, [&](std::string_view l) {
    if (auto m = parse_mountinfo_line(l)) out.push_back(std::move(*m));
  });
  return out;
}

std::vector<std::string> parse_swaps(std::string_view text) {
  std::vector<std::string> out;
  bool header = true;
  for_each_line(text, [&](std::string_view l) {
    if (header) {  // "Filename Type Size Used Priority"
      header = false;
      return;
    }
    const auto f = fields(l);
    if (!f.empty()) out.push_back(unescape(f[0]));
  });
  return out;
}

std::optional<uint64_t> parse_uptime_cs(std::string_view text) {
  const auto f = fields(text.substr(0, text.find('\n')));
  if (f.empty()) return std::nullopt;
  const auto dot = f[0].find('.');
  uint64_t sec = 0, cs = 0;
  if (dot == std::string_view::npos || !to_num(f[0].substr(0, dot), sec)) return std::nullopt;
  const std::string_view frac = f[0].substr(dot + 1);
  if (frac.size() != 2 || !to_num(frac, cs)) return std::nullopt;
  return sec * 100 + cs;
}

std::optional<DiskStats> parse_diskstats_line(std::string_view line) {
  const auto f = fields(line);
  const size_t counters = f.size() >= 3 ? f.size() - 3 : 0;
  if (counters < 11) return std::nullopt;
  DiskStats d;
  if (!to_num(f[0], d.major) || !to_num(f[1], d.minor)) return std::nullopt;
  d.name = std::string(f[2]);
  uint64_t* const slots[] = {&d.reads,    &d.reads_merged,    &d.sectors_read,      &d.read_ms,
                             &d.writes,   &d.writes_merged,   &d.sectors_written,   &d.write_ms,
                             &d.in_flight, &d.io_ms,          &d.weighted_ms,       &d.discards,
                             &d.discards_merged, &d.sectors_discarded, &d.discard_ms, &d.flushes,
                             &d.flush_ms};
  const size_t n = std::min(counters, std::size(slots));
  for (size_t i = 0; i < n; ++i)
    if (!to_num(f[3 + i], *slots[i])) return std::nullopt;
  d.fields = static_cast<int>(n >= 17 ? 17 : n >= 15 ? 15 : 11);
  return d;
}

FdInfo parse_fdinfo(std::string_view text) {
  FdInfo out;
  for_each_line(text, [&](std::string_view l) {
    const auto colon = l.find(':');
    if (colon == std::string_view::npos || colon == 0) return;
    // Entry dumps are indented ("\t0: opcode:READ ...") or start with a digit.
    if (l[0] == ' ' || l[0] == '\t' || (l[0] >= '0' && l[0] <= '9')) return;
    std::string_view key = l.substr(0, colon), value = l.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r')) value.remove_suffix(1);
    out.emplace(std::string(key), std::string(value));
  });
  return out;
}

std::optional<uint64_t> fdinfo_number(const FdInfo& info, std::string_view key) {
  auto it = info.find(key);
  if (it == info.end()) return std::nullopt;
  uint64_t v = 0;
  if (!to_num(std::string_view(it->second), v)) return std::nullopt;
  return v;
}

std::optional<uint64_t> fdinfo_hex(const FdInfo& info, std::string_view key) {
  auto it = info.find(key);
  if (it == info.end()) return std::nullopt;
  const std::string_view s = it->second;
  if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), v, 16);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

size_t fdinfo_entries(std::string_view text, std::string_view header) {
  size_t n = 0;
  bool inside = false;
  for_each_line(text, [&](std::string_view l) {
    const bool indented = !l.empty() && (l[0] == ' ' || l[0] == '\t');
    if (!indented) {
      const auto colon = l.find(':');
      inside = colon != std::string_view::npos && l.substr(0, colon) == header;
      return;
    }
    if (inside) ++n;
  });
  return n;
}

}  // namespace ioacct
