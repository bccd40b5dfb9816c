// Depth N means N requests in flight at the device, not N submitted and then
// drained: proved with the block layer's own record of each request
// (block_rq_issue/block_rq_complete through tracefs), not with what ioacct
// counts itself.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "cli/block_trace.hpp"
#include "cli/run_binary.hpp"
#include "cli/spinner.hpp"
#include "common/files.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

// What the witness saw over the middle of a run.
struct DeviceDepth {
  double busy_mean = 0;  // mean requests in flight while at least one was
  double near_full = 0;  // share of that time with at least 3/4 of the depth in flight
  size_t events = 0;
  // Over the middle: requests started, and how often the device went from
  // 3/4 of the depth in flight down to at most one (its queue drained).
  size_t started = 0, drains = 0;
};

// A loop device whose backing file is read through the page cache (no direct
// I/O) and dropped from it before each run: the loop driver then serves one
// request at a time, each with a disk read, so completions come one by one
// and a queue that is not refilled at once drains where the trace can see it.
class SerialDevice {
 public:
  SerialDevice() : loop_(dir_.path(), {.size = "64m", .random_data = true}) {
    backing_ = read_first_line("/sys/block/" + loop_.name() + "/loop/backing_file");
    struct stat st {};
    EXPECT_EQ(stat(loop_.path().c_str(), &st), 0);
    major_ = major(st.st_rdev);
    minor_ = minor(st.st_rdev);
  }

  // Runs `ioacct bench` with `extra` at `depth` and returns the device's depth.
  DeviceDepth run(unsigned depth, const std::vector<std::string>& extra, json* report = nullptr) {
    const int fd = open(backing_.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0) << backing_;
    // The file was just written: its dirty pages would survive the drop and
    // serve some reads from memory, in bursts the refill cannot keep up with.
    EXPECT_EQ(fdatasync(fd), 0);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // every read goes to the disk again
    close(fd);
    BlockTrace trace(major_, minor_, BlockTrace::Span::Device);
    // 64 KiB reads: fewer requests a second, so less tracing on the two CPUs
    // the bench and the loop worker need. The default's mean read 27.9-31.4
    // at 4 KiB over some minutes, 29.2-31.6 at 64 and 128 KiB.
    std::vector<std::string> args = {"bench", "--format", "json", "--runtime", "1s", "--bs", "64k",
                                     "--iodepth", std::to_string(depth)};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(loop_.path());
    const Outcome o = run_ioacct(args);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    if (report && o.exit_code == 0) *report = stdout_json(o);
    const auto events = trace.stop();
    DeviceDepth d;
    d.events = events.size();
    if (events.size() < 200) return d;
    // The middle of the run: the first and last 100 ms hold the start and the drain.
    const uint64_t from = events.front().t_ns + 100'000'000, to = events.back().t_ns - 100'000'000;
    const std::vector<uint64_t> at = trace_depth_ns(events, from, to);
    size_t count = 0;
    bool high = false;
    for (const auto& e : events) {
      count = e.start ? count + 1 : count ? count - 1 : 0;
      if (e.t_ns < from || e.t_ns > to) continue;
      d.started += e.start;
      if (4 * count >= 3 * depth) high = true;
      if (high && count <= 1) {
        ++d.drains;
        high = false;
      }
    }
    double busy = 0, weighted = 0, full = 0;
    for (size_t k = 1; k < at.size(); ++k) {
      busy += static_cast<double>(at[k]);
      weighted += static_cast<double>(k) * static_cast<double>(at[k]);
      if (4 * k >= 3 * depth) full += static_cast<double>(at[k]);
    }
    if (busy > 0) {
      d.busy_mean = weighted / busy;
      d.near_full = full / busy;
    }
    return d;
  }

 private:
  TempDir dir_;
  LoopDevice loop_;
  std::string backing_;
  unsigned major_ = 0, minor_ = 0;
};

