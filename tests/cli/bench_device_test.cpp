// Block devices, for real: a loop device that only this test uses.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

class LoopDevice {
 public:
  explicit LoopDevice(const std::string& backing_dir, unsigned sector_size = 512) {
    backing_ = backing_dir + "/loop.img";
    sh("truncate -s 64m " + backing_);
    dev_ = sh("losetup --find --show --sector-size " + std::to_string(sector_size) + " " + backing_);
  }
  ~LoopDevice() {
    if (!dev_.empty()) std::system(("losetup -d " + dev_).c_str());
  }
  const std::string& path() const { return dev_; }

 private:
  std::string backing_, dev_;
};

TEST(BenchDevice, ReadsNeedNoFlagAndNameTheDevice) {
  TempDir dir;
  LoopDevice loop(dir.path());
  auto o = run_ioacct({"bench", "--format", "json", "--runtime", "300ms", loop.path()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto j = nlohmann::json::parse(o.out);
  const auto& t = j["context"]["targets"][0];
  EXPECT_EQ(t["block_device"], true);
  EXPECT_EQ(t["device"], loop.path().substr(5));  // "loopN"
  EXPECT_EQ(t["size"], 64 << 20);
  EXPECT_GT(j["results"]["ios"].get<uint64_t>(), 0u);
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
  LoopDevice loop(dir.path(), 4096);
  auto o = run_ioacct({"bench", "--bs", "512", "--runtime", "300ms", loop.path()});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("--bs"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("4096"), std::string::npos) << "says the size it needs: " << o.err;
  auto b = run_ioacct({"bench", "--bs", "512", "--buffered", "--runtime", "300ms", loop.path()});
  EXPECT_EQ(b.exit_code, 0) << b.err;
}

}  // namespace
}  // namespace ioacct::test
