// `ioacct stat`'s exact busy time against an independent witness: the same
// tracepoints recorded through tracefs and their union computed here. Every
// window holds its stated bound: busy <= truth <= busy + unsure.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/block_trace.hpp"
#include "cli/churn.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

struct Window {
  nlohmann::json row;  // the device's entry in one of stat's reports
  double interval_s = 0;  // the report's own interval: the iostat figures' (r_s, r_await_ms)
  uint64_t trace_union_ns = 0;
  uint64_t trace_starts = 0, trace_dones = 0;  // inside the window
  uint64_t trace_inflight_at_start = 0;         // requests in flight as it opened
};

struct WatchOptions {
  std::string interval = "2";
  int count = 1;
  std::vector<std::string> stat_flags;
  std::vector<std::string> stat_env;  // "NAME=value" for stat only
  // Before stat attaches (the trace is already recording): start the
  // workload now and give it this long, so that stat attaches mid-flight.
  double workload_first_s = -1;
};

// Runs `ioacct stat --format json -y INTERVAL COUNT DEV` and the bench
// `workload` on the same loop device (once stat has attached, unless
// workload_first_s says otherwise); the trace records both. Returns each
// report's row with the trace's union over the report's own window.
std::vector<Window> watch(const LoopDevice& loop, const std::vector<std::string>& workload,
                          const WatchOptions& w = {}) {
  struct stat st {};
  EXPECT_EQ(::stat(loop.path().c_str(), &st), 0);
  // The trace starts before stat attaches and before the workload, so that
  // it sees every request's start, and its probe runs first on each
  // tracepoint (its stamps lead the tracker's by the same few instructions
  // at both edges).
  auto trace = std::make_unique<BlockTrace>(major(st.st_rdev), minor(st.st_rdev));
  std::thread bench;
  Outcome bench_out;
  auto start_bench = [&] { bench = std::thread([&] { bench_out = run_ioacct(workload); }); };
  RunOptions opts;
  opts.env = w.stat_env;
  opts.action_after = "exact busy time from";
  bool attached = false;
  opts.action = [&] {
    attached = true;
    if (w.workload_first_s < 0) start_bench();
  };
  if (w.workload_first_s >= 0) {
    // The bench's set-up (its checks of the target, the ring) can take over a
    // second on a loaded 2-CPU VM (twice in 20 runs the attach then came
    // before any I/O): wait until the device holds requests, then this long.
    start_bench();
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (sh("cat /sys/block/" + loop.name() + "/inflight | awk '{print $1 + $2}'") == "0" &&
           std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::duration<double>(w.workload_first_s));
  }
  std::vector<std::string> stat_args = {"stat", "--format", "json", "-y", w.interval, std::to_string(w.count),
                                        loop.name()};
  stat_args.insert(stat_args.begin() + 1, w.stat_flags.begin(), w.stat_flags.end());
  Outcome o = run_ioacct(stat_args, opts);
  if (bench.joinable()) bench.join();
  if (!attached) {
    ADD_FAILURE() << "stat never attached: " << o.err;
    return {};
  }
  const auto events = trace->stop();
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(bench_out.exit_code, 0) << bench_out.err;
  std::vector<Window> out;
  if (o.exit_code != 0) return out;
  std::istringstream in(o.out);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["exact_source"], "block_io_start/block_io_done");
    Window x;
    x.row = j["devices"].at(0);
    x.interval_s = j["interval_s"].get<double>();
    EXPECT_EQ(x.row["device"], loop.name());
    const uint64_t from = x.row["window_start_ns"], to = x.row["window_end_ns"];
    x.trace_union_ns = trace_union_ns(events, from, to);
    x.trace_inflight_at_start = trace_inflight_at(events, from);
    for (const auto& e : events)
      if (e.t_ns >= from && e.t_ns <= to) ++(e.start ? x.trace_starts : x.trace_dones);
    out.push_back(x);
  }
  EXPECT_EQ(out.size(), static_cast<size_t>(w.count)) << o.out;
  return out;
}

