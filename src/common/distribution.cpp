#include "common/distribution.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <utility>

#include "common/errors.hpp"
#include "common/units.hpp"

namespace ioacct {
namespace {

// A plain decimal ("1.2", "0.25", "5"): no sign, no exponent, no trailing text.
bool read_decimal(std::string_view s, double& out) {
  if (s.empty() || !(s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '.')) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && p == s.data() + s.size() && std::isfinite(out);
}

// "zoned:60/10:30/20:10/" or "zoned_abs:60/1g:40/3g", after the name.
Distribution parse_zones(std::string_view flag, std::string_view text, bool absolute) {
  Distribution d;
  d.kind = absolute ? DistKind::ZonedAbs : DistKind::Zoned;
  d.text = std::string(text);
  const std::string_view name = absolute ? "zoned_abs" : "zoned";
  std::string_view rest = text.substr(name.size() + 1);
  if (rest.find(',') != std::string_view::npos)
    throw UsageError(fmt::format("{}: '{}': zones for each direction apart (a ',') are not supported; give one set "
                                 "for reads and writes alike", flag, text));
  double access = 0, range = 0;
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string_view zone = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    const size_t slash = zone.find('/');
    if (slash == std::string_view::npos)
      throw UsageError(fmt::format("{}: '{}': zone '{}' is not ACCESS%/{}", flag, text, zone, absolute ? "SIZE" : "RANGE%"));
    Zone z;
    const std::string_view a = zone.substr(0, slash), r = zone.substr(slash + 1);
    if (!read_decimal(a, z.access_pct) || z.access_pct <= 0 || z.access_pct > 100)
      throw UsageError(fmt::format("{}: '{}': zone '{}': its share of the I/O, '{}', is not a percentage above 0",
                                   flag, text, zone, a));
    if (r.empty()) {
      if (!rest.empty())
        throw UsageError(fmt::format("{}: '{}': only the last zone may leave its range empty (the rest)", flag, text));
    } else if (absolute) {
      z.range = static_cast<double>(parse_size(flag, r));
      if (z.range <= 0) throw UsageError(fmt::format("{}: '{}': zone '{}' has no size", flag, text, zone));
    } else if (!read_decimal(r, z.range) || z.range <= 0 || z.range > 100) {
      throw UsageError(fmt::format("{}: '{}': zone '{}': its share of the range, '{}', is not a percentage above 0",
                                   flag, text, zone, r));
    }
    access += z.access_pct;
    range += z.range;
    d.zones.push_back(z);
  }
  if (d.zones.empty()) throw UsageError(fmt::format("{}: '{}' names no zone, e.g. zoned:60/10:40/90", flag, text));
  if (std::abs(access - 100) > 1e-6)
    throw UsageError(fmt::format("{}: '{}': the zones' shares of the I/O add up to {}%, not 100%", flag, text, access));
  if (!absolute && d.zones.back().range > 0 && std::abs(range - 100) > 1e-6)
    throw UsageError(fmt::format("{}: '{}': the zones' ranges add up to {}%, not 100% (leave the last one empty, "
                                 "'A/', for the rest of the range)", flag, text, range));
  if (!absolute && range > 100 + 1e-6)
    throw UsageError(fmt::format("{}: '{}': the zones' ranges add up to {}%, more than the range", flag, text, range));
  return d;
}

}  // namespace

