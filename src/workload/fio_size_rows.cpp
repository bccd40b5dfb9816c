// fio's block size options, one row each: bs, bsrange and bssplit, each
// one size or list for every direction or one per direction
// (fio_options.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/units.hpp"
#include "workload/fio_options.hpp"

namespace ioacct {
namespace {

// bs, bsrange and bssplit each set the sizes whole: the last one given wins.
void set_bs(FioValues& v, const FioOption& o, uint64_t bs, FioSpec& j) {
  j.bs_dir = {};
  j.bs_split_dir = {};
  if (bs == 0) v.bad(o, fmt::format("'{}': a block size of 0 is not one fio or ioacct can run", o.value));
  else j.bs = bs;
}

// One size, or fio's r,w,t list: a field left unset is fio's default 4k.
void decode_bs(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (s.opt->value.find(',') == std::string::npos) {
    if (const auto n = v.sizes(*s.opt, "block sizes")) set_bs(v, *s.opt, *n, j);
    return;
  }
  const auto each = v.sizes_each(*s.opt);
  const auto fields = split_directions(s.opt->value);
  if (!each || !fields) return;
  std::array<uint64_t, 3> b = *each;
  for (size_t d = 0; d < 3; ++d) {
    if (!(*fields)[d].empty() && b[d] == 0) return set_bs(v, *s.opt, 0, j);  // the error every zero size gets
    b[d] = b[d] ? b[d] : 4096;
  }
  if (b[0] == b[1] && b[1] == b[2]) set_bs(v, *s.opt, b[0], j);
  else j.bs_dir = b;
}

// fio draws a size from MIN to MAX on MIN's grid, every one as likely.
void decode_bsrange(FioValues& v, const FioSetting& s, FioSpec& j) {
  const std::string& x = s.opt->value;
  if (x.find(',') != std::string::npos)
    return v.bad(*s.opt, fmt::format("'{}': ranges per direction (r,w) are not supported; give one range", x));
  const size_t dash = x.find_first_of("-:");
  const auto lo = dash == std::string::npos ? std::nullopt : fio_size(x.substr(0, dash), v.kb_base);
  const auto hi = dash == std::string::npos ? std::nullopt : fio_size(x.substr(dash + 1), v.kb_base);
  if (!lo || !hi || *lo > *hi) return v.bad(*s.opt, fmt::format("cannot read '{}' as MIN-MAX", x));
  if (*lo == *hi || *lo == 0) return set_bs(v, *s.opt, *lo, j);
  if (*hi / *lo > 4096) return v.bad(*s.opt, fmt::format("'{}': more than 4096 sizes from MIN to MAX", x));
  j.bs_split.clear();
  j.bs_dir = {};
  j.bs_split_dir = {};
  for (uint64_t size = *lo; size <= *hi; size += *lo) j.bs_split.push_back({static_cast<uint32_t>(size), 1});
}

// fio's SIZE/PERCENT:... list; a size with no percent shares what is left.
// One SIZE/PERCENT:... list in fio's sizes, read as --bssplit reads it; a
// zero size gets set_bs's error.
std::optional<std::vector<BsShare>> read_split(FioValues& v, const FioSetting& s, FioSpec& j, const std::string& x) {
  std::string bytes;  // the list with fio's sizes in bytes
  for (size_t at = 0; at <= x.size();) {
    const size_t end = std::min(x.find(':', at), x.size());
    const std::string item = x.substr(at, end - at);
    const size_t slash = item.find('/');
    const auto size = fio_size(item.substr(0, slash), v.kb_base);
    if (!size) return v.bad(*s.opt, fmt::format("cannot read '{}' as SIZE/PERCENT", item)), std::nullopt;
    if (*size == 0) return set_bs(v, *s.opt, 0, j), std::nullopt;  // the error every zero size gets
    bytes += fmt::format("{}{}{}", bytes.empty() ? "" : ":", *size, slash == std::string::npos ? "" : item.substr(slash));
    at = end + 1;
  }
  try {
    auto split = parse_bssplit("bssplit", bytes);
    uint64_t sum = 0;
    for (const BsShare& b : split) sum += b.weight;
    if (split.size() > 1 && sum != 100)
      return v.bad(*s.opt, fmt::format("'{}': the percentages add up to {}, not 100", x, sum)), std::nullopt;
    return split;
  } catch (const UsageError& e) {
    v.bad(*s.opt, std::string(e.what()).substr(std::string_view("bssplit: ").size()));
    return std::nullopt;
  }
}

// fio's SIZE/PERCENT:... list, or one per direction (r,w,t as bs: a list
// left out is fio's default 4k); a size with no percent shares what is left.
void decode_bssplit(FioValues& v, const FioSetting& s, FioSpec& j) {
  const std::string& x = s.opt->value;
  std::array<std::vector<BsShare>, 3> lists;
  if (x.find(',') == std::string::npos) {
    auto one = read_split(v, s, j, x);
    if (!one) return;
    lists = {*one, *one, *one};
  } else {
    const auto fields = split_directions(x);
    if (!fields) return v.bad(*s.opt, fmt::format("'{}' has more than three lists (reads, writes, trims)", x));
    for (size_t d = 0; d < 3; ++d) {
      auto list = (*fields)[d].empty() ? std::optional<std::vector<BsShare>>({{4096, 100}})
                                        : read_split(v, s, j, (*fields)[d]);
      if (!list) return;
      lists[d] = std::move(*list);
    }
  }
  j.bs_dir = {};
  j.bs_split.clear();
  j.bs_split_dir = {};
  if (lists[0] != lists[1] || lists[1] != lists[2]) {
    j.bs_split_dir = std::move(lists);
  } else if (lists[0].size() == 1) {
    set_bs(v, *s.opt, lists[0].front().size, j);
  } else {
    j.bs_split = std::move(lists[0]);
  }
}

// One boundary for every direction (fio's per-direction list only when its
// values are equal).
void decode_blockalign(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (const auto n = v.sizes(*s.opt, "alignments")) {
    if (*n == 0) return v.bad(*s.opt, "0 is not a boundary; leave blockalign out for bs's");
    j.blockalign = *n;
    j.blockalign_at = s.opt;
  }
}

}  // namespace

std::vector<FioOptionRow> fio_size_rows() {
  return {
  {{{"bs"}, {"blocksize"}},
   "`--bs`; sizes per direction (`4k,64k`, a field left unset fio's default 4k): `--bs R,W,T` for a mixed `rw`, "
   "the job's direction's size otherwise",
   "with sizes per direction each direction has its own size's grid and sequential stream, as in fio, and random "
   "I/O a map of its own per direction (fio keeps one map, whose bits each direction reads in its own units): "
   "every I/O is whole",
   decode_bs},
  {{{"bsrange"}, {"blocksize_range"}},
   "`--bssplit` with every multiple of MIN up to MAX as likely (fio's draw); `--bs` when both ends are equal",
   "one range for every direction: ranges per direction (`4k-8k,16k-32k`) are an error",
   decode_bsrange},
  {{{"bssplit"}},
   "`--bssplit`, the sizes in bytes and the percentages as given (a size without one shares what is left); "
   "`--bs` when it is one size (`4k` or `4k/100`); lists per direction (`4k/50:8k/50,16k/100`, a list left out "
   "fio's default 4k): `--bssplit R,W,T` for a mixed `rw`, the job's direction's list otherwise",
   "the percentages add up to 100. With lists per direction each direction has its own grid (its smallest size), "
   "stream and random map",
   decode_bssplit},
    {{{"blockalign"}, {"ba"}},
     "`--blockalign`: random offsets on this boundary instead of `bs`'s",
     "one boundary for every direction (a list per direction is an error); with one block size only: with `bsrange` "
     "or `bssplit` it is an error (fio turns its random map off for it, ioacct keeps the map for mixed sizes)",
     decode_blockalign},
  };
}

}  // namespace ioacct
