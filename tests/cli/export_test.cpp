// `ioacct export`: a real exporter on a loopback port, scraped with a real
// HTTP client (curl), I/O driven on the test's own loop device between two
// scrapes; the counters must move by exactly what was done, and promtool
// must accept the exposition.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "cli/exporter.hpp"
#include "cli/ring_holder.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

double d(const std::string& before, const std::string& after, const std::string& series) {
  const auto a = value(before, series), b = value(after, series);
  EXPECT_TRUE(a && b) << series << " missing";
  return a && b ? *b - *a : -1;
}

// io_ticks (field 10 of /sys/block/NAME/stat), in seconds, read by the test.
double io_ticks_s(const std::string& name) {
  std::istringstream in(slurp("/sys/block/" + name + "/stat"));
  uint64_t field = 0;
  for (int i = 0; i < 10; ++i) in >> field;
  return static_cast<double>(field) / 1000;
}

// A scrape, bracketed by the device's own io_ticks read just before and after it.
struct Bracketed {
  std::string text;
  double ticks_before = 0, ticks_after = 0;
};
Bracketed scrape_between(Exporter& ex, const std::string& name) {
  Bracketed b;
  b.ticks_before = io_ticks_s(name);
  b.text = ex.scrape();
  b.ticks_after = io_ticks_s(name);
  return b;
}

