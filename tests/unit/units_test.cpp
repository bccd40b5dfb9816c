// Unit parsing and printing (src/workload/units.hpp).
// The contract: sizes are IEC, counts SI, durations need a unit, and every
// parser refuses what it cannot read with a UsageError that names the flag and
// quotes the text, never a silent default or a partial read.
#include "common/units.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "common/errors.hpp"

namespace ioacct {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t KiB = uint64_t{1} << 10;
constexpr uint64_t MiB = uint64_t{1} << 20;
constexpr uint64_t GiB = uint64_t{1} << 30;
constexpr uint64_t TiB = uint64_t{1} << 40;
constexpr uint64_t PiB = uint64_t{1} << 50;
constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

// Runs `f`, which must throw UsageError, and returns its message. Any other
// outcome is a test failure (an unexpected exception type propagates to gtest).
std::string usage_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UsageError, but nothing was thrown";
  return {};
}

// The message must start with "<flag>: " and quote the offending text.
void expect_refused(const std::function<void()>& f, std::string_view flag, std::string_view text) {
  const std::string msg = usage_error_of(f);
  std::string prefix(flag), quoted(1, '\'');
  prefix += ": ";
  quoted += text;
  quoted += '\'';
  EXPECT_THAT(msg, StartsWith(prefix)) << "input " << quoted;
  EXPECT_THAT(msg, HasSubstr(quoted)) << "input " << quoted;
}

// ---------------------------------------------------------------- parse_size

TEST(ParseSize, PlainBytes) {
  EXPECT_EQ(parse_size("--bs", "0"), 0u);
  EXPECT_EQ(parse_size("--bs", "1"), 1u);
  EXPECT_EQ(parse_size("--bs", "512"), 512u);
  EXPECT_EQ(parse_size("--bs", "4096"), 4096u);
  EXPECT_EQ(parse_size("--bs", "1000"), 1000u);  // no suffix: bytes, not "1k"
  EXPECT_EQ(parse_size("--bs", "512b"), 512u);
  EXPECT_EQ(parse_size("--bs", "512B"), 512u);
  EXPECT_EQ(parse_size("--bs", "007"), 7u);
}

TEST(ParseSize, IecSuffixesInEveryAcceptedSpelling) {
  struct Case { const char* text; uint64_t want; };
  const Case cases[] = {
      {"4k", 4 * KiB},   {"4K", 4 * KiB},   {"4KiB", 4 * KiB}, {"64KiB", 64 * KiB},
      {"1m", MiB},       {"1M", MiB},       {"1MiB", MiB},     {"128m", 128 * MiB},
      {"1g", GiB},       {"1G", GiB},       {"1GiB", GiB},     {"2g", 2 * GiB},
      {"1t", TiB},       {"1T", TiB},       {"1TiB", TiB},     {"3t", 3 * TiB},
      {"1p", PiB},       {"1P", PiB},       {"1PiB", PiB},     {"0k", 0},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_size("--bs", c.text), c.want) << c.text;
}

TEST(ParseSize, FractionsWhenTheyAreWholeBytes) {
  EXPECT_EQ(parse_size("--bs", "1.5m"), MiB + MiB / 2);
  EXPECT_EQ(parse_size("--bs", "1.5k"), 1536u);
  EXPECT_EQ(parse_size("--bs", "0.5k"), 512u);
  EXPECT_EQ(parse_size("--bs", "1.25KiB"), 1280u);
  EXPECT_EQ(parse_size("--bs", "2.0g"), 2 * GiB);
  EXPECT_EQ(parse_size("--bs", "0.5g"), GiB / 2);
  EXPECT_EQ(parse_size("--bs", "1.000000000k"), KiB);  // nine fractional digits, all zero
  EXPECT_EQ(parse_size("--bs", "0.001953125m"), 2 * KiB);  // 2^-9 MiB, nine digits
}

TEST(ParseSize, FractionsThatAreNotWholeBytesAreRefused) {
  for (const char* text : {"1.5", "0.1k", "1.3k", "0.001k", "1.000000001k"})
    expect_refused([&] { parse_size("--size", text); }, "--size", text);
}

TEST(ParseSize, LargestValues) {
  EXPECT_EQ(parse_size("--size", "18446744073709551615"), kMax);
  EXPECT_EQ(parse_size("--size", "16383p"), 16383 * PiB);
  EXPECT_EQ(parse_size("--size", "16383.5p"), 16383 * PiB + PiB / 2);
}

