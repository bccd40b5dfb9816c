// `ioacct export --per-cgroup`: who made each device busy, with the number
// of series bounded however many cgroups do I/O.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "cli/exporter.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

// One process that moves itself through `n` cgroups of the blkio
// hierarchy, reading one 4 KiB block O_DIRECT in each (a bio is charged to
// the cgroup its task is in when it is submitted), then back to the root.
constexpr const char* kMover = R"(import mmap, os, sys
base, n, dev = sys.argv[1], int(sys.argv[2]), sys.argv[3]
fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
for i in range(n):
    open(f"{base}/c{i}/cgroup.procs", "w").write(str(os.getpid()))
    os.preadv(fd, [buf], i * 4096)
open("/sys/fs/cgroup/blkio/cgroup.procs", "w").write(str(os.getpid()))
)";

class ManyCgroups {
 public:
  explicit ManyCgroups(int n) : base_("/sys/fs/cgroup/blkio/ioacct-who-export-" + std::to_string(getpid())), n_(n) {
    sh("mkdir -p " + base_ + " && cd " + base_ + " && for i in $(seq 0 " + std::to_string(n - 1) + "); do mkdir c$i; done");
  }
  // c[0-9]*: the folder's own files (cgroup.procs, ...) match c* too.
  ~ManyCgroups() { std::system(("cd " + base_ + " && rmdir c[0-9]*; cd / && rmdir " + base_ + " 2>/dev/null").c_str()); }
  ManyCgroups(const ManyCgroups&) = delete;
  ManyCgroups& operator=(const ManyCgroups&) = delete;
  const std::string& base() const { return base_; }
  int n() const { return n_; }

 private:
  std::string base_;
  int n_;
};

// 300 cgroups each reading once: per device at most K + 1 series (the top
// K by busy time and `other`), and together they hold every read and the
// device's whole busy time.
TEST(ExportWho, ThreeHundredCgroupsGiveAtMostKPlusOneSeries) {
  if (access("/sys/fs/cgroup/blkio/cgroup.procs", W_OK) != 0)
    GTEST_SKIP() << "no cgroup v1 blkio hierarchy to make cgroups in (the block controller is elsewhere here)";
  TempDir dir;
  LoopDevice loop(dir.path(), {.size = "8m", .remove_at_end = true});  // frees the test's cgroups at once
  const std::string script = dir.path() + "/mover.py";
  std::ofstream(script) << kMover;
  ManyCgroups cg(300);
  Exporter ex({"--listen", "127.0.0.1:0", "--per-cgroup", "--per-cgroup-top", "5", loop.name()});
  ASSERT_GT(ex.port(), 0) << ex.err();
  sh("/usr/bin/python3 " + script + " " + cg.base() + " 300 " + loop.path());
  const std::string text = sh("curl -sf " + ex.url());
  const std::string dev = "device=\"" + loop.name() + "\"";
  const auto busy = samples(text, "ioacct_cgroup_busy_seconds_total", dev);
  EXPECT_LE(busy.size(), 6u) << text;
  EXPECT_GE(busy.size(), 2u) << "at least one cgroup and other: " << text;
  std::set<std::string> labels;
  double share = 0;
  for (const auto& [series, v] : busy) {
    labels.insert(series);
    share += v;
  }
  EXPECT_EQ(labels.count("ioacct_cgroup_busy_seconds_total{" + dev + ",cgroup=\"other\"}"), 1u) << text;
  const auto reads = samples(text, "ioacct_cgroup_completed_ios_total", "direction=\"read\"");
  double n = 0;
  for (const auto& [series, v] : reads) n += v;
  EXPECT_LE(reads.size(), 6u);
  EXPECT_GE(n, 300) << "every cgroup's read, in its own series or in other";
  const auto device_busy = value(text, "ioacct_device_busy_seconds_total{" + dev + "}");
  ASSERT_TRUE(device_busy) << text;
  EXPECT_NEAR(share, *device_busy, 1e-6 + 1e-6 * *device_busy) << "the series add up to the device's busy time";
  promtool_accepts(text);
  EXPECT_EQ(ex.stop(), 0) << ex.err();
}

TEST(ExportWho, BadFlagsAreUsageErrors) {
  expect_refused(run_ioacct({"export", "--per-cgroup", "--per-cgroup-top", "0"}), {"--per-cgroup-top"});
  expect_refused(run_ioacct({"export", "--per-cgroup", "--no-bpf"}), {"--per-cgroup", "--no-bpf"});
}

}  // namespace
}  // namespace ioacct::test