TEST(Export, CountersMoveByTheIoDoneOnALoopDeviceBetweenTwoScrapes) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  const std::string dev = "device=\"" + loop.name() + "\"";
  const std::string ticks = "ioacct_device_io_ticks_seconds_total{" + dev + "}";
  Exporter ex({"--listen", "127.0.0.1:0", "--per-process", "--dev", loop.path()});
  const Bracketed b1 = scrape_between(ex, loop.name());
  const std::string& s1 = b1.text;
  ASSERT_EQ(value(s1, "ioacct_exact_busy_up"), 1.0) << "root with BTF: the tracker attaches. " << ex.err();
  // Unpaced at depth 4 the device is never idle for the run, so io_ticks
  // must move: 20,000 reads take ~80 ms here, 20 jiffies at HZ=250. 2,000
  // once fit in one jiffy on a fast host and io_ticks (a per-jiffy sample)
  // read 0; paced I/O can read 0 too (its arrivals lock to the tick).
  constexpr int n = 20000;
  const auto t0 = std::chrono::steady_clock::now();
  auto b = run_ioacct({"bench", "--ios", std::to_string(n), "--iodepth", "4", loop.path()});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const Bracketed b2 = scrape_between(ex, loop.name());
  const std::string& s2 = b2.text;
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  EXPECT_EQ(d(s1, s2, "ioacct_device_completed_ios_total{" + dev + ",direction=\"read\"}"), n);
  EXPECT_EQ(d(s1, s2, "ioacct_device_completed_ios_total{" + dev + ",direction=\"write\"}"), 0);
  EXPECT_EQ(d(s1, s2, "ioacct_device_completed_bytes_total{" + dev + ",direction=\"read\"}"), n * 4096.0);
  // io_ticks is the kernel's own, in seconds: between the device's reads
  // either side of each scrape.
  for (const Bracketed* s : {&b1, &b2}) {
    EXPECT_GE(value(s->text, ticks).value_or(-1), s->ticks_before);
    EXPECT_LE(value(s->text, ticks).value_or(-1), s->ticks_after);
  }
  EXPECT_GT(d(s1, s2, ticks), 0);
  const double busy = d(s1, s2, "ioacct_device_busy_seconds_total{" + dev + "}");
  EXPECT_GT(busy, 0);
  EXPECT_LE(busy, wall_s) << "busy time cannot exceed the time between the scrapes";
  EXPECT_GT(d(s1, s2, "ioacct_device_driver_busy_seconds_total{" + dev + "}"), 0);
  double at_depth = 0;
  for (const char* depth : {"1", "2-3", "4-7", "8-15", "16-31", "32-63", "64-127", "128-255", "256+"})
    at_depth += d(s1, s2, "ioacct_device_inflight_seconds_total{" + dev + ",depth=\"" + depth + "\"}");
  EXPECT_NEAR(at_depth, busy, 1e-6 + 1e-6 * busy) << "time at depth >= 1 is the busy time";
  EXPECT_EQ(d(s1, s2, "ioacct_device_inflight_seconds_total{" + dev + ",depth=\"8-15\"}"), 0) << "depth 4 never reaches 8";
  // Every read is seen ending (with its latency); or, when the kernel ran no
  // program for its completion, found lost afterwards (no latency to give);
  // or, when it ran none at either end (a completion in a softirq on top of
  // this sandbox's agent), counted invisible from diskstats. The three add up
  // to n (a completion whose record the logs had no room for is not seen,
  // and diskstats' count makes it invisible: docs/design.md, "Lost
  // events"). Beside a spinner, 2 runs in 24 dropped 216 and 351 records
  // (two per read with --dev): 1 in 20 had failed the exact sum before.
  // One run in ~100 read 19,999 seen and 0 invisible while busy_invisible()
  // took diskstats' latency for the longer one (it is the shorter).
  const double lost = d(s1, s2, "ioacct_device_lost_completions_total{" + dev + "}");
  const double invisible = d(s1, s2, "ioacct_device_invisible_completions_total{" + dev + "}");
  const double dropped = d(s1, s2, "ioacct_tracker_records_dropped_total");
  const double seen = d(s1, s2, "ioacct_device_seen_completions_total{" + dev + "}");
  EXPECT_EQ(d(s1, s2, "ioacct_device_request_latency_seconds_count{" + dev + "}") + lost, seen);
  EXPECT_EQ(d(s1, s2, "ioacct_device_request_latency_seconds_bucket{" + dev + ",le=\"+Inf\"}") + lost, seen);
  EXPECT_LE(lost, n / 100) << "lost completions are rare";
  EXPECT_LE(seen + invisible, n);
  EXPECT_GE(seen + invisible + dropped, n)
      << "every read was seen ending, found lost, counted invisible or dropped: the window's bound holds";
  if (invisible + dropped > 0) {
    EXPECT_GT(d(s1, s2, "ioacct_device_busy_unsure_seconds_total{" + dev + "}"), 0)
        << "the time an invisible completion may have taken is unsure";
  }
  std::printf("%d reads: %.0f lost, %.0f invisible, %.0f records dropped\n", n, lost, invisible, dropped);
  EXPECT_GT(d(s1, s2, "ioacct_device_request_latency_seconds_sum{" + dev + "}"), 0);
  const double user_cpu = d(s1, s2, "ioacct_tracker_cpu_seconds_total{part=\"user\"}");
  EXPECT_GT(user_cpu, 0) << "the tracker's own CPU is in the open";
  EXPECT_LT(user_cpu, wall_s);
  EXPECT_GE(d(s1, s2, "ioacct_tracker_completions_total") + dropped, n - lost - invisible);
  promtool_accepts(s2);

  // An SQPOLL bench: its SQ thread's counters move, its ring is there with its sizes.
  std::string a, c;
  int bench_pid = 0;
  auto sq = run_ioacct({"bench", "--sqpoll", "--size", "16m", "--runtime", "20s", "--buffered", "--iodepth", "8"},
                       {.env = {"TMPDIR=" + dir.path()},
                        .timeout_s = 60,
                        .steps = {{"ioacct bench:", [&](int pid) {
                                     bench_pid = pid;
                                     // A scrape within kRingsWalkFresh (500 ms) of the
                                     // last rings walk's start serves that walk, so each
                                     // comes later. A walk that outlasts kRingsWalkWait
                                     // (250 ms) leaves the scrape the walk before, as its
                                     // age says: beside the suite's other CPU work and
                                     // this SQ thread's spin, one was 1.37 s old, from
                                     // before the bench. So `a` is the first scrape whose
                                     // walk has the ring, `c` the first whose walk began
                                     // after `a` was served.
                                     const std::string mine = "pid=\"" + std::to_string(pid) + "\"";
                                     using Steady = std::chrono::steady_clock;
                                     const auto by = Steady::now() + std::chrono::seconds(15);
                                     do {
                                       std::this_thread::sleep_for(std::chrono::milliseconds(600));
                                       a = ex.scrape();
                                     } while (samples(a, "ioacct_sq_thread_cpu_seconds_total", mine).empty() &&
                                              Steady::now() < by);
                                     const auto a_at = Steady::now();
                                     do {
                                       std::this_thread::sleep_for(std::chrono::milliseconds(600));
                                       c = ex.scrape();
                                     } while (value(c, "ioacct_rings_walk_age_seconds").value_or(1e9) >=
                                                  std::chrono::duration<double>(Steady::now() - a_at).count() &&
                                              Steady::now() < by);
                                     kill(pid, SIGINT);
                                   }}}});
  EXPECT_EQ(sq.exit_code, 130) << sq.err;
  const std::string pid = "pid=\"" + std::to_string(bench_pid) + "\"";
  const auto cpu_a = samples(a, "ioacct_sq_thread_cpu_seconds_total", pid);
  const auto cpu_c = samples(c, "ioacct_sq_thread_cpu_seconds_total", pid);
  ASSERT_EQ(cpu_a.size(), 1u) << a;
  ASSERT_EQ(cpu_c.size(), 1u) << c;
  EXPECT_EQ(cpu_a[0].first, cpu_c[0].first) << "the same SQ thread";
  EXPECT_GT(cpu_c[0].second, cpu_a[0].second) << "a polling SQ thread's CPU counter moves";
  const auto work = samples(c, "ioacct_sq_thread_work_seconds_total", pid);
  ASSERT_EQ(work.size(), 1u);
  EXPECT_LE(work[0].second, cpu_c[0].second);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(sq.err, m, std::regex(R"(sq (\d+), cq (\d+))")));
  const auto sq_size = samples(c, "ioacct_ring_sq_entries", pid), cq_size = samples(c, "ioacct_ring_cq_entries", pid);
  ASSERT_EQ(sq_size.size(), 1u);
  ASSERT_EQ(cq_size.size(), 1u);
  EXPECT_EQ(sq_size[0].second, std::stod(m[1]));
  EXPECT_EQ(cq_size[0].second, std::stod(m[2]));
  EXPECT_EQ(samples(c, "ioacct_ring_cq_overflow", pid).size(), 1u);
  // The aggregates by ring kind, there with or without --per-process.
  EXPECT_GE(value(c, "ioacct_rings{kind=\"sqpoll\"}").value_or(0), 1);
  EXPECT_GE(value(c, "ioacct_sq_threads").value_or(0), 1);
  EXPECT_GT(*value(c, "ioacct_sq_threads_cpu_seconds_total"), *value(a, "ioacct_sq_threads_cpu_seconds_total"));
  EXPECT_GE(*value(c, "ioacct_sq_threads_cpu_seconds_total"), cpu_c[0].second) << "the sum holds this thread's";
  EXPECT_EQ(value(c, "ioacct_rings_per_process_omitted"), 0.0) << "the default limit (100) is not reached here";
  promtool_accepts(c);

  EXPECT_EQ(ex.stop(), 0) << "SIGTERM stops export cleanly " << ex.err();
}