TEST(ParseSize, OverflowIsRefusedNotWrapped) {
  for (const char* text : {"18446744073709551616", "99999999999999999999", "20000000p", "16384p",
                           "16384PiB", "17179869184t", "18014398509481984k"}) {
    const std::string msg = usage_error_of([&] { parse_size("--size", text); });
    EXPECT_THAT(msg, StartsWith("--size: ")) << text;
    EXPECT_THAT(msg, HasSubstr(std::string("'") + text + "'")) << text;
  }
}

TEST(ParseSize, AmbiguousDecimalLookingUnitsAreRefusedWithAHint) {
  for (const char* text : {"4KB", "4kB", "4kb", "4MB", "1GB", "1TB", "1PB"}) {
    const std::string msg = usage_error_of([&] { parse_size("--bs", text); });
    EXPECT_THAT(msg, StartsWith("--bs: ")) << text;
    EXPECT_THAT(msg, HasSubstr(std::string("'") + text + "'")) << text;
    EXPECT_THAT(msg, HasSubstr("ambiguous")) << text;
    EXPECT_THAT(msg, HasSubstr("4KiB")) << text;  // says what to write instead
  }
}

TEST(ParseSize, GarbageIsRefusedNamingTheFlagAndQuotingTheText) {
  for (const char* text : {"4q", "", "-1", "+1", "10 k", " 4k", "4k ", "4\tk", ".5k", "1.", "1.k",
                           "k", "KiB", "4kk", "4ki", "4kib", "4Ki", "4 KiB", "0x10", "1e3", "1,5k",
                           "4KiBs", "4k/s", "4e", "abc", "1.2.3", "4i"}) {
    expect_refused([&] { parse_size("--bs", text); }, "--bs", text);
  }
}

TEST(ParseSize, MessageUsesTheFlagItIsGiven) {
  EXPECT_THAT(usage_error_of([] { parse_size("--size", "4q"); }), StartsWith("--size: "));
  EXPECT_THAT(usage_error_of([] { parse_size("--bs", "4q"); }), StartsWith("--bs: "));
  EXPECT_THAT(usage_error_of([] { parse_size("--bs", "4q"); }), HasSubstr("size"));
}

// --------------------------------------------------------------- parse_count

