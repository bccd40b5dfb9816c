// One file, one target; and nothing that reaches a mounted filesystem is
// written, whatever name it is given: a hard link, a symlink, a bind mount, a
// second loop device on the image, the image itself, a partition or its disk,
// a loop on a loop. On real loop devices and files; every loop device and
// mount is undone by its guard, also when a test fails.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

std::string make_file(const TempDir& dir, const std::string& name, const std::string& size = "16m") {
  const std::string f = dir.path() + "/" + name;
  sh("truncate -s " + size + " " + f);
  return f;
}

// Found by a test pass: "--verify f16 f16" reported 3916 blocks lost, because
// both targets wrote the same blocks at once. Every other name for the same
// file is the same mistake.
TEST(BenchTargets, OneFileUnderTwoNamesIsAUsageError) {
  TempDir dir, mnt;
  const std::string f = make_file(dir, "f16");
  sh("ln " + f + " " + dir.path() + "/hard");
  sh("ln -s " + f + " " + dir.path() + "/soft");
  const std::string bound = make_file(dir, "bound", "0");
  Mount bind(f, bound, "bind");
  struct Case {
    std::string second, says;
  };
  for (const Case& c : std::vector<Case>{{f, "given twice"},
                                         {dir.path() + "/hard", "the same file"},
                                         {dir.path() + "/soft", "the same file"},
                                         {bound, "the same file"}}) {
    SCOPED_TRACE(c.second);
    auto w = run_ioacct({"bench", "--rw", "randwrite", "--verify", "--runtime", "1s", f, c.second});
    expect_refused(w, {c.says, "give each target once"});
    // With two threads (one per target), and for reads too.
    auto n2 = run_ioacct({"bench", "--rw", "randwrite", "--verify", "-n", "2", "--runtime", "1s", f, c.second});
    expect_refused(n2, {c.says});
    auto r = run_ioacct({"bench", "--runtime", "200ms", f, c.second});
    expect_refused(r, {c.says});
  }
}

// The supported way to put several threads on one file: each thread owns its
// own blocks, so --verify finds every block as written.
TEST(BenchTargets, ThreadsSharingATargetNeverCryWolfInVerify) {
  TempDir dir;
  const std::string f = make_file(dir, "f16");
  auto o = run_ioacct({"bench", "--format", "json", "--rw", "randwrite", "--verify", "-n", "4", "--iodepth", "64",
                       "--runtime", "1s", f});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto j = stdout_json(o);
  EXPECT_EQ(j["results"]["verify"]["mismatches"], 0);
  EXPECT_GT(j["results"]["verify"]["checked_after"].get<uint64_t>(), 0u);
}

TEST(BenchTargets, OneBlockDeviceUnderTwoNamesIsAUsageError) {
  TempDir dir;
  LoopDevice loop(dir.path());
  const std::string alias = dir.path() + "/alias";
  sh("ln -s " + loop.path() + " " + alias);
  for (const auto& second : {loop.path(), alias}) {
    SCOPED_TRACE(second);
    // Before: "held open exclusively by another user", though the holder was ioacct.
    auto o = run_ioacct({"bench", "--rw", "randwrite", "--destroy-data", "--ios", "100", loop.path(), second});
    expect_refused(o, {"give each target once"});
    EXPECT_EQ(o.err.find("another user"), std::string::npos) << o.err;
  }
}