// Found by a hostile pass: after a watched loop device was removed, export
// kept 40 of its series, the time at depth 0 still rising, and said nothing.
TEST(Export, ADeviceThatGoesAwayStopsItsSeriesAndIsNamedOnce) {
  TempDir dir;
  LoopDevice loop(dir.path());
  const std::string label = "device=\"" + loop.name() + "\"";
  Exporter ex({"--listen", "127.0.0.1:0", loop.path()});
  const std::string before = ex.scrape();
  ASSERT_EQ(value(before, "ioacct_exact_busy_up"), 1.0) << ex.err();
  EXPECT_TRUE(value(before, "ioacct_device_io_ticks_seconds_total{" + label + "}")) << before;
  EXPECT_TRUE(value(before, "ioacct_device_inflight_seconds_total{" + label + ",depth=\"0\"}")) << before;
  loop.remove();
  const std::string after = ex.scrape();
  EXPECT_EQ(after.find(label), std::string::npos) << "no series of a device that is gone:\n" << after;
  EXPECT_TRUE(value(after, "ioacct_exact_busy_up")) << after;
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the warning is printed once a second
  EXPECT_EQ(ex.scrape().find(label), std::string::npos);
  EXPECT_EQ(ex.stop(), 0) << ex.err();
  const std::string warning = "warning: " + loop.name() + " is gone (no longer in /proc/diskstats";
  EXPECT_NE(ex.err().find(warning), std::string::npos) << ex.err();
  EXPECT_EQ(ex.err().find(warning), ex.err().rfind(warning)) << "named once: " << ex.err();
}

