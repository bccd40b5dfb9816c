// --bssplit's list: read, written back, and its mean size. A unit of its
// own: the fio map (and its fuzzer, which links only the parsers) uses it.
#include <fmt/format.h>

#include <algorithm>

#include "common/errors.hpp"
#include "common/units.hpp"
#include "workload/job.hpp"

namespace ioacct {

double mean_bs(uint64_t bs, const std::vector<BsShare>& split) {
  double sum = 0, weights = 0;
  for (const BsShare& s : split) {
    sum += static_cast<double>(s.size) * s.weight;
    weights += s.weight;
  }
  return weights > 0 ? sum / weights : static_cast<double>(bs);
}

std::vector<BsShare> parse_bssplit(std::string_view flag, std::string_view text) {
  std::vector<BsShare> out;
  std::vector<size_t> blank;  // entries with no weight
  uint64_t given = 0;
  for (size_t at = 0; at <= text.size();) {
    const size_t end = std::min(text.find(':', at), text.size());
    const std::string_view item = text.substr(at, end - at);
    const size_t slash = item.find('/');
    const uint64_t size = parse_size(flag, item.substr(0, slash));
    if (size == 0 || size > (1ull << 30))
      throw UsageError(fmt::format("{}: '{}': a size must be 1 byte to 1 GiB", flag, item));
    BsShare s{static_cast<uint32_t>(size), 0};
    if (slash == std::string_view::npos || slash + 1 == item.size()) {
      blank.push_back(out.size());
    } else {
      const uint64_t w = parse_count(flag, item.substr(slash + 1));
      if (w == 0 || w > 1'000'000)
        throw UsageError(fmt::format("{}: '{}': a weight must be 1 to 1000000 (leave the size out instead)", flag, item));
      s.weight = static_cast<uint32_t>(w);
      given += w;
    }
    out.push_back(s);
    if (out.size() > 4096) throw UsageError(fmt::format("{}: more than 4096 sizes", flag));
    at = end + 1;
  }
  if (!blank.empty()) {
    if (given >= 100)
      throw UsageError(fmt::format("{}: '{}': the weights given add up to {}, leaving nothing of 100 for the "
                                   "sizes without one", flag, text, given));
    const uint64_t each = (100 - given) / blank.size();
    if (each == 0)
      throw UsageError(fmt::format("{}: '{}': {} sizes without a weight share {} percent", flag, text, blank.size(),
                                   100 - given));
    for (size_t i : blank) out[i].weight = static_cast<uint32_t>(each);
    out[blank.front()].weight += static_cast<uint32_t>((100 - given) % blank.size());
  }
  return out;
}

std::string bssplit_text(const std::vector<BsShare>& split) {
  std::string out;
  for (const BsShare& s : split) {
    if (!out.empty()) out += ':';
    out += s.size % 1024 == 0 ? fmt::format("{}k/{}", s.size / 1024, s.weight) : fmt::format("{}/{}", s.size, s.weight);
  }
  return out;
}

}  // namespace ioacct