Distribution parse_distribution(std::string_view flag, std::string_view text) {
  constexpr std::string_view kForms = "uniform, zipf:THETA, pareto:H, normal:SIGMA%, zoned:A/R:... or zoned_abs:A/SIZE:...";
  if (text == "uniform" || text == "random") return {};
  if (text.starts_with("zoned:")) return parse_zones(flag, text, false);
  if (text.starts_with("zoned_abs:")) return parse_zones(flag, text, true);
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  Distribution d;
  if (name == "zipf") d.kind = DistKind::Zipf;
  else if (name == "pareto") d.kind = DistKind::Pareto;
  else if (name == "normal" || name == "gauss") d.kind = DistKind::Normal;
  else throw UsageError(fmt::format("{}: '{}' is not one of {}", flag, text, kForms));
  if (colon == std::string_view::npos)
    throw UsageError(fmt::format("{}: '{}' needs its parameter, e.g. zipf:1.2, pareto:0.2, normal:5", flag, text));
  std::string_view value = text.substr(colon + 1);
  if (d.kind == DistKind::Normal && !value.empty() && value.back() == '%') value.remove_suffix(1);
  if (value.find(':') != std::string_view::npos)
    throw UsageError(fmt::format("{}: '{}': a centre (a second ':VALUE', as fio 3.21+ takes) is not supported; "
                                 "the distribution is centred on the range", flag, text));
  if (!read_decimal(value, d.param))
    throw UsageError(fmt::format("{}: cannot read '{}' in '{}' as a number", flag, value, text));
  switch (d.kind) {
    case DistKind::Zipf:
      if (d.param <= 0 || d.param > 100)
        throw UsageError(fmt::format("{}: zipf's θ must be above 0 (and at most 100); '{}' is not", flag, text));
      break;
    case DistKind::Pareto:
      if (d.param <= 0 || d.param >= 1)
        throw UsageError(fmt::format("{}: pareto's h must lie strictly between 0 and 1 (0.2 sends 80% of the "
                                     "I/O to 20% of the blocks); '{}' does not", flag, text));
      break;
    case DistKind::Normal:
      if (d.param <= 0 || d.param > 100)
        throw UsageError(fmt::format("{}: normal's σ is a percentage of the range, above 0 and at most 100; "
                                     "'{}' is not", flag, text));
      break;
    case DistKind::Uniform:
    case DistKind::Zoned:
    case DistKind::ZonedAbs: break;
  }
  return d;
}

std::string distribution_name(const Distribution& d) {
  switch (d.kind) {
    case DistKind::Uniform: return "uniform";
    case DistKind::Zipf: return fmt::format("zipf:{}", d.param);
    case DistKind::Pareto: return fmt::format("pareto:{}", d.param);
    case DistKind::Normal: return fmt::format("normal:{}%", d.param);
    case DistKind::Zoned:
    case DistKind::ZonedAbs: return d.text;
  }
  return "?";
}

Scatter::Scatter(uint64_t n) noexcept : n_(n ? n : 1) {
  if (n_ <= 1) return;
  const unsigned bits = static_cast<unsigned>(std::bit_width(n_ - 1));  // 2^bits >= n
  mask_ = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  shift_ = std::max(1u, (bits + 1) / 2);
}

SkewSampler::SkewSampler(Distribution d, uint64_t n, uint64_t block_bytes)
    : d_(std::move(d)), n_(n ? n : 1), nd_(static_cast<double>(n_)), scatter_(n_) {
  switch (d_.kind) {
    case DistKind::Zoned:
    case DistKind::ZonedAbs: {
      // Each zone's values from where the ones before it end; a zone past
      // the range's end is cut to its last value (zoned_abs larger than the
      // file), and every zone keeps at least one value.
      const bool abs = d_.kind == DistKind::ZonedAbs;
      const double per = abs ? 1.0 / static_cast<double>(std::max<uint64_t>(1, block_bytes)) : nd_ / 100.0;
      double at = 0, share = 0;
      for (size_t i = 0; i < d_.zones.size(); ++i) {
        const Zone& z = d_.zones[i];
        const bool rest = z.range <= 0;  // an empty last range: to the end
        const auto first = std::min<uint64_t>(static_cast<uint64_t>(at * per), n_ - 1);
        at += z.range;
        const uint64_t end = rest ? n_ : std::clamp<uint64_t>(static_cast<uint64_t>(at * per), first + 1, n_);
        share += z.access_pct / 100.0;
        zones_.push_back({.upto = share, .first = first, .count = std::max<uint64_t>(1, end - first)});
      }
      zones_.back().upto = 1.0;
      break;
    }
    case DistKind::Zipf:
      h_x1_ = h_integral(1.5) - 1.0;
      h_n_ = h_integral(nd_ + 0.5);
      s_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
      break;
    case DistKind::Pareto:
      pow_ = std::log(d_.param) / std::log(1.0 - d_.param);
      break;
    case DistKind::Normal:
      mean_ = nd_ / 2.0;
      sd_ = d_.param / 100.0 * nd_;
      break;
    case DistKind::Uniform: break;
  }
}

}  // namespace ioacct