TEST(Export, ScrapesWithinMinIntervalReuseTheLastWalk) {
  TempDir dir;
  LoopDevice loop(dir.path());
  Exporter ex({"--listen", "127.0.0.1:0", "--min-interval", "1h", "--no-bpf", loop.name()});
  const std::string s1 = ex.scrape();
  auto b = run_ioacct({"bench", "--ios", "500", "--iodepth", "4", loop.path()});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  // prometheus-cpp's own exposer_* metrics count every scrape; ioacct's must not move.
  const auto ours = [](const std::string& text) {
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("ioacct_", 0) == 0) out += line + "\n";
    return out;
  };
  EXPECT_EQ(ours(ex.scrape()), ours(s1)) << "no second walk within --min-interval";
  EXPECT_NE(ours(s1), "");
  EXPECT_EQ(value(s1, "ioacct_exact_busy_up"), 0.0) << "--no-bpf";
  EXPECT_FALSE(value(s1, "ioacct_device_busy_seconds_total{device=\"" + loop.name() + "\"}"));
  EXPECT_EQ(ex.stop(), 0);
}

// The 1 s scrape bug: with the old default (--min-interval 1s) every other
// scrape returned the previous walk. Now every scrape walks by default.
TEST(Export, EveryScrapeReadsFreshCountersByDefault) {
  TempDir dir;
  LoopDevice loop(dir.path());
  Exporter ex({"--listen", "127.0.0.1:0", "--no-bpf", loop.name()});
  const std::string reads = "ioacct_device_completed_ios_total{device=\"" + loop.name() + "\",direction=\"read\"}";
  for (int round = 0; round < 3; ++round) {
    const std::string before = ex.scrape();
    auto b = run_ioacct({"bench", "--ios", "100", "--iodepth", "1", loop.path()});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    const std::string after = ex.scrape();  // well within a second of `before`
    EXPECT_EQ(d(before, after, reads), 100) << "round " << round;
    EXPECT_GT(value(after, "ioacct_scrape_duration_seconds").value_or(-1), 0);
  }
  EXPECT_EQ(ex.stop(), 0);
}

// Issue 30: one unprivileged process with 1 SQPOLL ring and 999 plain ones
// made a scrape take 41.8 s (every plain ring's fdinfo read up to 2000
// times). The rings are now walked by a thread of export's own, which a
// scrape waits for at most 250 ms, and a walk takes about 0.1 s here with
// them. Each scrape is bounded by 1 s, as the issue asks: a timed assertion,
// which the guide otherwise avoids on this shared, noisy VM, so the bound
// is generous (four times the wait, ten times a walk).
TEST(Export, AThousandRingsOfAnotherUserDoNotHoldScrapesUp) {
  RingHolder holder(999);
  ASSERT_TRUE(holder.ready()) << holder.why();
  Exporter ex({"--listen", "127.0.0.1:0", "--no-bpf"});
  ASSERT_GT(ex.port(), 0) << ex.err();
  std::string last;
  int n = 0;
  const auto timed_scrape = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    last = ex.scrape();
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LE(took, 1.0) << "scrape " << n << " took " << took << " s";
    ++n;
  };
  // The ring families appear once the first walk is done (a scrape waits at
  // most 250 ms for it, and serves no families before it). Under ASan the
  // first walk of these 1,000 rings can take longer than that wait: once in
  // CI the first scrape came before it. Those scrapes are bounded too.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (timed_scrape(); !value(last, "ioacct_rings_walk_age_seconds"); timed_scrape())
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "no walk was served in 30 s: " << last;
  for (int i = 0; i < 5; ++i) {
    timed_scrape();
    ASSERT_TRUE(value(last, "ioacct_rings_walk_age_seconds")) << "a walk, once served, stays served: " << last;
    EXPECT_GE(*value(last, "ioacct_rings_walk_age_seconds"), 0);
    EXPECT_LE(value(last, "ioacct_rings_walk_duration_seconds").value_or(-1),
              *value(last, "ioacct_rings_walk_age_seconds"))
        << "a walk is done before it is served";
  }
  EXPECT_GE(value(last, "ioacct_rings{kind=\"syscall\"}").value_or(0), 999);
  EXPECT_GE(value(last, "ioacct_rings{kind=\"sqpoll\"}").value_or(0), 1);
  EXPECT_EQ(value(last, "ioacct_rings_unread"), 0.0) << "nothing holds these rings' locks";
  promtool_accepts(last);
  EXPECT_EQ(ex.stop(), 0) << ex.err();
}

