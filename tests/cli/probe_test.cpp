// `ioacct probe`: every answer it gives is checked against the system,
// read here independently (sysfs, procfs, getrlimit, raw io_uring_setup).
#include <gtest/gtest.h>
#include <liburing.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

json probe_json(const RunOptions& opts = {}) {
  auto o = run_ioacct({"probe", "--format", "json"}, opts);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  return stdout_json(o);  // throws (and fails the test) if it is not JSON
}

std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// The raw syscall, not liburing's wrapper: an answer independent of ioacct's.
int raw_setup(uint32_t flags, io_uring_params* out = nullptr) {
  io_uring_params p{};
  p.flags = flags;
  const long fd = syscall(__NR_io_uring_setup, 4, &p);
  if (fd < 0) return errno;
  close(static_cast<int>(fd));
  if (out) *out = p;
  return 0;
}

const json& flag_entry(const json& j, const std::string& name) {
  for (const auto& f : j["setup_flags"])
    if (f["name"] == name) return f;
  ADD_FAILURE() << "no setup flag " << name;
  static const json none;
  return none;
}

const json* device_entry(const json& j, const std::string& name) {
  for (const auto& d : j["block_devices"])
    if (d["name"] == name) return &d;
  return nullptr;
}

TEST(Probe, ContextAndSystemMatchTheKernel) {
  const json j = probe_json();
  const std::string release = sh("uname -r");
  EXPECT_EQ(j["context"]["schema_version"], 1);
  EXPECT_EQ(j["context"]["ioacct_version"], IOACCT_VERSION);
  EXPECT_EQ(j["context"]["kernel"], "Linux " + release);  // as in bench's context
  EXPECT_EQ(j["system"]["kernel_release"], release);

  const std::string sysctl = "/proc/sys/kernel/io_uring_disabled";
  if (std::filesystem::exists(sysctl)) {
    EXPECT_EQ(j["system"]["io_uring_disabled"], std::stoi(first_line(sysctl)));
  } else {
    EXPECT_TRUE(j["system"]["io_uring_disabled"].is_null());
  }

  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_MEMLOCK, &lim), 0);
  auto expected = [](rlim_t v) { return v == RLIM_INFINITY ? json("unlimited") : json(static_cast<uint64_t>(v)); };
  EXPECT_EQ(j["system"]["rlimit_memlock"]["soft"], expected(lim.rlim_cur));
  EXPECT_EQ(j["system"]["rlimit_memlock"]["hard"], expected(lim.rlim_max));
}

