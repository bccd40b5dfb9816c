// `ioacct stat --by cgroup` with the block controller on cgroup v2: each
// cgroup's I/Os and bytes against its own io.stat, and the cgroups named by
// their paths in the v2 hierarchy (the one that then holds the controller).
//
// The test VM runs the hybrid hierarchy (blkio on cgroup v1), so the test
// moves the controller to v2 for its run: the kernel releases a v1
// controller to the default hierarchy once its v1 hierarchy is unmounted
// and has no child cgroups, and takes it back when it is disabled on v2 and
// mounted with `-t cgroup -o blkio` again. The move changes what every
// other test's cgroups and witnesses are; every cli test holds the lock
// `io` (tests/CMakeLists.txt), so none runs beside this one.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace who_v2 {
namespace {

constexpr const char* kV1Blkio = "/sys/fs/cgroup/blkio";

// A paced O_DIRECT reader or writer of 4 KiB blocks of an existing file.
constexpr const char* kPaced = R"(import mmap, os, sys, time
path, mode, n, gap = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
fd = os.open(path, os.O_RDWR | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
for i in range(n):
    if mode == 'r': os.preadv(fd, [buf], i * 4096)
    else: os.pwritev(fd, [buf], i * 4096)
    time.sleep(gap)
)";

// The first cgroup2 mount point, or "".
std::string cgroup2_mount() {
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string w, at;
    for (int i = 0; i < 5 && f >> w; ++i) at = w;
    while (f >> w && w != "-") {
    }
    if (f >> w && w == "cgroup2") return at;
  }
  return "";
}

bool lists_io(const std::string& controllers_file) {
  return (" " + slurp(controllers_file) + " ").find(" io") != std::string::npos;
}

// /proc/cgroups' line for blkio: its hierarchy id and cgroup count.
struct Blkio {
  int hierarchy = -1, cgroups = -1;
  bool shared = false;  // another controller is on the same v1 hierarchy
};
Blkio blkio_in_proc_cgroups() {
  Blkio b;
  std::ifstream in("/proc/cgroups");
  std::string name;
  int h = 0, n = 0, enabled = 0;
  std::vector<int> others;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("#") || !(std::istringstream(line) >> name >> h >> n >> enabled)) continue;
    if (name == "blkio") b = {h, n};
    else others.push_back(h);
  }
  for (int h2 : others) b.shared |= b.hierarchy > 0 && h2 == b.hierarchy;
  return b;
}