void report(const std::string& what, const Window& w) {
  const double window = w.row["window_ns"].get<double>();
  const double exact = 100.0 * static_cast<double>(w.trace_union_ns) / window;
  const double util = w.row["util_pct"].get<double>();
  std::cout << what << ": busy% " << w.row["busy_pct"].dump() << " (+ unsure " << w.row["busy_unsure_pct"].dump()
            << "), trace union " << exact << "%, io_ticks %util " << util << " (off by " << util - exact
            << " points); requests started " << w.row["requests_started"] << ", done " << w.row["requests_done"]
            << ", lost " << w.row["completions_lost"] << ", start unseen " << w.row["starts_unseen"]
            << "; the trace saw " << w.trace_starts << " starts, " << w.trace_dones << " dones; in flight "
            << w.row["inflight_pct"].dump() << "; invalid " << w.row["exact_invalid"].dump() << "\n";
  ::testing::Test::RecordProperty(what + "_util_pct", std::to_string(util));
  ::testing::Test::RecordProperty(what + "_exact_pct", std::to_string(exact));
}

// The tolerance: the union lies in [busy, busy + unsure], each end
// within max(2% relative, 2 µs per request): two probes on one tracepoint
// cannot both run first, and tracefs stamps in µs. No window is invalid:
// every loss the tracker meets is bounded as unsure (docs/design.md, "What
// each figure bounds").
void holds_its_bound(const Window& w, double per_request_ns = 2000) {
  ASSERT_TRUE(w.row["exact_invalid"].is_null()) << w.row;
  ASSERT_TRUE(w.row["busy_ns"].is_number()) << w.row;
  const double truth = static_cast<double>(w.trace_union_ns);
  const double busy = w.row["busy_ns"].get<double>(), unsure = w.row["busy_unsure_ns"].get<double>();
  const double tol = std::max(0.02 * truth, per_request_ns * w.row["requests_done"].get<double>());
  EXPECT_GE(truth, busy - tol) << "busy is a lower bound of the trace-derived union: " << w.row;
  EXPECT_LE(truth, busy + unsure + tol) << "busy + unsure is an upper bound of it: " << w.row;
}

// The acceptance test, paced reads at depth 1 on a loop device that
// reaches the disk (direct I/O over a file with real data: 0.1-1 ms each).
TEST(StatExact, PacedReadsMatchTheTraceUnion) {
  for (const char* rate : {"250", "500"}) {
    SCOPED_TRACE(std::string("--rate-iops ") + rate);
    TempDir dir;
    LoopDevice loop(dir.path(), {.random_data = true});
    sh("losetup --direct-io=on " + loop.path());
    const auto ws = watch(loop, {"bench", "--rate-iops", rate, "--iodepth", "1", "--runtime", "3s", loop.path()});
    if (ws.empty()) continue;
    const Window& w = ws[0];
    report(std::string("rate_") + rate, w);
    ASSERT_GT(w.row["requests_done"].get<uint64_t>(), 100u) << "the paced reads ran inside the window";
    holds_its_bound(w);
    // Every request that started in the window (the device was idle when it
    // opened) ended, was found lost, or is still in flight at its end.
    EXPECT_EQ(w.row["requests_started"].get<uint64_t>(),
              w.row["requests_done"].get<uint64_t>() + w.row["completions_lost"].get<uint64_t>() +
                  w.row["requests_in_flight"].get<uint64_t>());
    // The queue is known from the attach (TheFirstRequestOnAnIdleDeviceIsSeenInFlight):
    // the first request is swept like the rest. Found only from the first
    // completion, a round inside a slow first request counted it unseen (once,
    // under ASan beside a spinner: 9 ms unsure, which the trace saw busy).
    EXPECT_EQ(w.row["starts_unseen"], 0u) << "nothing was in flight when stat attached";
    EXPECT_TRUE(w.row["dev_pct"].is_null()) << "dev% is opt-in (--dev)";
  }
}

