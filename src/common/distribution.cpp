#include "common/distribution.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>

#include "common/errors.hpp"

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

}  // namespace

Distribution parse_distribution(std::string_view flag, std::string_view text) {
  constexpr std::string_view kForms = "uniform, zipf:THETA, pareto:H or normal:SIGMA%";
  if (text == "uniform" || text == "random") return {};
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
    case DistKind::Uniform: break;
  }
  return d;
}

std::string distribution_name(const Distribution& d) {
  switch (d.kind) {
    case DistKind::Uniform: return "uniform";
    case DistKind::Zipf: return fmt::format("zipf:{}", d.param);
    case DistKind::Pareto: return fmt::format("pareto:{}", d.param);
    case DistKind::Normal: return fmt::format("normal:{}%", d.param);
  }
  return "?";
}

Scatter::Scatter(uint64_t n) noexcept : n_(n ? n : 1) {
  if (n_ <= 1) return;
  const unsigned bits = static_cast<unsigned>(std::bit_width(n_ - 1));  // 2^bits >= n
  mask_ = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  shift_ = std::max(1u, (bits + 1) / 2);
}

SkewSampler::SkewSampler(Distribution d, uint64_t n)
    : d_(d), n_(n ? n : 1), nd_(static_cast<double>(n_)), scatter_(n_) {
  switch (d_.kind) {
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
