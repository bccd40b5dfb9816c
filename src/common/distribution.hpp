#pragma once
// Skewed random access (--random-distribution), with fio's meaning:
//   uniform      every block equally likely (the default; OffsetGen's own path)
//   zipf:θ       the k-th most popular block drawn with probability ∝ 1/k^θ (θ > 0)
//   pareto:h     fio's power law: a share x of the blocks takes x^(1/p) of the
//                I/O, p = log(h)/log(1-h), so pareto:0.2 sends 80% of it to 20%
//   normal:σ     a normal centred on the middle of the range, σ percent of it
//                wide (0 < σ ≤ 100), cut to the range
//   zoned:A/R:…  contiguous zones from the start of the range: A percent of
//                the I/O to the next R percent of the range, uniform inside
//                a zone; the accesses add up to 100, and an empty last range
//                ("20/") is the rest of the range
//   zoned_abs:A/SIZE:…  the same with each zone's size in bytes (20g)
// Like fio, the popular blocks of zipf, pareto and normal are scattered over
// the range (a fixed bijection of the block numbers) rather than packed at
// its start; zones are where they are said to be.
//
// Header-only sampling: it runs once per I/O. Each draw costs what its
// distribution needs and no more: zipf a rejection-inversion step (two or
// three exp/log, Hörmann & Derflinger 1996), pareto one exp2 and one log2,
// normal half of a polar Marsaglia pair (a log, a sqrt and a division per two
// draws). Scattering is multiplications and shifts. Uniform access never
// comes here (OffsetGen keeps its one multiply-shift).
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/rng.hpp"

namespace ioacct {

enum class DistKind : uint8_t { Uniform, Zipf, Pareto, Normal, Zoned, ZonedAbs };

// One zone: its share of the I/O (percent) and of the range: percent
// (zoned) or bytes (zoned_abs); 0 for an empty last range, the rest.
struct Zone {
  double access_pct = 0;
  double range = 0;
  bool operator==(const Zone&) const = default;
};

struct Distribution {
  DistKind kind = DistKind::Uniform;
  double param = 0;  // θ (zipf), h (pareto), σ in percent (normal)
  std::vector<Zone> zones = {};  // zoned, zoned_abs
  std::string text = {};         // zoned, zoned_abs: as given, for distribution_name()
  bool operator==(const Distribution&) const = default;
};

// "uniform", "zipf:1.2", "pareto:0.2", "normal:5" (also "normal:5%"),
// "zoned:60/10:30/20:10/", "zoned_abs:60/1g:40/3g".
// Throws UsageError("<flag>: ...").
Distribution parse_distribution(std::string_view flag, std::string_view text);
// The same words back: "zipf:1.2".
std::string distribution_name(const Distribution& d);

// A fixed bijection of [0, n): two odd multiplications and xor-shifts on the
// smallest power of two holding n, walked along its cycle until it lands
// below n (fewer than two steps on average). Spreads neighbouring values far
// apart, so hot ranks are not neighbouring blocks.
class Scatter {
 public:
  Scatter() = default;
  explicit Scatter(uint64_t n) noexcept;
  uint64_t operator()(uint64_t x) const noexcept {
    if (mask_ == 0) return 0;
    do {
      x = (x * 0x9e3779b97f4a7c15ull) & mask_;
      x ^= x >> shift_;
      x = (x * 0xbf58476d1ce4e5b9ull) & mask_;
      x ^= x >> shift_;
    } while (x >= n_);
    return x;
  }

 private:
  uint64_t n_ = 1, mask_ = 0;
  unsigned shift_ = 1;
};

// Draws values in [0, n) from a skewed distribution: a rank (0 the most
// popular) for zipf and pareto, a position for normal. unscattered() is what
// the unit tests hold against each distribution's CDF; next() scatters it.
class SkewSampler {
 public:
  SkewSampler() = default;
  // `block_bytes`: the bytes one of the n values stands for (zoned_abs's
  // sizes are turned into values with it).
  SkewSampler(Distribution d, uint64_t n, uint64_t block_bytes = 1);

  DistKind kind() const noexcept { return d_.kind; }
  uint64_t next(Rng& rng) noexcept {
    if (!zones_.empty()) return zoned(rng);
    return scatter_(unscattered(rng));
  }