TEST(StatExact, ConcurrentRequestsFromTwoThreadsSurvive) {
  TempDir dir;
  LoopDevice loop(dir.path());
  // 128 KiB reads keep the event rate (and the trace) modest while 2 x 16 in
  // flight start and complete on both CPUs at once. No record is dropped:
  // ~72k completions a second fill a CPU's log in ~57 ms, and the reader
  // looks at least every 20 ms, however quiet the logs were when it last
  // looked (it once waited 100 ms after attaching before any I/O and dropped
  // 1,000-1,800 records in 2 of 4 runs beside a compiler), and from a rate
  // that a read's own collect cannot make look slower than it is.
  const auto ws = watch(loop, {"bench", "--threads", "2", "--iodepth", "16", "--bs", "128k", "--runtime", "3s",
                               loop.path()});
  ASSERT_EQ(ws.size(), 1u);
  const Window& w = ws[0];
  report("threads_2_depth_16", w);
  holds_its_bound(w);
  EXPECT_EQ(w.row["records_dropped"], 0u) << "the logs never fill";
  const double busy = w.row["busy_ns"].get<double>(), window = w.row["window_ns"].get<double>();
  double sum = 0, deep = 0;
  for (const auto& [k, v] : w.row["inflight_pct"].items()) {
    sum += v.get<double>();
    if (k != "0" && k != "1") deep += v.get<double>();
  }
  EXPECT_NEAR(sum, 100.0, 1e-6) << "the in-flight distribution covers the window";
  EXPECT_GT(deep, 1.0) << "two threads at depth 16 had more than one request in flight";
  EXPECT_NEAR(w.row["inflight_pct"]["0"].get<double>(), 100.0 * (1 - busy / window), 1e-6)
      << "time at depth 0 is the complement of busy";
  EXPECT_EQ(w.row["inflight_pct"]["64-127"], 0.0) << "32 in flight at most";
}

// dev% is opt-in: one more tracepoint (with a clock read) per I/O. Without
// --dev it is not a number; with it, it lies inside busy%.
TEST(StatExact, DevPctIsOptIn) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  sh("losetup --direct-io=on " + loop.path());
  const auto ws = watch(loop, {"bench", "--rate-iops", "500", "--iodepth", "1", "--runtime", "2s", loop.path()},
                        {.interval = "1", .stat_flags = {"--dev"}});
  ASSERT_EQ(ws.size(), 1u);
  const Window& w = ws[0];
  report("dev", w);
  ASSERT_GT(w.row["requests_done"].get<uint64_t>(), 100u);
  holds_its_bound(w);
  ASSERT_FALSE(w.row["dev_pct"].is_null()) << w.row;
  EXPECT_GT(w.row["dev_busy_ns"].get<double>(), 0.0);
  EXPECT_LE(w.row["dev_busy_ns"].get<double>(), w.row["busy_ns"].get<double>() + w.row["busy_unsure_ns"].get<double>())
      << "issue..done lies inside start..done";
}

// Nothing stays "in flight" once the device is idle again: every request the
// tracker counted was also seen ending. Reads through a direct-I/O loop
// device complete in interrupts, and the block layer makes requests of its
// own (passthrough, flushes).
TEST(StatExact, AnIdleDeviceIsIdleAgainAfterABurst) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  sh("losetup --direct-io=on " + loop.path());
  std::thread bench;
  Outcome bench_out;
  RunOptions opts;
  opts.action_after = "exact busy time from";
  opts.action = [&] {
    bench = std::thread([&] {
      bench_out = run_ioacct({"bench", "--format", "json", "--rw", "randrw", "--rate-iops", "1000", "--iodepth", "2",
                              "--runtime", "1s", "--destroy-data", loop.path()});
    });
  };
  const auto o = run_ioacct({"stat", "--format", "json", "-y", "2", "2", loop.name()}, opts);
  if (bench.joinable()) bench.join();
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_EQ(bench_out.exit_code, 0) << bench_out.err;
  std::istringstream in(o.out);
  std::vector<nlohmann::json> rows;
  for (std::string l; std::getline(in, l);) rows.push_back(nlohmann::json::parse(l)["devices"].at(0));
  ASSERT_EQ(rows.size(), 2u);
  // The burst ran in the first interval: every I/O of it ended there, as a
  // request or merged into one. Held to the bench's own count, not to its
  // rate: in one CI run, beside the ASan build writing to the same disk,
  // the paced writes through the loop device managed 99 I/Os of 1000.
  const uint64_t ios = nlohmann::json::parse(bench_out.out)["results"]["ios"].get<uint64_t>();
  EXPECT_GT(ios, 0u);
  EXPECT_GE(rows[0]["requests_done"].get<uint64_t>() + rows[0]["requests_merged"].get<uint64_t>(), ios)
      << "the burst ran in the first interval";
  EXPECT_EQ(rows[1]["requests_started"], 0u) << "nothing ran in the second";
  EXPECT_EQ(rows[1]["requests_in_flight"], 0u);
  EXPECT_EQ(rows[1]["busy_pct"], 0.0) << "an idle device reads idle";
  EXPECT_EQ(rows[1]["busy_unsure_pct"], 0.0) << "and is sure of it";
}