// The block controller on cgroup v2 for the fixture's life, and the
// machine as it was after. The restore lives in a guardian process
// (setsid, so the test's process group dying does not take it along) that
// runs it when the pipe from the test closes: at restore(), or when the test
// process dies however it dies (a crash, ctest's timeout). restore() waits
// for it and says whether the v1 hierarchy is back.
class IoOnV2 {
 public:
  // Empty: moved (or io was on v2 already); else why not, for GTEST_SKIP.
  std::string move() {
    if (geteuid() != 0) return "needs root (it moves the block controller between cgroup hierarchies)";
    v2_ = cgroup2_mount();
    if (v2_.empty()) return "no cgroup2 mount";
    if (lists_io(v2_ + "/cgroup.controllers")) return enable_io();  // a cgroup v2 machine: nothing to move
    const Blkio b = blkio_in_proc_cgroups();
    if (b.hierarchy <= 0) return "blkio is on no hierarchy and not on cgroup2 either";
    if (b.shared) return "blkio shares its v1 hierarchy with another controller: moving it would move that one too";
    const std::string live = sh(std::string("find ") + kV1Blkio + " -mindepth 1 -type d | wc -l");
    if (live != "0") return "the v1 blkio hierarchy has " + live + " child cgroups: in use, so it is not moved";
    // Cgroups removed but not yet freed keep the hierarchy, and with it the
    // controller, on v1 (a detached loop device's worker holds its cgroup
    // for 60 s): wait for them, as none is left alive.
    const auto t0 = std::chrono::steady_clock::now();
    int dying = b.cgroups - 1;
    for (int i = 0; i < 700 && dying > 0; ++i, dying = blkio_in_proc_cgroups().cgroups - 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (dying > 0) return std::to_string(dying) + " removed v1 blkio cgroups were not freed within 70 s";
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (waited > 1) std::cout << "waited " << waited << " s for removed v1 blkio cgroups to be freed\n";
    const std::string mounts = sh("grep -c ' - cgroup [^ ]* [^ ]*blkio' /proc/self/mountinfo || true");
    if (mounts != "1") return "the v1 blkio hierarchy is mounted " + mounts + " times here (expected once, at " + kV1Blkio + ")";
    for (const char* f : {"read_bps_device", "write_bps_device", "read_iops_device", "write_iops_device"})
      if (!slurp(std::string(kV1Blkio) + "/blkio.throttle." + f).empty())
        return std::string("the v1 blkio root has a limit (blkio.throttle.") + f + "): in use, so it is not moved";
    start_guardian(true);
    const std::string err = sh(std::string("umount ") + kV1Blkio + " 2>&1 || true");
    if (!err.empty()) return "umount " + std::string(kV1Blkio) + ": " + err;
    // The hierarchy is released at once when nothing holds it; allow 2 s.
    for (int i = 0; i < 200 && !lists_io(v2_ + "/cgroup.controllers"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!lists_io(v2_ + "/cgroup.controllers"))
      return "blkio unmounted, but io did not appear in " + v2_ + "/cgroup.controllers within 2 s";
    return enable_io();
  }
  const std::string& v2() const { return v2_; }
  std::string base() const { return v2_ + "/ioacct-who-v2-" + std::to_string(getpid()); }

  // Idempotent. Empty: the machine is as it was; else what is not.
  std::string restore() {
    if (!guard_) return "";
    ::pclose(guard_);  // the guardian's `read` returns: it restores, and pclose waits for it
    guard_ = nullptr;
    const std::string said = slurp(log_);
    std::remove(log_.c_str());
    return said.starts_with("restored") ? "" : "the machine is not as it was: " + said;
  }
  ~IoOnV2() { restore(); }

 private:
  std::string enable_io() {
    if (!guard_) start_guardian(false);
    if (slurp(v2_ + "/cgroup.subtree_control").find("io") == std::string::npos) {
      const std::string err = sh("echo +io 2>&1 > " + v2_ + "/cgroup.subtree_control || true");
      if (!err.empty()) return "+io in " + v2_ + "/cgroup.subtree_control: " + err;
    }
    return "";
  }

  // The restore: the test's cgroups emptied and removed, io disabled at the
  // root where the test enabled it, and (when it was on v1) blkio mounted
  // again. A cgroup removed lingers until its last reference goes (a bio in
  // flight; a loop device's worker holds its cgroup for 60 s, which is why
  // the test reads a file on vda and not a loop device), and until then the
  // controller cannot leave v2: each step is retried for up to 30 s.
  void start_guardian(bool remount) {
    log_ = "/tmp/ioacct-who-v2-restore-" + std::to_string(getpid());
    const bool had_io = slurp(v2_ + "/cgroup.subtree_control").find("io") != std::string::npos;
    std::string s = "read _; B=" + base() + "; U=" + v2_ + "; V1=" + kV1Blkio +
                    "; for p in $(cat $B/*/cgroup.procs $B/cgroup.procs 2>/dev/null); do echo $p > $U/cgroup.procs; done"
                    "; rmdir $B/* $B 2>/dev/null";
    if (!had_io)
      s += "; for i in $(seq 300); do echo -io 2>/dev/null > $U/cgroup.subtree_control && break; sleep 0.1; done";
    if (remount)
      s += "; for i in $(seq 300); do mountpoint -q $V1 && break;"
           " mount -t cgroup -o blkio cgroup $V1 2>/dev/null || sleep 0.1; done"
           "; if mountpoint -q $V1; then echo restored; else echo \"blkio is not mounted again at $V1"
           " (try: echo -io > $U/cgroup.subtree_control; mount -t cgroup -o blkio cgroup $V1)\"; fi";
    else
      s += "; echo restored";
    // popen's shell execs setsid, which is no group leader, so it execs the
    // guardian in a session of its own: popen's child, which pclose waits for.
    guard_ = ::popen(("exec setsid sh -c 'exec >" + log_ + " 2>&1; " + s + "'").c_str(), "w");
    ASSERT_NE(guard_, nullptr);
  }

  std::string v2_, log_;
  FILE* guard_ = nullptr;
};

// One cgroup's io.stat for device `dev` ("MAJ:MIN"): rios wios rbytes wbytes.
struct IoStat {
  double rios = 0, wios = 0, rbytes = 0, wbytes = 0;
};
IoStat io_stat(const std::string& dir, const std::string& dev) {
  IoStat s;
  std::istringstream in(slurp(dir + "/io.stat"));
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string d, kv;
    if (!(f >> d) || d != dev) continue;
    while (f >> kv) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) continue;
      const double v = std::stod(kv.substr(eq + 1));
      const std::string k = kv.substr(0, eq);
      if (k == "rios") s.rios = v;
      if (k == "wios") s.wios = v;
      if (k == "rbytes") s.rbytes = v;
      if (k == "wbytes") s.wbytes = v;
    }
  }
  return s;
}

// Within 1% (the issue's tolerance). The tracker may be short besides by
// the completions it says it missed (the kernel skips a program that an
// interrupt finds running on its CPU, docs/design.md "Lost events").
void within_1pct(double got, double want, double missed, const std::string& what) {
  EXPECT_LE(got, want + 0.01 * want) << what << ": the tracker says " << got << ", io.stat " << want;
  EXPECT_GE(got, want - 0.01 * want - missed)
      << what << ": the tracker says " << got << ", io.stat " << want << " (the tracker missed " << missed << ")";
}

