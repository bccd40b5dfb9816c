// /proc/self/mountinfo and /proc/swaps text: any bytes parse without a crash,
// and what is parsed comes from the text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "acct/procfs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto& m : ioacct::parse_mountinfo(text))
    if (m.fs_type.empty() || m.fs_type.size() > size) std::abort();
  for (const auto& s : ioacct::parse_swaps(text))
    if (s.size() > size) std::abort();
  return 0;
}