TEST(Export, WithoutBpfPermissionServesTheRestAndSaysWhyOnce) {
  TempDir dir;
  LoopDevice loop(dir.path());
  Exporter ex({"--listen", "127.0.0.1:0", loop.path()},
              {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  const std::string s1 = ex.scrape(), s2 = ex.scrape();
  EXPECT_EQ(value(s2, "ioacct_exact_busy_up"), 0.0);
  EXPECT_TRUE(value(s2, "ioacct_device_io_ticks_seconds_total{device=\"" + loop.name() + "\"}"));
  EXPECT_TRUE(value(s2, "ioacct_device_completed_ios_total{device=\"" + loop.name() + "\",direction=\"read\"}"));
  EXPECT_FALSE(value(s2, "ioacct_device_busy_seconds_total{device=\"" + loop.name() + "\"}")) << "no number, never 0";
  EXPECT_GT(value(s2, "ioacct_rings_unreadable_processes").value_or(0), 0) << "nobody may not read pid 1's fds";
  promtool_accepts(s2);
  EXPECT_EQ(ex.stop(), 0);
  const std::string why = "no exact busy, in-flight or latency metrics: no permission";
  const size_t at = ex.err().find(why);
  EXPECT_NE(at, std::string::npos) << ex.err();
  EXPECT_EQ(ex.err().find(why, at + 1), std::string::npos) << "said once";
}

TEST(Export, RejectsBadListenAddressesAndABusyPort) {
  for (const char* bad : {"9464", "localhost:9464", "127.0.0.1:", "127.0.0.1:70000", "127.0.0.1:x", "::1:9464"}) {
    auto o = run_ioacct({"export", "--listen", bad, "--no-bpf"});
    EXPECT_EQ(o.exit_code, 2) << bad << " " << o.err;
    EXPECT_EQ(o.err.rfind("error: --listen: ", 0), 0u) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  }
  auto o = run_ioacct({"export", "--min-interval", "5", "--no-bpf"});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_EQ(o.err.rfind("error: --min-interval: ", 0), 0u) << o.err;
  // A port someone else holds.
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(s, 1), 0);
  socklen_t len = sizeof addr;
  getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string busy = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  o = run_ioacct({"export", "--listen", busy, "--no-bpf"});
  close(s);
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(o.err.rfind("error: --listen: cannot listen on " + busy, 0), 0u) << o.err;
  EXPECT_NE(o.err.find("in use"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

// Issue 19: "null context ... (is the port in use?)" for what was EACCES.
TEST(Export, APrivilegedPortWithoutTheCapabilitySaysPermissionDenied) {
  const std::string start = sh("cat /proc/sys/net/ipv4/ip_unprivileged_port_start");
  if (std::stoi(start) <= 80) GTEST_SKIP() << "net.ipv4.ip_unprivileged_port_start is " << start << ": port 80 is not privileged here";
  auto o = run_ioacct({"export", "--listen", "127.0.0.1:80", "--no-bpf"},
                      {.prefix = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(o.err.rfind("error: --listen: cannot listen on 127.0.0.1:80: permission denied: ports below " + start, 0), 0u)
      << o.err;
  EXPECT_NE(o.err.find("CAP_NET_BIND_SERVICE"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

}  // namespace
}  // namespace ioacct::test
