// /proc/diskstats lines: any bytes parse without a crash; a parsed line has
// 11, 15 or 17 counters.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "acct/procfs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto d = ioacct::parse_diskstats_line(text))
    if (d->fields != 11 && d->fields != 15 && d->fields != 17) std::abort();
  return 0;
}
