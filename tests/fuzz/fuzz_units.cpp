// Command-line values: every parser either returns a value or throws
// UsageError naming the flag; nothing else (no crash, no other exception, no
// undefined behaviour). What parses must also print and re-parse consistently.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/errors.hpp"
#include "common/units.hpp"

using namespace ioacct;

template <typename F>
static void expect_value_or_usage_error(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    if (std::string_view(e.what()).rfind("--x: ", 0) != 0) std::abort();  // names the flag
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  expect_value_or_usage_error([&] {
    const uint64_t v = parse_size("--x", text);
    // Bytes printed in a whole unit read back to the same value.
    if (v && (v % 1024 == 0 || v < 1024)) {
      const std::string s = format_size(v);
      if (s.find('.') == std::string::npos) {
        std::string compact = s;
        compact.erase(compact.find(' '), 1);
        if (parse_size("--x", compact) != v) std::abort();
      }
    }
  });
  expect_value_or_usage_error([&] { parse_count("--x", text); });
  expect_value_or_usage_error([&] {
    const auto d = parse_duration("--x", text);
    if (d.count() < 0) std::abort();
  });
  expect_value_or_usage_error([&] { parse_bandwidth("--x", text); });
  expect_value_or_usage_error([&] {
    // --start-at: an instant after the epoch prints to the nanosecond and reads back the same.
    const int64_t t = parse_instant("--x", text);
    if (t >= 0 && parse_instant("--x", format_rfc3339_ns(t)) != t) std::abort();
  });
  expect_value_or_usage_error([&] {
    for (int c : parse_cpu_list("--x", text))
      if (c < 0 || c > 65535) std::abort();
  });
  return 0;
}