// The first request on a device idle at the attach is seen in flight like
// every other. The tracker finds the device's queue from its file at the
// attach; before, only the device's first completion named it, and until
// then the sweep could not see a request of it: a round between two reads
// (those compare no count) counted its time idle, and a read bounded it
// with unsure time only from that round on (busy 0% + unsure 9.9% in a
// window the trace saw 58% busy). A write that cannot complete holds it in
// flight: the loop device's backing file lies on a frozen file system.
TEST(StatExact, TheFirstRequestOnAnIdleDeviceIsSeenInFlight) {
  TempDir dir;
  LoopDevice lower(dir.path());
  sh("mkfs.ext4 -q " + lower.path());
  const std::string mnt = dir.path() + "/mnt";
  sh("mkdir " + mnt);
  Mount mount(lower.path(), mnt);
  sh("head -c 16m /dev/urandom > " + mnt + "/upper.img");
  LoopDevice loop(dir.path(), {.backing = mnt + "/upper.img"});  // buffered: its writes wait for the thaw
  struct Thaw {
    std::string mnt;
    ~Thaw() { std::system(("fsfreeze -u " + mnt + " 2>/dev/null").c_str()); }
  } thaw{mnt};
  struct stat st {};
  ASSERT_EQ(::stat(loop.path().c_str(), &st), 0);
  BlockTrace trace(major(st.st_rdev), minor(st.st_rdev));
  std::thread writer, freezer;
  RunOptions opts;
  opts.action_after = "exact busy time from";
  opts.action = [&] {
    freezer = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1300));
      sh("fsfreeze -f " + mnt);
      writer = std::thread([&] { sh("dd if=/dev/zero of=" + loop.path() + " bs=4k count=1 oflag=direct status=none"); });
      std::this_thread::sleep_for(std::chrono::milliseconds(1200));
      sh("fsfreeze -u " + mnt);
    });
  };
  const auto o = run_ioacct({"stat", "--format", "json", "-y", "1", "3", loop.name()}, opts);
  if (freezer.joinable()) freezer.join();
  if (writer.joinable()) writer.join();
  const auto events = trace.stop();
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::istringstream in(o.out);
  int stuck = 0;
  for (std::string l; std::getline(in, l);) {
    Window w;
    w.row = nlohmann::json::parse(l)["devices"].at(0);
    const uint64_t from = w.row["window_start_ns"], to = w.row["window_end_ns"];
    w.trace_union_ns = trace_union_ns(events, from, to);
    report("window", w);
    holds_its_bound(w);
    EXPECT_EQ(w.row["starts_unseen"], 0u) << "the sweep saw it from its start";
    if (trace_inflight_at(events, to) == 1) {
      ++stuck;
      EXPECT_EQ(w.row["requests_in_flight"], 1u) << "in flight at the window's end: " << w.row;
      EXPECT_EQ(w.row["busy_unsure_ns"], 0u) << "its time is certain: " << w.row;
    }
  }
  EXPECT_GE(stuck, 1) << "the write was in flight at a window's end";
}