TEST(Probe, RlimitMemlockIsTheProcesssOwn) {
  // prlimit on the child (lowering needs no privilege): the probe reports
  // what its own process has, not a system default. "unlimited" is pinned
  // in tests/unit/probe_report_test.cpp: raising a limit needs CAP_SYS_RESOURCE.
  auto o = run_ioacct({"probe", "--format", "json"}, {.prefix = {"/usr/bin/prlimit", "--memlock=65536:131072"}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json j = stdout_json(o);
  EXPECT_EQ(j["system"]["rlimit_memlock"]["soft"], 65536);
  EXPECT_EQ(j["system"]["rlimit_memlock"]["hard"], 131072);
}

TEST(Probe, FeaturesMatchARawSetup) {
  io_uring_params p{};
  ASSERT_EQ(raw_setup(0, &p), 0) << "io_uring is not usable here";
  const json j = probe_json();
  EXPECT_EQ(j["io_uring"]["available"], true);
  EXPECT_EQ(j["features"]["value"], p.features);
  if (p.features & IORING_FEAT_NODROP) {
    const auto& names = j["features"]["names"];
    EXPECT_NE(std::find(names.begin(), names.end(), "NODROP"), names.end());
  }
}

TEST(Probe, TaskrunFlagsAgreeWithARawSetup) {
  const json j = probe_json();
  const int major = std::stoi(sh("uname -r"));
  struct Case {
    const char* name;
    uint32_t flags;  // as the test tries it, companions included
  } cases[] = {
      {"SINGLE_ISSUER", IORING_SETUP_SINGLE_ISSUER},
      {"COOP_TASKRUN", IORING_SETUP_COOP_TASKRUN},
      {"DEFER_TASKRUN", IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER},
  };
  for (const auto& c : cases) {
    const json& f = flag_entry(j, c.name);
    const int err = raw_setup(c.flags);
    EXPECT_EQ(f["accepted"], err == 0) << c.name << ": the test's own io_uring_setup says " << err;
    EXPECT_EQ(f["tried"], c.flags) << c.name;
    if (major >= 6) {
      EXPECT_EQ(f["accepted"], true) << c.name << " is in every 6.x kernel (6.1+ for DEFER_TASKRUN)";
    }
    if (err) {
      EXPECT_EQ(f["errno"], strerrorname_np(err)) << c.name;
    } else {
      EXPECT_TRUE(f["errno"].is_null()) << c.name;
    }
  }
}

TEST(Probe, EveryFlagIsReportedOnceInBitOrder) {
  const json j = probe_json();
  uint32_t prev = 0;
  for (const auto& f : j["setup_flags"]) {
    const uint32_t bit = f["value"];
    EXPECT_EQ(bit & (bit - 1), 0u) << f["name"] << ": one bit";
    EXPECT_EQ(1u << f["bit"].get<unsigned>(), bit) << f["name"];
    EXPECT_GT(bit, prev) << f["name"];
    EXPECT_EQ(f["tried"].get<uint32_t>() & bit, bit) << f["name"];
    EXPECT_EQ(f["accepted"], f["errno"].is_null()) << f["name"];
    prev = bit;
  }
  EXPECT_EQ(j["setup_flags"].size(), 20u);
}

TEST(Probe, UnknownSetupBitIsRejectedWithEinval) {
  const json j = probe_json();
  bool saw31 = false;
  for (const auto& b : j["unknown_setup_bits"])
    if (b["bit"] == 31) {
      saw31 = true;
      EXPECT_EQ(b["accepted"], false);
      EXPECT_EQ(b["errno"], "EINVAL");
    }
  EXPECT_TRUE(saw31);
}

TEST(Probe, ReadAndNopAreSupported) {
  const json j = probe_json();
  const auto& ops = j["opcodes"]["ops"];
  ASSERT_TRUE(j["opcodes"]["errno"].is_null());
  ASSERT_EQ(ops.size(), j["opcodes"]["last_op"].get<size_t>() + 1);
  for (size_t i = 0; i < ops.size(); ++i) EXPECT_EQ(ops[i]["op"], i);
  EXPECT_EQ(ops[IORING_OP_NOP]["name"], "NOP");
  EXPECT_EQ(ops[IORING_OP_NOP]["supported"], true);
  EXPECT_EQ(ops[IORING_OP_READ]["name"], "READ");
  EXPECT_EQ(ops[IORING_OP_READ]["supported"], true);
}

TEST(Probe, SqpollFdinfoFieldsMatchTheTestsOwnRing) {
  io_uring ring{};
  io_uring_params p{};
  p.flags = IORING_SETUP_SQPOLL;
  p.sq_thread_idle = 10;
  if (int ret = io_uring_queue_init_params(4, &ring, &p); ret < 0)
    GTEST_SKIP() << "SQPOLL refused here: " << strerrorname_np(-ret);
  std::ifstream f("/proc/self/fdinfo/" + std::to_string(ring.ring_fd));
  std::stringstream text;
  text << f.rdbuf();
  io_uring_queue_exit(&ring);

  const json j = probe_json();
  ASSERT_TRUE(j["sqpoll_fdinfo"]["errno"].is_null());
  ASSERT_TRUE(j["sqpoll_fdinfo"]["read_error"].is_null());
  for (const char* key : {"SqThread", "SqThreadCpu", "SqTotalTime", "SqWorkTime"}) {
    const bool present = text.str().find(std::string("\n") + key + ":") != std::string::npos;
    EXPECT_EQ(j["sqpoll_fdinfo"]["fields"][key], present) << key;
  }
}

TEST(Probe, BlockDevicesMatchSysfs) {
  const json j = probe_json();
  std::set<std::string> expected, reported;
  for (const auto& e : std::filesystem::directory_iterator("/sys/block")) {
    const std::string name = e.path().filename();
    if (name.starts_with("ram") || name.starts_with("zram")) continue;
    if (name.starts_with("loop") && !std::filesystem::exists(e.path() / "loop/backing_file")) continue;
    expected.insert(name);
  }
  for (const auto& d : j["block_devices"]) {
    const std::string name = d["name"];
    reported.insert(name);
    const std::string q = "/sys/block/" + name + "/queue/";
    if (!std::filesystem::exists(q)) continue;  // detached since (another test's loop device)
    EXPECT_EQ(d["io_poll"], first_line(q + "io_poll") == "1") << name;
    EXPECT_EQ(d["logical_block_size"], std::stoul(first_line(q + "logical_block_size"))) << name;
    const std::string sched = first_line(q + "scheduler");
    if (sched.find('[') != std::string::npos) {
      // Built step by step: GCC 12 warns (-Wrestrict, wrongly) on "[" + s + "]".
      std::string active(1, '[');
      active += d["scheduler"].get<std::string>();
      active += ']';
      EXPECT_NE(sched.find(active), std::string::npos) << name << ": " << sched;
    }
  }
  // Devices may come and go between the two listings (other tests' loop devices).
  for (const auto& n : reported) EXPECT_TRUE(expected.count(n) || !std::filesystem::exists("/sys/block/" + n)) << n;
}

TEST(Probe, LoopDeviceShowsItsSectorSizeAndNoPolling) {
  TempDir dir;
  for (unsigned sector : {512u, 4096u}) {
    LoopDevice loop(dir.path(), {.size = "16m", .sector_size = sector});
    const json j = probe_json();
    const json* d = device_entry(j, loop.name());
    ASSERT_NE(d, nullptr) << loop.name() << " (" << sector << ") missing: " << j["block_devices"].dump();
    EXPECT_EQ((*d)["io_poll"], false) << "loop devices have no poll queues";
    EXPECT_EQ((*d)["logical_block_size"], sector);
  }
}

TEST(Probe, UnusedLoopDevicesAndRamDisksAreLeftOut) {
  const json j = probe_json();
  for (const auto& d : j["block_devices"]) {
    const std::string name = d["name"];
    EXPECT_FALSE(name.starts_with("ram") || name.starts_with("zram")) << name;
    if (name.starts_with("loop")) {
      EXPECT_TRUE(std::filesystem::exists("/sys/block/" + name + "/loop/backing_file")) << name;
    }
  }
}

TEST(Probe, ConsoleHasEverySection) {
  auto o = run_ioacct({"probe"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  for (const char* s : {"io_uring on Linux ", "io_uring_disabled", "RLIMIT_MEMLOCK", "\nsetup flags",
                        "DEFER_TASKRUN", "\nfeatures", "\nopcodes", " READ ", "\nSQPOLL", "\nblock devices"})
    EXPECT_NE(o.out.find(s), std::string::npos) << "missing '" << s << "' in:\n" << o.out;
  std::istringstream lines(o.out);
  size_t n = 0;
  for (std::string line; std::getline(lines, line); ++n) EXPECT_LE(line.size(), 100u) << line;
  EXPECT_LE(n, 50u) << "one screen";
}

TEST(Probe, FormatXmlIsAUsageError) {
  auto o = run_ioacct({"probe", "--format", "xml"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err, "error: --format: 'xml' is not one of console, json\n");
  auto u = run_ioacct({"probe", "--bogus"});
  EXPECT_EQ(u.exit_code, 2);
  EXPECT_NE(u.err.find("see 'ioacct probe --help'"), std::string::npos) << u.err;
}

TEST(Probe, WithoutIoUringItSaysSoAndSucceeds) {
  const RunOptions deny{.seccomp_deny_uring = true};
  const json j = probe_json(deny);
  EXPECT_EQ(j["io_uring"]["available"], false);
  EXPECT_EQ(j["io_uring"]["errno"], "ENOSYS");
  EXPECT_TRUE(j["features"]["value"].is_null());
  EXPECT_EQ(j["opcodes"]["errno"], "ENOSYS");
  EXPECT_EQ(j["sqpoll_fdinfo"]["errno"], "ENOSYS");
  for (const auto& f : j["setup_flags"]) EXPECT_EQ(f["errno"], "ENOSYS") << f["name"];
  // Devices need no io_uring: the same ones are listed (loop devices aside,
  // which other tests attach and detach meanwhile).
  auto non_loop = [](const json& doc) {
    std::set<std::string> names;
    for (const auto& d : doc["block_devices"])
      if (!d["name"].get<std::string>().starts_with("loop")) names.insert(d["name"]);
    return names;
  };
  EXPECT_EQ(non_loop(j), non_loop(probe_json()));

  auto o = run_ioacct({"probe"}, deny);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("NOT AVAILABLE"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("none accepted (every try: ENOSYS"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace ioacct::test
