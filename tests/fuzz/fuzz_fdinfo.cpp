// io_uring fdinfo text: any bytes parse without a crash; numbers read back
// only from fields that are all digits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "acct/procfs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto info = ioacct::parse_fdinfo(text);
  for (const auto& [k, v] : info) {
    if (k.empty()) std::abort();
    if (auto n = ioacct::fdinfo_number(info, k); n && v.empty()) std::abort();
    if (auto h = ioacct::fdinfo_hex(info, k); h && v.size() < 3) std::abort();
  }
  // Entry lines are whole lines of the text: never more than it has.
  size_t lines = 1;
  for (char c : text) lines += c == '\n';
  if (ioacct::fdinfo_entries(text, "CqOverflowList") > lines) std::abort();
  return 0;
}
