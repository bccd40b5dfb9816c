// bench's console slat/clat lines (src/report/console.cpp) on made-up
// results: the cases a live run reaches only by chance (a paced job where
// one I/O of thousands was submitted alone) are pinned here.
#include <gtest/gtest.h>

#include <string>

#include "report/report.hpp"

namespace ioacct {
namespace {

// A run of `n` reads whose lat is 50 µs; `split` of them timed apart.
RunResult run_with(uint64_t n, uint64_t split, uint64_t at_submit) {
  RunResult r;
  ThreadResult& t = r.total;
  t.ios = t.reads = n;
  t.window_ns = r.window_ns = 1'000'000'000;
  t.latency->record_n(50'000, n);
  t.slat = std::make_shared<Histogram>();
  t.clat = std::make_shared<Histogram>();
  t.slat->record_n(20'000, split);
  t.clat->record_n(30'000, split - at_submit);
  t.clat_at_submit = at_submit;
  t.slat_unsplit = n - split;
  return r;
}

std::string slat_lines(const RunResult& r) {
  JobSpec job;
  const std::string out = format_console(job, r);
  const size_t at = out.find("  slat");
  return at == std::string::npos ? out : out.substr(at, out.find("  syscalls", at) - at);
}

TEST(ConsoleSplit, AFewTimedApartSayOfHowManyAndShowNoP99) {
  const std::string s = slat_lines(run_with(3998, 1, 0));
  EXPECT_NE(s.find("slat       of 1 of the 3998 I/Os (0.0%; the rest not timed apart): min 20"), std::string::npos) << s;
  EXPECT_NE(s.find("(1 I/O: too few for a p99)"), std::string::npos) << s;
  EXPECT_EQ(s.find("p99 "), std::string::npos) << s;
  EXPECT_EQ(s.find("stdev"), std::string::npos) << "a stdev of one sample is 0, not a spread: " << s;
}

TEST(ConsoleSplit, EveryIoTimedApartHasFullFiguresAndNoShare) {
  const std::string s = slat_lines(run_with(5000, 5000, 0));
  EXPECT_NE(s.find("slat       min 20"), std::string::npos) << s;
  EXPECT_NE(s.find("p99 "), std::string::npos) << s;
  EXPECT_EQ(s.find("not timed apart"), std::string::npos) << s;
}

TEST(ConsoleSplit, IosCompleteAtSubmitAreCountedNotShownAsZeroClat) {
  const std::string s = slat_lines(run_with(5000, 5000, 200));
  EXPECT_NE(s.find("200 I/Os (4.0%) complete by the return of the io_uring_enter that submitted it"), std::string::npos)
      << s;
  EXPECT_EQ(s.find("min 0 ns"), std::string::npos) << s;
  const std::string all = slat_lines(run_with(5000, 5000, 5000));
  EXPECT_EQ(all.find("  clat "), std::string::npos) << "no clat line when no I/O has a clat: " << all;
}

}  // namespace
}  // namespace ioacct