TEST(BenchDepth, TheDefaultKeepsTheDepthInFlightAtTheDevice) {
  SerialDevice dev;
  const DeviceDepth d = dev.run(32, {"--acct", "off"});
  ASSERT_GE(d.events, 200u) << "too few requests reached the device to judge";
  std::cout << "  default, depth 32: " << d.busy_mean << " in flight at the device on average while busy, "
            << 100 * d.near_full << "% of that time with 24 or more; " << d.drains << " drains in " << d.started
            << " requests\n";
  // On this VM the mean is 29.2-31.6 and 88-99.7% of the busy time has 24
  // or more in flight (also beside a CPU spinner and a writer on vda): each
  // reap-and-refill leaves the device a few requests short for a moment,
  // longer when the bench waits for one of the two CPUs; it moves from
  // minute to minute with the host. Reads served from dirty pages the drop
  // left behind once read 26.3 and 75% (fixed above). Lockstep (below) reads
  // 16-18 and 55-62%, 23-25 beside a writer and a spinner, so the bounds
  // keep the two apart.
  EXPECT_GE(d.busy_mean, 0.8 * 32) << "refilled as completions are reaped, the device keeps its queue";
  EXPECT_GE(d.near_full, 0.75);
}

// Each way the default can submit its refills (--submit-policy; auto picks
// one of the two by measuring) keeps the depth at the device, and the JSON
// names the way in force and what decided it.
TEST(BenchDepth, EitherSubmitPolicyKeepsTheDepthInFlightAtTheDevice) {
  SerialDevice dev;
  for (const char* policy : {"each", "pass", "auto"}) {
    json j;
    const DeviceDepth d = dev.run(32, {"--acct", "off", "--submit-policy", policy}, &j);
    ASSERT_GE(d.events, 200u) << policy << ": too few requests reached the device to judge";
    ASSERT_FALSE(j.is_null()) << policy;
    std::cout << "  --submit-policy " << policy << ", depth 32: " << d.busy_mean
              << " in flight at the device on average while busy, " << 100 * d.near_full << "% of that time with 24 or more\n";
    const json& sub = j["results"]["submission"];
    ASSERT_TRUE(sub.is_object()) << policy << ": " << j["results"].dump();
    EXPECT_EQ(j["context"]["options"]["submit_policy"], policy);
    if (std::string(policy) == "auto") {
      // The run is 1 s: the first probe (8 slices of 25 ms, 16 where it asks
      // again) ends inside it.
      EXPECT_EQ(sub["decided_by"], "measured");
      EXPECT_GE(sub["probes"].get<int>(), 1);
      EXPECT_EQ(sub["probe_ratios"].size(), sub["probes"].get<size_t>());
    } else {
      EXPECT_EQ(sub["decided_by"], "given");
      EXPECT_DOUBLE_EQ(sub["each_share"].get<double>(), std::string(policy) == "each" ? 1.0 : 0.0);
      EXPECT_EQ(sub["probes"], 0);
    }
    // The bounds of the default's test above: a refill as reaped, each way.
    EXPECT_GE(d.busy_mean, 0.8 * 32) << policy;
    EXPECT_GE(d.near_full, 0.75) << policy;
  }
}

// What auto reports is what its probes measured: a probe that chose each
// measured each faster by more than the margin (3%), and the time each way
// follows the choices. Quiet and beside a spinner on the other CPU (the two
// regimes the choice is for), on vda, where the two ways differ.
TEST(BenchDepth, AutoSubmitPolicyFollowsItsOwnProbes) {
  TempDir dir;
  const std::string file = dir.path() + "/f";
  for (const bool spinner : {false, true}) {
    std::optional<CpuSpinner> spin;
    if (spinner) spin.emplace();
    const Outcome o = run_ioacct({"bench", "--format", "json", "--runtime", "2s", "--size", "64m", "--dir", dir.path()});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const json j = stdout_json(o);
    const json& sub = j["results"]["submission"];
    ASSERT_EQ(sub["decided_by"], "measured") << j["results"].dump();
    const auto ratios = sub["probe_ratios"].get<std::vector<double>>();
    ASSERT_GE(ratios.size(), 1u);
    size_t each = 0;  // probes whose median pair had each faster than the margin
    for (double r : ratios) each += r > 1.03;
    std::cout << "  " << (spinner ? "beside a spinner" : "quiet") << ": probes " << sub["probe_ratios"].dump()
              << ", each " << 100 * sub["each_share"].get<double>() << "% of the time\n";
    // Each is chosen where three pairs in four say so, or after a second
    // set of pairs where the median of all is above 1.07: either puts the
    // median (the ratio reported) above the margin too.
    EXPECT_LE(sub["probes_chose_each"].get<size_t>(), each);
    // A second set of pairs is part of a finished probe: counted among them.
    EXPECT_LE(sub["probes_extended"].get<size_t>(), sub["probes"].get<size_t>());
    EXPECT_LE(sub["probes_cut_short"].get<size_t>(), sub["probes"].get<size_t>() - sub["probes_extended"].get<size_t>())
        << "a probe cut short after two pairs never asked again";
    // Each found faster while pass is held waits for the next probe, run at
    // once, to confirm it: never more unconfirmed than found.
    EXPECT_LE(sub["probes_unconfirmed"].get<size_t>(), sub["probes_chose_each"].get<size_t>());
    // A probe's slices alternate, so half its time goes each way, and a
    // hold (1 s or more, against a probe's 200-400 ms) runs its probe's choice:
    // probes that all chose one way leave well over half the time to it (for
    // each, once a second probe confirmed the first).
    const double share = sub["each_share"].get<double>();
    const auto chose = sub["probes_chose_each"].get<size_t>();
    if (chose == 0) {
      EXPECT_LT(share, 0.5);
    }
    if (chose == ratios.size() && chose >= 2) {
      EXPECT_GT(share, 0.5);
    }
  }
}