// The second test: the paced witness comparison while a helper
// process attaches and detaches programs on block_io_start, block_io_done,
// block_rq_issue and block_rq_complete as fast as it can. Every window holds
// its bound. The witness is itself one more observer:
// while probes come and go the kernel patches its text, and the IPIs that
// does can land between two probes of one tracepoint, so two observers of
// the same event disagree by up to tens of µs (measured here: p99 3 µs, max
// 58 µs between tracefs's stamp of block_io_start and the kernel's own start
// stamp; docs/design.md, "What the witness sees"). The tolerance per request
// is 20 µs instead of 2. A second witness, diskstats' own latency sum, comes
// from the kernel's stamps, which no IPI moves; ours can be moved the same
// way (one landing between the kernel's stamp and our program's clock read),
// so it gets the same 20 µs per request, on a far tighter base.
TEST(StatExact, BoundHoldsWhileOtherProgramsComeAndGo) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  sh("losetup --direct-io=on " + loop.path());
  ProbeChurn churn({"block_io_start", "block_io_done", "block_rq_issue", "block_rq_complete"});
  ASSERT_TRUE(churn.running()) << churn.error();
  // A window with a request in flight at either edge is not held to
  // diskstats (below), and at 500/s the loop device is busy ~25% of the
  // time: with five windows after the first, none was checkable in 1 run of
  // 20. At 400/s and eight, about 1 in 7,000.
  const auto ws = watch(loop, {"bench", "--rate-iops", "400", "--iodepth", "1", "--runtime", "10s", loop.path()},
                        {.interval = "1", .count = 9});
  const uint64_t cycles = churn.stop();
  std::cout << "the helper attached and detached its programs " << cycles << " times\n";
  EXPECT_GT(cycles, 20u) << "the helper really churned the tracepoints";
  int kernel_checked = 0;
  uint64_t done = 0;
  for (size_t i = 0; i < ws.size(); ++i) {
    SCOPED_TRACE("report " + std::to_string(i));
    report("churn_" + std::to_string(i), ws[i]);
    done += ws[i].row["requests_done"].get<uint64_t>();
    // 20 µs per request: every attach and detach patches the kernel's text
    // (IPIs to every CPU), and one landing between the tracefs probe and the
    // kernel's own stamp puts the witness's edge tens of µs from the
    // tracker's (docs/design.md).
    holds_its_bound(ws[i], 20'000);
    if (::testing::Test::HasFatalFailure()) continue;
    // diskstats' latency of the requests done in the window: the same start
    // stamp, and the completion's own clock read just before the done
    // program's. Its samples are taken just before the tracker's reads, so
    // the windows after the first share their edges; the first one's
    // diskstats baseline is stat's start, before the attach and its settling.
    // At depth 1 the union is the latencies' sum. A request in flight at an
    // edge counts whole in diskstats' window of its end but is split at the
    // edge by the tracker (a loop device over a file on vda takes ms at
    // times), so such windows are left out; a request can still end between
    // diskstats' sample and the tracker's read, and the field is in whole
    // ms: 2 ms. And 20 µs per request for the churn's IPIs between the
    // kernel's stamps and ours (an ASan run once read busy 4.6% above it:
    // 8 µs per request over 503).
    if (i == 0) continue;
    const nlohmann::json& r = ws[i].row;
    const bool edge_in_flight =
        ws[i - 1].row["requests_in_flight"].get<uint64_t>() != 0 || r["requests_in_flight"].get<uint64_t>() != 0;
    if (edge_in_flight) continue;
    // At depth 1 two requests still overlap for a few µs now and then: the
    // kernel ends the bio (and io_uring wakes the bench, which submits the
    // next read on the other CPU) before it accounts the request's end and
    // runs the done program. The latency sum counts such an overlap twice,
    // the union once: CI saw 0.01-0.24% of a window at depth 2-3, every
    // window. More than 1% is not this, and leaves the window out.
    double overlap_ns = 0, deeper_pct = 0;
    for (const auto& [bucket, pct] : r["inflight_pct"].items()) {
      if (bucket == "0" || bucket == "1" || pct.get<double>() == 0) continue;
      const auto dash = bucket.find('-');  // "2-3": up to 3 at once, 2 more than the union counts
      deeper_pct += dash == std::string::npos ? 100 : pct.get<double>();  // "256+": not this
      if (dash == std::string::npos) continue;
      overlap_ns += pct.get<double>() / 100 * ws[i].interval_s * 1e9 * (std::stod(bucket.substr(dash + 1)) - 1);
    }
    if (deeper_pct > 1) continue;
    // Over the report's own interval, r_s times it is the reads diskstats
    // counted, so this is diskstats' latency field itself (ms).
    const double kernel = 1e6 * ws[i].interval_s *
                          (r["r_await_ms"].get<double>() * r["r_s"].get<double>() +
                           r["w_await_ms"].get<double>() * r["w_s"].get<double>());
    const double busy = r["busy_ns"].get<double>(), unsure = r["busy_unsure_ns"].get<double>();
    const double tol = 0.02 * kernel + 2e6 + 20e3 * r["requests_done"].get<double>();
    std::cout << "  diskstats' latency sum " << kernel / 1e6 << " ms, busy " << busy / 1e6 << " ms (+ unsure "
              << unsure / 1e6 << ")\n";
    EXPECT_GE(kernel, busy - tol) << "diskstats' latency sum against busy: " << r;
    EXPECT_LE(kernel, busy + unsure + overlap_ns + tol) << "diskstats' latency sum against busy + unsure: " << r;
    ++kernel_checked;
  }
  EXPECT_GT(kernel_checked, 0) << "a window after the first was held to diskstats' own latency sum";
  // Slower than 400/s: every detach waits for RCU and patches the kernel's text.
  EXPECT_GT(done, 300u) << "the reads ran through the windows";
}