class StatWhoV2 : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = io_.move();
    if (!why.empty()) GTEST_SKIP() << "the block controller is not moved to cgroup v2: " << why;
  }
  void TearDown() override { EXPECT_EQ(io_.restore(), ""); }
  IoOnV2 io_;
};

// A paced O_DIRECT reader in one v2 cgroup and a paced O_DIRECT writer in
// another, on files on the disk under /var/tmp, in one window: each
// cgroup's I/Os and bytes as its io.stat counts them (the kernel charges a
// bio to its cgroup at submission; these are one bio a request), under its
// v2 path and its directory's inode number as the id.
TEST_F(StatWhoV2, CgroupsMatchIoStat) {
  TempDir dir;
  const std::string script = dir.path() + "/paced.py", r = dir.path() + "/r", w = dir.path() + "/w";
  std::ofstream(script) << kPaced;
  // Written and synced before the window: the reads hit the disk, the
  // writes overwrite blocks that exist (no allocation of their own).
  sh("dd if=/dev/urandom of=" + r + " bs=1M count=2 status=none && dd if=/dev/zero of=" + w +
     " bs=1M count=2 status=none && sync -f " + r);
  struct stat st {};
  ASSERT_EQ(::stat(r.c_str(), &st), 0);
  std::string dev = std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  // The disk of a partition: io.stat and the tracker count whole disks.
  const std::string sys = "/sys/dev/block/" + dev;
  if (!slurp(sys + "/partition").empty()) dev = sh("cat " + sys + "/../dev");
  const std::string disk = sh("basename $(readlink -f /sys/dev/block/" + dev + ")");

  const std::string base = io_.base();
  sh("mkdir " + base + " && echo +io > " + base + "/cgroup.subtree_control && mkdir " + base + "/reader " + base +
     "/writer");
  const std::string groups[2] = {"reader", "writer"};
  IoStat before[2], after[2];
  auto in = [&](const std::string& g, const std::string& what) {
    return "sh -c 'echo $$ > " + base + "/" + g + "/cgroup.procs; exec /usr/bin/python3 " + script + " " + what + "'";
  };
  RunOptions opts;
  opts.action_after = "exact busy time from";
  opts.action = [&] {
    for (int g = 0; g < 2; ++g) before[g] = io_stat(base + "/" + groups[g], dev);
    sh(in("reader", r + " r 300 0.001") + " & " + in("writer", w + " w 200 0.001") + " & wait");
    for (int g = 0; g < 2; ++g) after[g] = io_stat(base + "/" + groups[g], dev);
  };
  const Outcome o = run_ioacct({"stat", "--by", "cgroup", "--format", "json", "-y", "3", "1", disk}, opts);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["who_by"], "cgroup");
  const auto& row = j["devices"].at(0);
  EXPECT_EQ(row["device"], disk) << row;
  SCOPED_TRACE("the device's row: " + row.dump());  // on a failure, where the other I/Os went
  double missed = 0;
  for (const char* k : {"completions_lost", "completions_invisible", "tracepoint_misses"})
    if (row[k].is_number()) missed += row[k].get<double>();
  for (int g = 0; g < 2; ++g) {
    const std::string path = base.substr(io_.v2().size()) + "/" + groups[g];
    struct stat cg {};
    ASSERT_EQ(::stat((base + "/" + groups[g]).c_str(), &cg), 0);
    const nlohmann::json* e = nullptr;
    for (const auto& who : row["who"])
      if (who["cgroup"] == path) e = &who;
    ASSERT_NE(e, nullptr) << "no row named " << path << " (its path in the v2 hierarchy): " << row["who"];
    EXPECT_EQ((*e)["cgroup_id"], cg.st_ino) << path << ": the id is the v2 directory's inode number";
    const IoStat k{after[g].rios - before[g].rios, after[g].wios - before[g].wios,
                   after[g].rbytes - before[g].rbytes, after[g].wbytes - before[g].wbytes};
    within_1pct((*e)["reads"].get<double>(), k.rios, missed, path + " reads");
    within_1pct((*e)["writes"].get<double>(), k.wios, missed, path + " writes");
    within_1pct((*e)["read_bytes"].get<double>(), k.rbytes, missed * 4096, path + " read bytes");
    within_1pct((*e)["write_bytes"].get<double>(), k.wbytes, missed * 4096, path + " write bytes");
    std::cout << path << " (id " << cg.st_ino << "): the tracker " << (*e)["reads"] << " reads " << (*e)["writes"]
              << " writes " << (*e)["read_bytes"] << " B read " << (*e)["write_bytes"] << " B written; io.stat " << k.rios
              << " " << k.wios << " " << k.rbytes << " " << k.wbytes << "; the tracker missed " << missed << "\n";
  }
  EXPECT_GE(after[0].rios - before[0].rios, 300) << "the reader's 300 direct reads, as io.stat counts them";
  EXPECT_GE(after[1].wios - before[1].wios, 200) << "the writer's 200 direct writes, as io.stat counts them";
}

}  // namespace
}  // namespace who_v2
}  // namespace ioacct::test