TEST(BenchDepth, LockstepBatchesDrainTheDeviceAndTheWitnessSeesIt) {
  // The contrast that makes the test above mean something: waiting for a
  // whole batch before refilling lets the device's queue run down.
  SerialDevice dev;
  const DeviceDepth d = dev.run(32, {"--acct", "off", "--submit-batch", "32", "--complete-batch", "32"});
  ASSERT_GE(d.events, 200u) << "too few requests reached the device to judge";
  std::cout << "  lockstep 32/32, depth 32: " << d.busy_mean << " in flight at the device on average while busy, "
            << 100 * d.near_full << "% of that time with 24 or more; " << d.drains << " drains in " << d.started
            << " requests\n";
  // Each batch of 32 runs down to the last request before the next is
  // submitted: a drain per batch, whatever the load. How long each drain
  // lasts is the loop worker's pace: the mean in flight read 16-24 of 32
  // beside two compilers (the bound of 24 it was held to failed there, at
  // 24.1-24.2), so the time shares only say what the default is not.
  EXPECT_GE(static_cast<double>(d.drains), 0.8 * static_cast<double>(d.started) / 32);
  EXPECT_LE(d.busy_mean, 0.8 * 32);
}

// The device's side of a run as ioacct reports it with the tracker: the
// share of the busy time in the tracker's buckets from 16 up, and the
// application's mean in flight.
struct Reported {
  double deep_share = 0, app_mean = 0;
};
Reported reported(const json& j) {
  Reported r;
  r.app_mean = j["results"]["inflight"]["mean"].get<double>();
  for (const auto& d : j["results"]["devices"]) {
    if (d["role"] != "target" || !d["by_depth"].is_array()) continue;
    double idle = 0, deep = 0;
    for (const auto& b : d["by_depth"]) {
      if (b["min"] == 0) idle = b["pct"].get<double>();
      if (b["min"].get<int>() >= 16) deep += b["pct"].get<double>();
    }
    if (idle < 100) r.deep_share = deep / (100 - idle);
  }
  return r;
}

TEST(BenchDepth, WithTheTrackerBenchShowsTheDeviceSideDrainBesideTheApplicationSide) {
  // Both runs hold 32 I/Os from submission to reaping; only the lockstep one
  // lets the device's queue run down, and bench's device-side figures say so.
  SerialDevice dev;
  json refill, lockstep;
  dev.run(32, {"--acct", "full"}, &refill);
  dev.run(32, {"--acct", "full", "--submit-batch", "32", "--complete-batch", "32"}, &lockstep);
  ASSERT_FALSE(refill.is_null());
  ASSERT_FALSE(lockstep.is_null());
  const Reported a = reported(refill), b = reported(lockstep);
  std::cout << "  refill: " << 100 * a.deep_share << "% of the device's busy time at 16+, app mean " << a.app_mean
            << "; lockstep: " << 100 * b.deep_share << "% at 16+, app mean " << b.app_mean << "\n";
  EXPECT_GE(a.app_mean, 0.9 * 32);
  EXPECT_GE(b.app_mean, 0.9 * 32) << "the application holds its depth either way";
  EXPECT_GE(a.deep_share, 0.9) << "refilled as reaped, the device stays at 16 or more";
  // A steady drain from 32 spends about half the busy time below 16; under
  // load (completions that bunch while the loop driver waits for a CPU) up
  // to ~80% has been seen above it, never the refill's ~100%.
  EXPECT_LE(b.deep_share, 0.85) << "lockstep, the device spends a good part of its busy time draining";
  EXPECT_GE(a.deep_share - b.deep_share, 0.1);
}

}  // namespace
}  // namespace ioacct::test