// Completions no program saw: the kernel skips a run now and then (docs/
// design.md, "Lost events"), too seldom to test on purpose, so the done
// program is told to skip one in 8 (IOACCT_TEST_SKIP_DONE). Those that
// started and ended between two sweeps leave nothing but diskstats' counts
// (completions_invisible); those a sweep saw in flight are found gone
// (completions_lost). Either way the tracefs witness, which saw them all,
// must lie inside [busy, busy + unsure], and unsure must stay a bound, not
// the whole idle time.
TEST(StatExact, BoundHoldsForCompletionsNoProgramSaw) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  sh("losetup --direct-io=on " + loop.path());
  const auto ws = watch(loop, {"bench", "--rate-iops", "2000", "--iodepth", "2", "--runtime", "3s", loop.path()},
                        {.interval = "1", .count = 2, .stat_env = {"IOACCT_TEST_SKIP_DONE=8"}});
  ASSERT_EQ(ws.size(), 2u);
  for (size_t i = 0; i < ws.size(); ++i) {
    SCOPED_TRACE("report " + std::to_string(i));
    const Window& w = ws[i];
    report("skip_" + std::to_string(i), w);
    holds_its_bound(w);
    if (::testing::Test::HasFatalFailure()) return;
    const double done = w.row["requests_done"].get<double>();
    const double unseen = w.row["completions_invisible"].get<double>() + w.row["completions_lost"].get<double>();
    // Enough completions to tell the hook's 1 in 8 from the bound below (1
    // in 16): at 300, 37.5 are expected unseen, with a standard deviation of
    // 5.7, and the bound (18.75) lies 3.3 of them below. The paced bench
    // drops what it is late for, never bursts, so on a loaded VM (load 8)
    // it managed 360-590 reads a second of its 2000, and its set-up once
    // took 0.7 s of the first window (473 reads).
    ASSERT_GT(done, 300.0) << "the reads ran through the window";
    EXPECT_GT(unseen, done / 16) << "about one completion in 8 went unlogged, and the tracker noticed";
    EXPECT_LT(done, 0.95 * static_cast<double>(w.trace_dones)) << "the hook really kept records back";
    const double unsure = w.row["busy_unsure_ns"].get<double>(), window = w.row["window_ns"].get<double>();
    EXPECT_GT(unsure, 0.0);
    EXPECT_LT(unsure, 0.5 * (window - w.row["busy_ns"].get<double>()))
        << "the bound is diskstats' latencies of what went unseen, not all the window's idle time";
  }
}

