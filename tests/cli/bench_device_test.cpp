// Block devices, for real: a loop device that only this test uses.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

TEST(BenchDevice, ReadsNeedNoFlagAndNameTheDevice) {
  TempDir dir;
  LoopDevice loop(dir.path());
  auto o = run_ioacct({"bench", "--format", "json", "--runtime", "300ms", loop.path()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto j = stdout_json(o);
  const auto& t = j["context"]["targets"][0];
  EXPECT_EQ(t["block_device"], true);
  EXPECT_EQ(t["device"], loop.path().substr(5));  // "loopN"
  EXPECT_EQ(t["size"], 64 << 20);
  EXPECT_GT(j["results"]["ios"].get<uint64_t>(), 0u);
}

TEST(BenchDevice, MountedDeviceIsNeverWritten) {
  TempDir dir, mnt;
  LoopDevice loop(dir.path());
  sh("mkfs.ext4 -q -L ioacct-test " + loop.path());
  Mount m(loop.path(), mnt.path());
  for (const char* extra : {"", "--destroy-data"}) {
    std::vector<std::string> args = {"bench", "--rw", "randwrite", "--runtime", "300ms", loop.path()};
    if (*extra) args.push_back(extra);
    auto o = run_ioacct(args);
    // One message that lists everything: the mount and the signature.
    expect_refused(o, {loop.path(), "mounted on " + mnt.path(), "ext4", "never written"});
  }
  // Reads of a mounted device are fine.
  EXPECT_EQ(run_ioacct({"bench", "--runtime", "200ms", loop.path()}).exit_code, 0);
}

TEST(BenchDevice, DeviceWithASignatureNeedsDestroyData) {
  TempDir dir;
  LoopDevice loop(dir.path());
  sh("mkfs.ext4 -q -L precious " + loop.path());
  auto o = run_ioacct({"bench", "--rw", "randwrite", "--runtime", "300ms", loop.path()});
  expect_refused(o, {"ext4", "precious", "--destroy-data"});
  EXPECT_EQ(sh("blkid -o value -s LABEL " + loop.path()), "precious") << "still intact";
  auto ok = run_ioacct({"bench", "--rw", "write", "--ios", "2000", "--bs", "64k", "--destroy-data", loop.path()});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(BenchDevice, SwapAndStackedDevicesAreNeverWritten) {
  TempDir dir;
  {
    LoopDevice loop(dir.path());
    sh("mkswap -q " + loop.path());
    if (std::system(("swapon " + loop.path() + " 2>/dev/null").c_str()) == 0) {
      auto o = run_ioacct({"bench", "--rw", "randwrite", "--destroy-data", "--runtime", "300ms", loop.path()});
      std::system(("swapoff " + loop.path()).c_str());
      expect_refused(o, {"used as swap"});
    } else {
      std::cout << "swapon refused on this machine; the swap case is not exercised\n";
    }
  }
  // Stacking needs device-mapper (or md) in the kernel: the only users of
  // the block layer's holders links.
  std::ifstream devices("/proc/devices");
  const std::string all((std::istreambuf_iterator<char>(devices)), std::istreambuf_iterator<char>());
  if (all.find("device-mapper") == std::string::npos)
    GTEST_SKIP() << "this kernel has no device-mapper (not in /proc/devices), so nothing can be stacked "
                    "on a loop device; the holders check is not exercised";
  LoopDevice loop(dir.path());
  const std::string name = "ioacct-test-" + std::to_string(getpid());
  sh("dmsetup create " + name + " --table '0 131072 linear " + loop.path() + " 0'");
  auto o = run_ioacct({"bench", "--rw", "randwrite", "--destroy-data", "--runtime", "300ms", loop.path()});
  std::system(("dmsetup remove " + name).c_str());
  expect_refused(o, {"dm-", "stacked on it"});
}

TEST(BenchDevice, DeviceHeldExclusivelyIsNeverWritten) {
  TempDir dir;
  LoopDevice loop(dir.path());
  const int fd = open(loop.path().c_str(), O_RDONLY | O_EXCL);
  ASSERT_GE(fd, 0);
  auto o = run_ioacct({"bench", "--rw", "randwrite", "--destroy-data", "--runtime", "300ms", loop.path()});
  close(fd);
  expect_refused(o, {"O_EXCL", "EBUSY"});
}

// A holder that lets go within a second is waited for: a run that has just
// ended can hold the device a few ms past its exit (io_uring's ring is torn
// down by a kernel worker), and the next run must not call that in use.
TEST(BenchDevice, AHolderLettingGoIsWaitedFor) {
  TempDir dir;
  LoopDevice loop(dir.path());
  const int fd = open(loop.path().c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);  // not the child's to hold
  ASSERT_GE(fd, 0);
  std::thread let_go([fd] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    close(fd);
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto o = run_ioacct({"bench", "--rw", "randwrite", "--destroy-data", "--ios", "100", loop.path()});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  let_go.join();
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_GE(took, 0.25) << "it waited for the holder";
}

TEST(BenchDevice, WritesAreRefusedWithoutDestroyData) {
  TempDir dir;
  LoopDevice loop(dir.path());
  sh("printf 'precious' | dd of=" + loop.path() + " conv=notrunc status=none");
  for (const char* rw : {"randwrite", "write", "randrw"}) {
    SCOPED_TRACE(rw);
    auto o = run_ioacct({"bench", "--rw", rw, "--runtime", "300ms", loop.path()});
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_NE(o.err.find("--destroy-data"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find(loop.path()), std::string::npos) << o.err;
    EXPECT_EQ(sh("head -c 8 " + loop.path()), "precious") << "nothing was written";
  }
  auto o = run_ioacct({"bench", "--rw", "write", "--ios", "100", "--destroy-data", loop.path()});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(sh("head -c 8 " + loop.path()), "precious") << "with --destroy-data the write happened";
}

TEST(BenchDevice, DirectBlockSizeMustMatchTheDevice) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.sector_size = 4096});
  auto o = run_ioacct({"bench", "--bs", "512", "--runtime", "300ms", loop.path()});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("--bs"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("4096"), std::string::npos) << "says the size it needs: " << o.err;
  auto b = run_ioacct({"bench", "--bs", "512", "--buffered", "--runtime", "300ms", loop.path()});
  EXPECT_EQ(b.exit_code, 0) << b.err;
}

}  // namespace
}  // namespace ioacct::test