TEST(ParseCount, SiSuffixes) {
  struct Case { const char* text; uint64_t want; };
  const Case cases[] = {
      {"0", 0},
      {"1", 1},
      {"1000", 1000},
      {"1024", 1024},
      {"10k", 10'000},
      {"10K", 10'000},
      {"2M", 2'000'000},
      {"3G", 3'000'000'000ull},
      {"1T", 1'000'000'000'000ull},
      {"1.5k", 1'500},
      {"2.5M", 2'500'000},
      {"0.001k", 1},
      {"1.000001M", 1'000'001},
      {"18446744073709551615", kMax},
      {"18446744.073709551T", 18'446'744'073'709'551'000ull},
      {"18446744073709551.615k", kMax},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_count("--number", c.text), c.want) << c.text;
}

TEST(ParsePercent, WithOrWithoutTheSignStrictlyBetweenZeroAndHundred) {
  EXPECT_DOUBLE_EQ(parse_percent("--margin", "5%"), 0.05);
  EXPECT_DOUBLE_EQ(parse_percent("--margin", "5"), 0.05);
  EXPECT_DOUBLE_EQ(parse_percent("--margin", "2.5%"), 0.025);
  EXPECT_DOUBLE_EQ(parse_percent("--margin", "99.9%"), 0.999);
  for (const char* text : {"", "0", "0%", "100%", "150", "-5%", "5 %", "5%%", "0.05x", "five", "5pc"})
    expect_refused([&] { parse_percent("--margin", text); }, "--margin", text);
}

TEST(ParseCount, CountsAreNotIec) {
  EXPECT_NE(parse_count("--number", "1k"), 1024u);
  EXPECT_NE(parse_count("--number", "1M"), MiB);
}

TEST(ParseCount, RefusesGarbageFractionsAndOverflow) {
  for (const char* text :
       {"", "-1", "+1", "4q", "10 k", " 10", "10 ", "1.5", "0.0001k", "10m", "10KiB", "10kB", "1e3",
        "10kk", ".5k", "1.", "18446744073709551616", "18446744073709552k", "20000000T", "k",
        "18446744073709551.616k"}) {
    expect_refused([&] { parse_count("--number", text); }, "--number", text);
  }
}

TEST(ParseCount, MessageSaysCountsAreSi) {
  const std::string msg = usage_error_of([] { parse_count("--ios", "7x"); });
  EXPECT_THAT(msg, StartsWith("--ios: "));
  EXPECT_THAT(msg, HasSubstr("'7x'"));
  EXPECT_THAT(msg, HasSubstr("count"));
}

// ------------------------------------------------------------ parse_duration

TEST(ParseDuration, EveryUnit) {
  EXPECT_EQ(parse_duration("--runtime", "100ns"), 100ns);
  EXPECT_EQ(parse_duration("--runtime", "250us"), 250us);
  EXPECT_EQ(parse_duration("--runtime", "250\xC2\xB5s"), 250us);  // "250µs" in UTF-8
  EXPECT_EQ(parse_duration("--runtime", "500ms"), 500ms);
  EXPECT_EQ(parse_duration("--runtime", "10s"), 10s);
  EXPECT_EQ(parse_duration("--runtime", "2m"), 120s);
  EXPECT_EQ(parse_duration("--runtime", "2min"), 120s);
  EXPECT_EQ(parse_duration("--runtime", "1h"), 3600s);
  EXPECT_EQ(parse_duration("--runtime", "0s"), 0ns);
}

TEST(ParseDuration, Fractions) {
  EXPECT_EQ(parse_duration("--runtime", "1.5s"), 1500ms);
  EXPECT_EQ(parse_duration("--runtime", "1.5m"), 90s);
  EXPECT_EQ(parse_duration("--runtime", "0.5ms"), 500us);
  EXPECT_EQ(parse_duration("--runtime", "0.25h"), 900s);
  EXPECT_EQ(parse_duration("--runtime", "0.000000001s"), 1ns);
  EXPECT_EQ(parse_duration("--runtime", "1.001us"), 1001ns);
}

TEST(ParseDuration, LimitsOfInt64Nanoseconds) {
  EXPECT_EQ(parse_duration("--runtime", "9223372036854775807ns").count(),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parse_duration("--runtime", "9223372036s"), 9223372036s);
  EXPECT_EQ(parse_duration("--runtime", "2562047h"), std::chrono::hours(2562047));
  for (const char* text : {"9223372036854775808ns", "18446744073709551615ns", "9223372037s", "2562048h",
                           "99999999999999999999s"})
    expect_refused([&] { parse_duration("--runtime", text); }, "--runtime", text);
}

TEST(ParseDuration, AUnitIsRequired) {
  const std::string msg = usage_error_of([] { parse_duration("--runtime", "10"); });
  EXPECT_THAT(msg, StartsWith("--runtime: "));
  EXPECT_THAT(msg, HasSubstr("'10'"));
  EXPECT_THAT(msg, HasSubstr("unit"));
}

TEST(ParseDuration, RefusesGarbage) {
  for (const char* text : {"", "s", "-1s", "+1s", "10 s", " 10s", "10s ", "10S", "10sec", "10MS", "10H",
                           "10d", "1.5ns", "0.1ns", "0.0000000001s", ".5s", "1.s", "10ss", "1e3ms", "4q"})
    expect_refused([&] { parse_duration("--runtime", text); }, "--runtime", text);
}

// ----------------------------------------------------------- parse_bandwidth

TEST(ParseBandwidth, SizesPerSecondInIec) {
  EXPECT_EQ(parse_bandwidth("--rate", "50m"), 50 * MiB);
  EXPECT_EQ(parse_bandwidth("--rate", "50m/s"), 50 * MiB);
  EXPECT_EQ(parse_bandwidth("--rate", "50MiB/s"), 50 * MiB);
  EXPECT_EQ(parse_bandwidth("--rate", "50M/s"), 50 * MiB);
  EXPECT_EQ(parse_bandwidth("--rate", "1g"), GiB);
  EXPECT_EQ(parse_bandwidth("--rate", "1GiB/s"), GiB);
  EXPECT_EQ(parse_bandwidth("--rate", "1.5k/s"), 1536u);
  EXPECT_EQ(parse_bandwidth("--rate", "100"), 100u);
  EXPECT_EQ(parse_bandwidth("--rate", "100/s"), 100u);
  EXPECT_EQ(parse_bandwidth("--rate", "100B/s"), 100u);
}

TEST(ParseBandwidth, RefusesGarbage) {
  for (const char* text : {"", "/s", "50MB/s", "50mb/s", "50 m", "50m /s", "50m/s/s", "50m/", "50m/S",
                           "-1m", "50q", "0.1k", "20000000p", "50Mbps", "1.5"}) {
    expect_refused([&] { parse_bandwidth("--rate", text); }, "--rate", text);
  }
}

// ------------------------------------------------------------ parse_cpu_list

TEST(ParseCpuList, ListsAndRanges) {
  EXPECT_EQ(parse_cpu_list("--cpus", "0"), (std::vector<int>{0}));
  EXPECT_EQ(parse_cpu_list("--cpus", "0,2-3,7"), (std::vector<int>{0, 2, 3, 7}));
  EXPECT_EQ(parse_cpu_list("--cpus", "3-3"), (std::vector<int>{3}));
  EXPECT_EQ(parse_cpu_list("--cpus", "0-3"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_cpu_list("--cpus", "7,0"), (std::vector<int>{7, 0}));  // order kept
  EXPECT_EQ(parse_cpu_list("--cpus", "10-12,1"), (std::vector<int>{10, 11, 12, 1}));
  EXPECT_EQ(parse_cpu_list("--cpus", "65535"), (std::vector<int>{65535}));
}

TEST(ParseCpuList, RefusesMalformedLists) {
  for (const char* text : {"", ",", "0,", ",0", "0,,1", "3-1", "1-", "-1", "-", "1-2-3", "1--2", "a", " 1",
                           "1 ", "1, 2", "+1", "65536", "0-65536", "1.5", "0x1", "2147483648"})
    expect_refused([&] { parse_cpu_list("--cpus", text); }, "--cpus", text);
}

TEST(ParseCpuList, DuplicatesAreRefusedNamingTheCpu) {
  for (const char* text : {"1,1", "0-3,2", "2,0-3", "0-2,2-4"}) {
    const std::string msg = usage_error_of([&] { parse_cpu_list("--cpus", text); });
    EXPECT_THAT(msg, StartsWith("--cpus: ")) << text;
    EXPECT_THAT(msg, HasSubstr(std::string("'") + text + "'")) << text;
    EXPECT_THAT(msg, HasSubstr("twice")) << text;
  }
  EXPECT_THAT(usage_error_of([] { parse_cpu_list("--cpus", "0-3,2"); }), HasSubstr("CPU 2 "));
}

// ---------------------------------------------------------------- formatting

TEST(FormatSize, WholeUnitsArePrintedWithoutDecimals) {
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(1), "1 B");
  EXPECT_EQ(format_size(512), "512 B");
  EXPECT_EQ(format_size(1000), "1000 B");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(KiB), "1 KiB");
  EXPECT_EQ(format_size(4 * KiB), "4 KiB");
  EXPECT_EQ(format_size(1023 * KiB), "1023 KiB");
  EXPECT_EQ(format_size(MiB), "1 MiB");
  EXPECT_EQ(format_size(3 * MiB), "3 MiB");
  EXPECT_EQ(format_size(GiB), "1 GiB");
  EXPECT_EQ(format_size(TiB), "1 TiB");
  EXPECT_EQ(format_size(PiB), "1 PiB");
  EXPECT_EQ(format_size(uint64_t{1} << 60), "1024 PiB");  // PiB is the largest unit
}

TEST(FormatSize, OtherValuesGetTwoDecimals) {
  EXPECT_EQ(format_size(1536), "1.50 KiB");
  EXPECT_EQ(format_size(GiB + GiB / 2), "1.50 GiB");
  EXPECT_EQ(format_size(1'000'000), "976.56 KiB");
  EXPECT_EQ(format_size(1'000'000'000), "953.67 MiB");  // GiB is 2^30, MiB 2^20: never 1000-based
  EXPECT_EQ(format_size(kMax), "16384.00 PiB");
}

TEST(FormatSize, RoundTripsThroughParseSize) {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{512}, 4 * KiB, 64 * KiB, MiB, 7 * MiB, GiB, 5 * TiB}) {
    std::string s = format_size(v);
    s.erase(s.find(' '), 1);  // "4 KiB" -> "4KiB"
    EXPECT_EQ(parse_size("--bs", s), v) << s;
  }
}

TEST(FormatBandwidth, ThreeSignificantDigitsIn1024Units) {
  EXPECT_EQ(format_bandwidth(0), "0.00 B/s");
  EXPECT_EQ(format_bandwidth(512), "512 B/s");
  EXPECT_EQ(format_bandwidth(1024), "1.00 KiB/s");
  EXPECT_EQ(format_bandwidth(50.0 * MiB), "50.0 MiB/s");
  EXPECT_EQ(format_bandwidth(1.5 * GiB), "1.50 GiB/s");
  EXPECT_EQ(format_bandwidth(1e9), "954 MiB/s");  // 1e9 B/s is 953.7 MiB/s, not "1 GiB/s"
  EXPECT_EQ(format_bandwidth(2.0 * TiB), "2.00 TiB/s");
  EXPECT_EQ(format_bandwidth(2048.0 * TiB), "2048 TiB/s");  // TiB/s is the largest unit
}

TEST(FormatCount, SiUnits) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(7), "7");
  EXPECT_EQ(format_count(999), "999");
  EXPECT_EQ(format_count(1000), "1.00k");
  EXPECT_EQ(format_count(1024), "1.02k");  // 1000-based, not 1024
  EXPECT_EQ(format_count(123'400), "123.4k");
  EXPECT_EQ(format_count(12'350'000), "12.35M");
  EXPECT_EQ(format_count(1e9), "1.00G");
  EXPECT_EQ(format_count(1e12), "1.00T");
  EXPECT_EQ(format_count(1e15), "1000.0T");  // T is the largest unit
}

TEST(FormatDurationNs, PicksTheUnit) {
  EXPECT_EQ(format_duration_ns(0), "0 ns");
  EXPECT_EQ(format_duration_ns(812), "812 ns");
  EXPECT_EQ(format_duration_ns(1000), "1.00 \xC2\xB5s");
  EXPECT_EQ(format_duration_ns(45'600), "45.6 \xC2\xB5s");
  EXPECT_EQ(format_duration_ns(1.23e6), "1.23 ms");
  EXPECT_EQ(format_duration_ns(12.3e6), "12.3 ms");
  EXPECT_EQ(format_duration_ns(999e6), "999.0 ms");
  EXPECT_EQ(format_duration_ns(1e9), "1.00 s");
  EXPECT_EQ(format_duration_ns(10e9), "10.00 s");
  EXPECT_EQ(format_duration_ns(999e9), "999.00 s");
  // Found by a test pass: --runtime 100000h printed "360000000.00 s".
  EXPECT_EQ(format_duration_ns(1000e9), "16 min 40 s");
  EXPECT_EQ(format_duration_ns(3600e9), "1 h");
  EXPECT_EQ(format_duration_ns(5400e9), "1 h 30 min");
  EXPECT_EQ(format_duration_ns(3.6e17), "100000 h");
}

TEST(Plural, OneIsSingular) {
  EXPECT_EQ(plural(0, "I/O"), "0 I/Os");
  EXPECT_EQ(plural(1, "I/O"), "1 I/O");
  EXPECT_EQ(plural(2, "block"), "2 blocks");
  EXPECT_EQ(plural(1, "mismatch", "mismatches"), "1 mismatch");
  EXPECT_EQ(plural(3, "mismatch", "mismatches"), "3 mismatches");
}

TEST(ParseId, PlainDigitsOnly) {
  EXPECT_EQ(parse_id("--pid", "1234", "a process id"), 1234u);
  EXPECT_EQ(parse_id("--pid", "0", "a process id"), 0u);
  // Found by a test pass: "rings --pid 1k" watched pid 1000.
  for (const char* text : {"1k", "1K", "1.5", "", "-1", "+1", " 1", "1 ", "0x10", "99999999999999999999999"}) {
    SCOPED_TRACE(text);
    try {
      parse_id("--pid", text, "a process id");
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--pid: cannot read"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("a process id"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
// fio's list for reads, writes and trims, as --rate-iops and fio's rate read it.
TEST(SplitDirections, FiosRulesForReadsWritesAndTrims) {
  using F = std::array<std::string, 3>;
  EXPECT_EQ(split_directions("a"), (F{"a", "a", "a"}));
  EXPECT_EQ(split_directions("a,b"), (F{"a", "b", "b"})) << "the last value goes on to the rest";
  EXPECT_EQ(split_directions("a,"), (F{"a", "", ""})) << "a trailing comma leaves the rest unset";
  EXPECT_EQ(split_directions(",b"), (F{"", "b", "b"}));
  EXPECT_EQ(split_directions("a,b,c"), (F{"a", "b", "c"}));
  EXPECT_EQ(split_directions("a,b,"), (F{"a", "b", ""}));
  EXPECT_EQ(split_directions(""), (F{"", "", ""}));
  EXPECT_FALSE(split_directions("a,b,c,d"));
  EXPECT_FALSE(split_directions("a,b,c,")) << "nothing after the trims";
}

TEST(PercentileOf, AboveZeroAndAtMostOneHundred) {
  EXPECT_EQ(percentile_of("99.9"), 99.9);
  EXPECT_EQ(percentile_of("100"), 100.0);
  for (const char* bad : {"0", "100.1", "-5", "x", "", "50%", "5 "}) EXPECT_FALSE(percentile_of(bad)) << bad;
}

}  // namespace ioacct
