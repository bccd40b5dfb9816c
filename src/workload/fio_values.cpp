// How a fio option's value reads: integers, sizes and times in fio's units,
// booleans, per-direction lists; each failure is kept as one error naming
// the file, the line and the option (FioValues, fio_options.hpp).
#include <fmt/format.h>

#include <cctype>

#include "common/units.hpp"
#include "workload/fio_file.hpp"
#include "workload/fio_options.hpp"

namespace ioacct {

void FioValues::bad(const FioOption& o, const std::string& msg) {
  errors_.push_back({o.file, o.line, fmt::format("{}:{}: {}: {}", o.file, o.line, o.key, msg)});
}

std::optional<uint64_t> FioValues::integer(const FioOption& o, uint64_t lo, uint64_t hi) {
  return integer(o, o.value, lo, hi);
}

std::optional<uint64_t> FioValues::integer(const FioOption& o, const std::string& text, uint64_t lo, uint64_t hi) {
  const auto v = fio_size(text, kb_base);  // fio's integers take the same suffixes
  if (!v || text.empty()) {
    bad(o, fmt::format("cannot read '{}' as a whole number", text));
    return std::nullopt;
  }
  if (*v < lo || *v > hi) {
    bad(o, fmt::format("{} is out of range ({} to {})", *v, lo, hi));
    return std::nullopt;
  }
  return v;
}

std::optional<uint64_t> FioValues::sized(const FioOption& o, const std::string& text) {
  const auto v = fio_size(text, kb_base);
  if (!v) bad(o, fmt::format("cannot read '{}' as a size (fio's units: 4k, 1m, 2g; kb_base={})", text, kb_base));
  return v;
}

std::optional<uint64_t> FioValues::time_of(const FioOption& o) {
  const auto v = fio_time_ns(o.value);
  if (!v) bad(o, fmt::format("cannot read '{}' as a time (seconds, or with a unit: 500ms, 2m, 1h)", o.value));
  return v;
}

std::optional<bool> FioValues::boolean(const FioOption& o) {
  if (!o.has_value) return true;  // a bare "direct" is direct=1
  std::string v = o.value;
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  bad(o, fmt::format("'{}' is not 0 or 1", o.value));
  return std::nullopt;
}

template <typename F>
std::optional<uint64_t> FioValues::per_direction(const FioOption& o, const char* what, F&& read) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= o.value.size(); ++i)
    if (i == o.value.size() || o.value[i] == ',') {
      parts.push_back(o.value.substr(start, i - start));
      start = i + 1;
    }
  std::optional<uint64_t> first;
  for (const auto& p : parts) {
    if (p.empty()) continue;  // "4k," keeps the first for the rest
    const auto v = read(p);
    if (!v) return std::nullopt;
    if (first && *first != *v) {
      bad(o, fmt::format("'{}': different {} for reads, writes and trims are not supported; give one", o.value, what));
      return std::nullopt;
    }
    first = v;
  }
  if (!first) bad(o, "needs a value");
  return first;
}

template <typename F>
std::optional<std::array<uint64_t, 3>> FioValues::each_direction(const FioOption& o, F&& read) {
  const auto fields = split_directions(o.value);
  if (!fields) {
    bad(o, fmt::format("'{}' has more than three values (reads, writes, trims)", o.value));
    return std::nullopt;
  }
  std::array<uint64_t, 3> r{};
  for (size_t d = 0; d < 3; ++d) {
    if ((*fields)[d].empty()) continue;
    const auto v = read((*fields)[d]);
    if (!v) return std::nullopt;
    r[d] = *v;
  }
  return r;
}

std::optional<std::array<uint64_t, 3>> FioValues::sizes_each(const FioOption& o) {
  return each_direction(o, [&](const std::string& t) { return sized(o, t); });
}

std::optional<std::array<uint64_t, 3>> FioValues::integers_each(const FioOption& o, uint64_t lo, uint64_t hi) {
  return each_direction(o, [&](const std::string& t) { return integer(o, t, lo, hi); });
}

std::optional<uint64_t> FioValues::sizes(const FioOption& o, const char* what) {
  return per_direction(o, what, [&](const std::string& t) { return sized(o, t); });
}

std::optional<uint64_t> FioValues::integers(const FioOption& o, const char* what, uint64_t lo, uint64_t hi) {
  return per_direction(o, what, [&](const std::string& t) { return integer(o, t, lo, hi); });
}

}  // namespace ioacct