// A device with a write-back cache (a loop device has one) counts each
// flush in diskstats' flush field from the flush machinery's own request
// (blk_account_io_flush), which passes no tracepoint: no program could see
// it end, so it is no invisible completion. Before, every fdatasync here
// read as one (50 dsync writes on vda: 50 invisible, 11 ms of 18 unsure).
TEST(StatExact, FlushesAreNoInvisibleCompletions) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  ASSERT_EQ(sh("cat /sys/block/" + loop.name() + "/queue/write_cache"), "write back");
  const auto flushes = [&] { return std::stoull(sh("awk '{print $16}' /sys/block/" + loop.name() + "/stat")); };
  const uint64_t before = flushes();
  const auto ws = watch(loop,
                        {"bench", "--rw", "randwrite", "--destroy-data", "--fdatasync", "1", "--iodepth", "1",
                         "--rate-iops", "200", "--runtime", "3s", loop.path()},
                        {.interval = "2", .count = 1});
  ASSERT_EQ(ws.size(), 1u);
  const Window& w = ws[0];
  report("flush", w);
  holds_its_bound(w);
  const uint64_t flushed = flushes() - before;
  EXPECT_GT(flushed, 100u) << "each fdatasync flushed the device's cache";
  // A completion the kernel ran no program for (docs/design.md, "Lost
  // events") is invisible indeed, and rare; every flush was one before.
  EXPECT_LE(w.row["completions_invisible"].get<double>(), static_cast<double>(flushed) / 20)
      << flushed << " flushes: " << w.row;
  std::cout << flushed << " flushes, " << w.row["completions_invisible"] << " invisible, "
            << w.row["busy_unsure_ns"] << " ns unsure\n";
}

// A struct taken again holds its last request's stamp until blk_account_io_
// start stamps the new one, just after flagging it accounted: a sweep that
// looks between the two stores reads the old stamp on a held, accounted
// struct (3 phantom requests, each "lost", in one CI run of 256 devices).
// The race is nanoseconds wide, so the sweep is told to read every free
// struct whose last request a program saw end as held
// (IOACCT_TEST_STALE_SWEEP). A struct whose last request the reader saw end
// is no request in flight; one taken for a phantom would be busy until the
// struct is taken again, and lost then (with that rule off: lost 618 of 775
// and busy 84% against the trace's 13%).
//
// This test failed about 1 run in 4 on a busy 2-CPU VM, for two reasons,
// both fixed where they arose, so neither can come back through timing:
// - The reader applied a batch's completions in CPU order. A request found
//   in flight by one round's sweep, ending on CPU 0, and its struct's next
//   request, ending on CPU 1 before the next round, came newest first: the
//   newer stamp read as "the known request ended unseen" (1 lost, 1 start
//   counted twice). The reader now applies every batch in time order
//   (busy_tracker.cpp, drain()).
// - The hook read as held a free struct whose completion no program saw
//   (this VM runs no BPF program on top of some tasks: docs/design.md,
//   "Lost events"), a phantom busy until the struct was taken again (busy
//   41-71% against 6-9%). The race needs a struct whose last end the reader
//   saw, so the hook now marks what it reads and the reader takes only those.
// The count bound is what the rule needs, not what the pacer reaches: a
// CPU-starved pacer gave 478-606 requests a second, and 100 in a window
// already give lost in the hundreds with the rule off.
TEST(StatExact, AStructTakenAgainBeforeItsStampIsNoRequest) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  const auto ws = watch(loop, {"bench", "--rate-iops", "1000", "--iodepth", "2", "--runtime", "3s", loop.path()},
                        {.interval = "1", .count = 2, .stat_env = {"IOACCT_TEST_STALE_SWEEP=1"}});
  ASSERT_EQ(ws.size(), 2u);
  for (size_t i = 0; i < ws.size(); ++i) {
    SCOPED_TRACE("report " + std::to_string(i));
    const Window& w = ws[i];
    report("stale_" + std::to_string(i), w);
    holds_its_bound(w);
    EXPECT_GT(w.row["requests_done"].get<double>(), 100.0) << "the reads ran through the window";
    EXPECT_LE(w.row["completions_lost"].get<uint64_t>(), 1u) << w.row;
    EXPECT_EQ(w.row["starts_unseen"].get<uint64_t>(), 0u) << w.row;
  }
}

