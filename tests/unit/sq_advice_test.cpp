// The SQ thread's advice and labels: "work" is what SqWorkTime counts (loops
// that had SQEs to submit), and --sq-idle is advised only where the rings
// went quiet between bursts for longer than the shortest idle.
#include <gtest/gtest.h>

#include "cli/sq_advice.hpp"
#include "report/rings_report.hpp"

// A namespace of its own: unit tests are built in batches (a unity build).
namespace ioacct::sq_advice_test {
namespace {

SqThreadStat thread_with(double cpu_s, double work_s) {
  SqThreadStat sq;
  sq.tid = 4242;
  sq.rings = 1;
  sq.cpu_s = cpu_s;
  sq.work_s = work_s;
  return sq;
}

TEST(SqAdvice, ShorterSqIdleOnlyWhereTheRingsWentQuietBetweenBursts) {
  const std::string common =
      "warning: SQ thread 4242 spent 90% of its 1.00 CPU-seconds outside the loops SqWorkTime counts (those that had "
      "SQEs to submit; loops that found none or only ran completions are left out)";
  // Paced at 200 IOPS: 5 ms between bursts, and the default idle (1 s) spins through each.
  EXPECT_EQ(sq_thread_warning(thread_with(1.0, 0.1), 5e6, 0),
            common + "; its rings went quiet for about 5.00 ms between bursts, so a --sq-idle under that (at least 1ms) "
                     "lets it sleep there, or leave --sqpoll off\n");
  // New SQEs every 15 µs: the thread never idles long enough to sleep.
  const std::string busy = sq_thread_warning(thread_with(1.0, 0.1), 15e3, 0);
  EXPECT_EQ(busy, common + "; its rings had new SQEs about every 15.0 µs, too close for it ever to sleep (the shortest "
                           "--sq-idle is 1ms), so a shorter --sq-idle gives nothing back: leave --sqpoll off if this CPU "
                           "matters more than the submission syscalls it saves\n");
  // The old advice and the old word are gone.
  EXPECT_EQ(busy.find("gives that CPU back"), std::string::npos);
  EXPECT_EQ(busy.find("spinning without work"), std::string::npos);
  // Already at the shortest idle: no shorter one to advise.
  EXPECT_EQ(sq_thread_warning(thread_with(1.0, 0.1), 5e6, 1),
            common + "; leave --sqpoll off if this CPU matters more than the submission syscalls it saves\n");
  // No warning: little CPU, half or more counted, or no SqWorkTime at all.
  EXPECT_EQ(sq_thread_warning(thread_with(0.04, 0.0), 5e6, 0), "");
  EXPECT_EQ(sq_thread_warning(thread_with(1.0, 0.5), 5e6, 0), "");
  SqThreadStat old_kernel = thread_with(1.0, 0.0);
  old_kernel.work_s.reset();
  EXPECT_EQ(sq_thread_warning(old_kernel, 5e6, 0), "");
}

TEST(SqAdvice, RingsLabelsTheThreadByWhatSqWorkTimeCounts) {
  RingsView v;
  v.interval_s = 1.0;
  SqThreadView t;
  t.tid = 21;
  t.pid = 20;
  t.comm = "app";
  t.fds = {4};
  t.cpu_s = 0.9;
  t.work_s = 0.1;
  t.cpu_share = 0.9;
  t.work_ratio = 0.1 / 0.9;
  t.mostly_idle = true;
  v.sq_threads.push_back(t);
  const std::string out = format_rings_console(v);
  EXPECT_NE(out.find("SQ threads (CPU: fdinfo SqTotalTime; WORK: SqWorkTime, its loops that had SQEs to submit)\n"),
            std::string::npos) << out;
  EXPECT_NE(out.find("  <- mostly outside SqWorkTime\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("spinning idle"), std::string::npos) << out;
  EXPECT_EQ(out.find("useful work"), std::string::npos) << out;
}

}  // namespace
}  // namespace ioacct::sq_advice_test
