// `ioacct probe` reporters (src/report/probe_report.cpp) on made-up results:
// what a kernel here cannot show (unlimited memlock, bits and opcodes newer
// than ioacct, a refused SQPOLL ring, io_uring missing) is pinned here.
#include "report/probe_report.hpp"

#include <gtest/gtest.h>

#include <cerrno>

namespace ioacct {
namespace {

ProbeResult sample() {
  ProbeResult r;
  r.sysname = "Linux";
  r.release = "9.9.0-test";
  r.io_uring_disabled = 1;
  r.memlock_soft = 65536;
  r.memlock_hard = ProbeResult::kUnlimited;
  r.features = 0x3 | (1U << 30);
  r.feature_names = {"SINGLE_MMAP", "NODROP"};
  r.unknown_feature_bits = {30};
  r.setup_flags = {
      {.name = "IOPOLL", .flag = 1, .tried = 1, .with = "", .since = "5.1", .error = 0},
      {.name = "SQ_AFF", .flag = 4, .tried = 6, .with = "SQPOLL", .since = "5.1", .error = EPERM},
      {.name = "SQE_MIXED", .flag = 1U << 19, .tried = 1U << 19, .with = "", .since = "6.19", .error = EINVAL},
  };
  r.unknown_setup_bits = {{20, EINVAL}, {21, 0}, {22, EINVAL}};
  r.last_op = 70;
  r.opcodes = {{0, "NOP", true}, {22, "READ", false}, {70, "", true}};
  r.sqpoll.error = EPERM;
  r.block_devices = {{"nvme0n1", true, 4096, "none"}, {"sda", false, 512, std::nullopt}};
  return r;
}

TEST(ProbeReport, ConsoleIsPinned) {
  const std::string expected =
      "io_uring on Linux 9.9.0-test: available\n"
      "  io_uring_disabled  1 (only CAP_SYS_ADMIN and the group in kernel.io_uring_group may create rings)\n"
      "  RLIMIT_MEMLOCK     soft 64 KiB, hard unlimited\n"
      "\n"
      "setup flags (each tried in a ring of its own, with the flags it requires)\n"
      "  IOPOLL              yes                     SQE_MIXED           NO (EINVAL; 6.19+)\n"
      "  SQ_AFF              NO (EPERM; 5.1+)\n"
      "  bits 20-22          ACCEPTED bit 21: this kernel knows flags that ioacct does not\n"
      "\n"
      "features (io_uring_params.features = 0x40000003): 2 named, 1 unknown to ioacct\n"
      "  SINGLE_MMAP NODROP bit30\n"
      "\n"
      "opcodes (IORING_REGISTER_PROBE): 2 of the 3 in 0..70 supported\n"
      "  NOP op70\n"
      "  NOT supported: READ\n"
      "\n"
      "SQPOLL ring: refused: Operation not permitted (EPERM); no SQ thread to account\n"
      "\n"
      "block devices (/sys/block; polled I/O needs io_poll 1)\n"
      "  name     io_poll  logical block  scheduler\n"
      "  nvme0n1  1        4 KiB          none\n"
      "  sda      0        512 B          ?\n";
  EXPECT_EQ(format_probe_console(sample()), expected);
}

TEST(ProbeReport, JsonSaysUnlimitedAndLeavesUnknownNamesNull) {
  const nlohmann::json j = probe_to_json(sample());
  EXPECT_EQ(j["context"]["schema_version"], 1);
  EXPECT_EQ(j["context"]["kernel"], "Linux 9.9.0-test");
  EXPECT_EQ(j["system"]["kernel_release"], "9.9.0-test");
  EXPECT_EQ(j["system"]["io_uring_disabled"], 1);
  EXPECT_EQ(j["system"]["rlimit_memlock"]["soft"], 65536);
  EXPECT_EQ(j["system"]["rlimit_memlock"]["hard"], "unlimited");
  EXPECT_EQ(j["features"]["unknown_bits"], nlohmann::json::array({30}));
  EXPECT_TRUE(j["opcodes"]["ops"][2]["name"].is_null());
  EXPECT_EQ(j["opcodes"]["ops"][2]["op"], 70);
  EXPECT_EQ(j["setup_flags"][1]["errno"], "EPERM");
  EXPECT_EQ(j["setup_flags"][2]["bit"], 19);
  EXPECT_EQ(j["setup_flags"][2]["value"], 1U << 19);
  EXPECT_EQ(j["setup_flags"][1]["with"], "SQPOLL");
  EXPECT_TRUE(j["setup_flags"][0]["with"].is_null());
  EXPECT_EQ(j["unknown_setup_bits"][1]["accepted"], true);
  EXPECT_EQ(j["sqpoll_fdinfo"]["errno"], "EPERM");
  EXPECT_EQ(j["sqpoll_fdinfo"]["fields"], nlohmann::json::object());
  EXPECT_TRUE(j["block_devices"][1]["scheduler"].is_null());
}

TEST(ProbeReport, NoIoUringAtAllIsOneLinePerSection) {
  ProbeResult r = sample();
  r.setup_error = ENOSYS;
  for (auto& f : r.setup_flags) f.error = ENOSYS;
  r.opcodes_error = ENOSYS;
  r.opcodes.clear();
  const std::string out = format_probe_console(r);
  EXPECT_NE(out.find("NOT AVAILABLE (a plain ring was refused: Function not implemented (ENOSYS))"), std::string::npos) << out;
  EXPECT_NE(out.find("setup flags: none accepted (every try: ENOSYS, like the plain ring)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("features: unknown (no ring: ENOSYS)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("opcodes: unknown (IORING_REGISTER_PROBE: Function not implemented (ENOSYS))\n"), std::string::npos) << out;
  const nlohmann::json j = probe_to_json(r);
  EXPECT_EQ(j["io_uring"]["available"], false);
  EXPECT_TRUE(j["features"]["value"].is_null());
  EXPECT_TRUE(j["opcodes"]["last_op"].is_null());
}

}  // namespace
}  // namespace ioacct