  uint64_t unscattered(Rng& rng) noexcept {
    switch (d_.kind) {
      case DistKind::Zoned:
      case DistKind::ZonedAbs: return zoned(rng);
      case DistKind::Zipf: return zipf(rng);
      case DistKind::Pareto: {
        // fio: rank = n·u^p. u^p as exp2(p·log2 u): one pow's worth of work.
        const uint64_t k = static_cast<uint64_t>(nd_ * std::exp2(pow_ * std::log2(unit_open(rng))));
        return k < n_ ? k : n_ - 1;
      }
      case DistKind::Normal: return normal(rng);
      case DistKind::Uniform: break;
    }
    return rng.below(n_);
  }

 private:
  // (0, 1]: never 0, so that log2 and the zipf inverse stay finite.
  static double unit_open(Rng& rng) noexcept {
    return static_cast<double>((rng.next() >> 11) + 1) * 0x1.0p-53;
  }
  uint64_t zipf(Rng& rng) noexcept;
  uint64_t normal(Rng& rng) noexcept;
  // A zone by its share of the I/O, then a value uniform inside it.
  uint64_t zoned(Rng& rng) noexcept {
    const double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;  // [0, 1)
    for (const ZoneSpan& z : zones_)
      if (u < z.upto) return z.first + rng.below(z.count);
    const ZoneSpan& last = zones_.back();  // u at 1 - 2^-53 past a rounded sum
    return last.first + rng.below(last.count);
  }
  struct ZoneSpan {
    double upto;     // the I/O's cumulative share up to and with this zone, in [0, 1]
    uint64_t first;  // its first value
    uint64_t count;  // its values, at least 1
  };
  // Zipf: H(x), the integral of x^-θ, and its inverse (rejection-inversion).
  double h(double x) const noexcept { return std::exp(-d_.param * std::log(x)); }
  double h_integral(double x) const noexcept;
  double h_integral_inverse(double x) const noexcept;

  Distribution d_;
  uint64_t n_ = 1;
  double nd_ = 1;  // n as a double
  Scatter scatter_;
  // zipf
  double h_x1_ = 0, h_n_ = 0, s_ = 0;
  // pareto
  double pow_ = 1;
  // normal
  double mean_ = 0, sd_ = 1, spare_ = 0;
  bool have_spare_ = false;
  // zoned, zoned_abs
  std::vector<ZoneSpan> zones_;
};

// Zipf by rejection-inversion over the ranks 1..n (Hörmann & Derflinger,
// "Rejection-inversion to generate variates from monotone discrete
// distributions", 1996): exact, and at most a few exp/log per draw whatever n.
inline uint64_t SkewSampler::zipf(Rng& rng) noexcept {
  for (;;) {
    const double u = h_n_ + unit_open(rng) * (h_x1_ - h_n_);
    const double x = h_integral_inverse(u);
    double k = std::floor(x + 0.5);
    if (k < 1) k = 1;
    else if (k > nd_) k = nd_;
    if (k - x <= s_ || u >= h_integral(k + 0.5) - h(k)) return static_cast<uint64_t>(k) - 1;
  }
}

// Marsaglia's polar method: two normal draws per log and sqrt; draws outside
// the range are drawn again (a normal cut to the range).
inline uint64_t SkewSampler::normal(Rng& rng) noexcept {
  for (;;) {
    double z;
    if (have_spare_) {
      have_spare_ = false;
      z = spare_;
    } else {
      double a, b, s;
      do {
        a = static_cast<double>(rng.next() >> 11) * 0x1.0p-52 - 1.0;
        b = static_cast<double>(rng.next() >> 11) * 0x1.0p-52 - 1.0;
        s = a * a + b * b;
      } while (s >= 1.0 || s == 0.0);
      const double f = std::sqrt(-2.0 * std::log(s) / s);
      spare_ = b * f;
      have_spare_ = true;
      z = a * f;
    }
    const double v = mean_ + sd_ * z;
    if (v >= 0 && v < nd_) return static_cast<uint64_t>(v);
  }
}

inline double SkewSampler::h_integral(double x) const noexcept {
  // ((x^(1-θ)) - 1) / (1-θ), written to stay exact near θ = 1.
  const double lx = std::log(x);
  const double t = (1.0 - d_.param) * lx;
  const double helper = std::abs(t) > 1e-8 ? std::expm1(t) / t : 1.0 + t * 0.5 * (1.0 + t / 3.0 * (1.0 + 0.25 * t));
  return helper * lx;
}

inline double SkewSampler::h_integral_inverse(double x) const noexcept {
  double t = x * (1.0 - d_.param);
  if (t < -1.0) t = -1.0;  // rounding only: the true value is never below -1
  const double helper = std::abs(t) > 1e-8 ? std::log1p(t) / t : 1.0 - t * (0.5 - t * (1.0 / 3.0 - 0.25 * t));
  return std::exp(helper * x);
}

}  // namespace ioacct