// A tracker started while I/O is already in flight at depth 16 is right from
// its first full window: attach waits until the requests from before it
// have left (docs/design.md, "Attach"). 256 KiB reads keep the depth with
// some 10-20k requests a second: 4 KiB ones ran at 110-170k a second on a
// quiet 2-CPU machine, beyond what the logs hold between the reader's turns
// there (the windows then say they cannot be sure: records_dropped and a
// wide busy_unsure; docs/design.md, "Lost events").
TEST(StatExact, StartedMidFlightIsRightFromItsFirstWindow) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  sh("losetup --direct-io=on " + loop.path());
  // What is tested needs requests in flight at the instant the first window
  // opens. A CPU-starved bench leaves the device idle for a sixth of the time
  // (16% at depth 0 with a spinner and clang-tidy on both CPUs), so a window
  // can open in a gap: that run tested nothing, and the scenario runs again
  // (at most 3 times; each run's windows hold their bound all the same).
  std::vector<Window> ws;
  for (int attempt = 0; attempt < 3; ++attempt) {
    ws = watch(loop, {"bench", "--iodepth", "16", "--bs", "256k", "--submit-batch", "1", "--complete-batch", "1",
                      "--runtime", "4s", loop.path()},
               {.interval = "1", .count = 2, .workload_first_s = 0.5});
    ASSERT_EQ(ws.size(), 2u);
    if (ws[0].trace_inflight_at_start >= 8) break;
    for (const Window& w : ws) holds_its_bound(w);
  }
  for (size_t i = 0; i < ws.size(); ++i) {
    SCOPED_TRACE("report " + std::to_string(i));
    report("mid_flight_" + std::to_string(i), ws[i]);
    holds_its_bound(ws[i]);
    EXPECT_GT(ws[i].row["requests_done"].get<uint64_t>(), 100u) << "the reads ran through the window";
  }
  // The attach settles: every request in flight when the first window opens
  // is known from its own stamp. One can still carry a stamp from before the
  // attach and become visible (block_io_start, RQF_IO_STAT) only after the
  // settle's last sweep, when its submitter is preempted inside its plug,
  // whose cached clock a preemption leaves in place (seen once in CI: 1.8 ms).
  // stat counts that time in late_ns and says so, and the bound above holds
  // either way; the bench's one thread holds at most one such request. A
  // settle that did not work would miss every request in flight at the
  // attach, each for its age (tens of ms at this depth).
  ASSERT_GE(ws[0].trace_inflight_at_start, 8u) << "the attach came with I/O in flight";
  EXPECT_LE(ws[0].row["late_ns"].get<uint64_t>(), 10'000'000u)
      << "from before the attach, at most one request's preemption reached into the first window ("
      << ws[0].row["starts_unseen"] << " starts unseen)";
}

// The programs are gone after every way out: COUNT reached, Ctrl-C, SIGTERM.
TEST(StatExact, DetachesOnEveryExit) {
  TempDir dir;
  LoopDevice loop(dir.path());
  for (int sig : {0, SIGINT, SIGTERM}) {
    SCOPED_TRACE("signal " + std::to_string(sig));
    std::string ids;
    RunOptions opts;
    opts.action_after = "exact busy time from";
    opts.action_pid = [&](int pid) {
      // The programs this process holds: each BPF fd's fdinfo names its prog_id.
      ids = sh("cat /proc/" + std::to_string(pid) + "/fdinfo/* 2>/dev/null | awk '/^prog_id:/ {print $2}' | sort -u");
    };
    if (sig) {
      opts.signal = sig;
      opts.signal_after = "exact busy time from";
      opts.signal_delay_s = 0.3;
    }
    const std::vector<std::string> args = sig ? std::vector<std::string>{"stat", "-y", "1", loop.name()}
                                              : std::vector<std::string>{"stat", "-y", "1", "2", loop.name()};
    const auto o = run_ioacct(args, opts);
    EXPECT_EQ(o.exit_code, sig ? 128 + sig : 0) << o.err;
    EXPECT_FALSE(ids.empty()) << "the programs were loaded while stat ran";
    // The kernel frees a detached tracing program after an RCU grace period,
    // a few ms after the last fd closed: wait for that (generously), then check.
    const auto loaded = [&] {
      std::istringstream in(ids);
      std::string still;
      for (std::string id; in >> id;)
        if (std::system(("bpftool prog show id " + id + " >/dev/null 2>&1").c_str()) == 0) still += id + " ";
      return still;
    };
    std::string still = loaded();
    for (int i = 0; i < 300 && !still.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      still = loaded();
    }
    EXPECT_EQ(still, "") << "programs still loaded 30 s after stat exited";
  }
}

}  // namespace
}  // namespace ioacct::test