// Found by a test pass: l1.img mounted through one loop device, a second loop
// device on the same image could be written with --destroy-data.
TEST(BenchTargets, TwoLoopsOnOneMountedImage) {
  TempDir dir, mnt;
  const std::string img = make_file(dir, "l1.img", "64m");
  sh("mkfs.ext4 -q -F " + img);
  LoopDevice mounted(dir.path(), {.backing = img});
  LoopDevice alias(dir.path(), {.backing = img});
  Mount m(mounted.path(), mnt.path());
  for (const char* extra : {"", "--destroy-data"}) {
    std::vector<std::string> args = {"bench", "--rw", "randwrite", "--runtime", "300ms", alias.path()};
    if (*extra) args.push_back(extra);
    expect_refused(run_ioacct(args), {alias.path(), mounted.name(), "another loop device on " + img,
                                          "mounted on " + mnt.path(), "never written"});
  }
  // The image file itself is the same filesystem.
  expect_refused(run_ioacct({"bench", "--rw", "randwrite", "--size", "1m", "--runtime", "300ms", img}),
                     {mounted.name(), "a loop device on it", "mounted on " + mnt.path(), "never written"});
  // Reads are fine, of either device or the file...
  for (const auto& t : {alias.path(), img}) {
    auto r = run_ioacct({"bench", "--runtime", "200ms", t});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  // ... but never two of them at once: both are the same bytes.
  expect_refused(run_ioacct({"bench", "--runtime", "200ms", alias.path(), mounted.path()}),
                     {"both reach the same 64 MiB at offset 0 of " + img});
  expect_refused(run_ioacct({"bench", "--runtime", "200ms", img, alias.path()}), {"both reach"});
}

TEST(BenchTargets, ALoopOnAMountedLoopIsNeverWritten) {
  TempDir dir, mnt;
  LoopDevice lower(dir.path());
  sh("mkfs.ext4 -q " + lower.path());
  LoopDevice upper(dir.path(), {.backing = lower.path()});
  {
    Mount m(lower.path(), mnt.path());
    expect_refused(run_ioacct({"bench", "--rw", "randwrite", "--destroy-data", "--runtime", "300ms", upper.path()}),
                       {lower.name() + " (which it lies on) is mounted on " + mnt.path()});
  }
  {
    Mount m(upper.path(), mnt.path());
    expect_refused(run_ioacct({"bench", "--rw", "randwrite", "--destroy-data", "--runtime", "300ms", lower.path()}),
                       {upper.name() + " (a loop device on it) is mounted on " + mnt.path()});
  }
  auto ok = run_ioacct({"bench", "--rw", "randwrite", "--destroy-data", "--ios", "100", upper.path()});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// A filesystem lazily unmounted is gone from mountinfo but alive while a loop
// device's backing file is open in it.
TEST(BenchTargets, AFilesystemKeptAliveByALoopIsNeverWritten) {
  TempDir dir, mnt;
  LoopDevice disk(dir.path());
  sh("mkfs.ext4 -q " + disk.path());
  std::optional<LoopDevice> inner;
  {
    Mount m(disk.path(), mnt.path());
    sh("truncate -s 8m " + mnt.path() + "/inner.img");
    inner.emplace(dir.path(), LoopOptions{.backing = mnt.path() + "/inner.img"});
  }  // unmounted (lazily: the inner loop keeps it busy)
  auto o = run_ioacct({"bench", "--rw", "randwrite", "--destroy-data", "--runtime", "300ms", disk.path()});
  expect_refused(o, {"holds the filesystem of " + inner->name() + "'s backing file", "never written"});
  inner.reset();
}

TEST(BenchTargets, PartitionsAndTheirDisk) {
  TempDir dir, mnt;
  LoopDevice disk(dir.path(), {.partitions = true});
  const std::string p1 = disk.add_partition(1, 2048, 30720);
  const std::string p2 = disk.add_partition(2, 34816, 30720);
  // A partition and its disk overlap: one target or the other.
  expect_refused(run_ioacct({"bench", "--runtime", "200ms", disk.path(), p1}),
                     {disk.path() + " and " + p1 + ": both reach the same 15 MiB at offset 1048576"});
  // Ranges that do not overlap may be written together, but the kernel lets
  // one holder claim a disk or its partitions: ioacct names itself.
  auto claim = run_ioacct({"bench", "--rw", "randwrite", "--destroy-data", "--size", "1m", "--ios", "100", p1, disk.path()});
  expect_refused(claim, {"this run already holds " + p1});
  EXPECT_EQ(claim.err.find("another user"), std::string::npos) << claim.err;
  // Two partitions are two targets.
  auto both = run_ioacct({"bench", "--rw", "randwrite", "--destroy-data", "--ios", "100", p1, p2});
  EXPECT_EQ(both.exit_code, 0) << both.err;

  sh("mkfs.ext4 -q " + p2);
  Mount m(p2, mnt.path());
  // The disk holds the mounted partition, even when the range written misses it.
  for (const char* size : {"64m", "1m"}) {
    SCOPED_TRACE(size);
    auto o = run_ioacct({"bench", "--rw", "randwrite", "--destroy-data", "--size", size, "--runtime", "300ms", disk.path()});
    expect_refused(o, {disk.name() + "p2 (a partition of it) is mounted on " + mnt.path()});
  }
  // Its sibling is another matter.
  auto sibling = run_ioacct({"bench", "--rw", "randwrite", "--destroy-data", "--ios", "100", p1});
  EXPECT_EQ(sibling.exit_code, 0) << sibling.err;
}

// Found by a test pass: a read-only loop device opened for writing, then every
// write failed with EPERM, and --verify said "0 blocks re-read ... all as written".
TEST(BenchTargets, AReadOnlyDeviceIsRefusedBeforeTheRun) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.read_only = true});
  for (const char* verify : {"", "--verify"}) {
    SCOPED_TRACE(verify);
    std::vector<std::string> args = {"bench", "--rw", "randwrite", "--destroy-data", "--ios", "100", loop.path()};
    if (*verify) args.push_back(verify);
    auto o = run_ioacct(args);
    EXPECT_EQ(o.exit_code, 1) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
    EXPECT_NE(o.err.find(loop.path() + ": refusing to write: the device is read-only (BLKROGET"), std::string::npos) << o.err;
    EXPECT_EQ(o.err.find("EPERM"), std::string::npos) << o.err;
    EXPECT_EQ(o.err.find("ioacct bench:"), std::string::npos) << "no run started: " << o.err;
  }
  auto r = run_ioacct({"bench", "--runtime", "200ms", loop.path()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Found by a hostile pass: a write "benchmark" of /proc/sys/kernel/domainname
// (in a private UTS namespace) exited 0 and left the domain name random
// bytes. The files of procfs, sysfs, tracefs and the like are the kernel's
// settings: they are refused for writes and trims, by name or through a link,
// from the command line and from a fio job file, whatever --destroy-data says.
TEST(BenchTargets, PseudoFilesystemFilesAreNeverWritten) {
  TempDir dir;
  const std::string link = dir.path() + "/settings";
  ASSERT_EQ(symlink("/proc/sys/kernel/domainname", link.c_str()), 0);
  const std::string job = dir.path() + "/domainname.fio";
  std::ofstream(job) << "[poke]\nfilename=/proc/sys/kernel/domainname\nrw=write\nbs=512\nsize=512\n"
                        "ioengine=psync\n";
  // ioacct runs in a UTS namespace of its own whose domain name is set first
  // and printed after, so a write that got through shows, and the host's is
  // never touched.
  const RunOptions in_uts{.prefix = {"/usr/bin/unshare", "-u", "/bin/sh", "-c",
                                     "echo ioacct-test > /proc/sys/kernel/domainname && \"$0\" \"$@\"; rc=$?; "
                                     "echo \"domainname=$(cat /proc/sys/kernel/domainname)\" >&2; exit $rc"}};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--rw", "write", "--buffered", "--bs", "512", "--size", "512", "--ios", "1", "--engine", "psync",
        "--destroy-data", "/proc/sys/kernel/domainname"}, "/proc/sys/kernel/domainname: refusing to write: it is a file of procfs"},
      {{"--rw", "randwrite", "--buffered", "--bs", "512", "--size", "512", "--ios", "1", link},
       link + ": refusing to write: it is a file of procfs"},
      {{"--fio", job, "--destroy-data"}, "/proc/sys/kernel/domainname: refusing to write: it is a file of procfs"},
      {{"--rw", "trim", "--bs", "4k", "--size", "4k", "--ios", "1", "/sys/kernel/tracing/trace_marker"},
       "/sys/kernel/tracing/trace_marker: refusing to write: it is a file of tracefs"},
  };
  for (const auto& [args, refusal] : cases) {
    std::vector<std::string> argv = {"bench"};
    argv.insert(argv.end(), args.begin(), args.end());
    SCOPED_TRACE(argv.back());
    const auto o = run_ioacct(argv, in_uts);
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_NE(o.err.find("error: " + refusal), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("domainname=ioacct-test\n"), std::string::npos) << "the setting was written: " << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
}

}  // namespace
}  // namespace ioacct::test
