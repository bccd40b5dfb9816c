// iostat's other flags in `ioacct stat`, meaning what they mean in sysstat's
// iostat: -t -m -k -z -c -d -N -h and -o JSON, each checked against iostat
// itself where both can look at the same thing.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

std::vector<std::string> habit_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<std::string> habit_cells(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string c; in >> c;) out.push_back(c);
  return out;
}

// header name -> cell, for the row of `device` under the last header that
// starts with `first` ("Device", or "r/s" for -h, whose name is last).
std::map<std::string, std::string> habit_row(const std::string& text, const std::string& device,
                                          const std::string& first = "Device") {
  std::vector<std::string> header;
  std::map<std::string, std::string> row;
  for (const std::string& l : habit_lines(text)) {
    const auto cells = habit_cells(l);
    if (cells.empty()) continue;
    if (cells[0] == first) {
      header = cells;
    } else if (!header.empty() && (first == "Device" ? cells.front() : cells.back()) == device) {
      row.clear();
      for (size_t i = 0; i < cells.size() && i < header.size(); ++i) row[header[i]] = cells[i];
    }
  }
  return row;
}

bool iostat_here() { return std::system("command -v iostat >/dev/null") == 0; }

TEST(StatHabits, MegabytesAreKilobytesOver1024AsIostatsAndSizesStayInKilobytes) {
  if (!iostat_here()) GTEST_SKIP() << "iostat (sysstat) is not installed: run scripts/setup";
  // Since boot: the figures move only by what a few ms add to hours.
  const Outcome kb = run_ioacct({"stat", "-x", "vda"}), mb = run_ioacct({"stat", "-x", "-m", "vda"});
  ASSERT_EQ(mb.exit_code, 0) << mb.err;
  const auto k = habit_row(kb.out, "vda"), m = habit_row(mb.out, "vda"), io = habit_row(sh("iostat -d -x -m vda"), "vda");
  EXPECT_EQ(m.count("rkB/s"), 0u) << mb.out;
  for (const char* dir : {"r", "w", "d"}) {
    SCOPED_TRACE(dir);
    const std::string kcol = std::string(dir) + "kB/s", mcol = std::string(dir) + "MB/s";
    ASSERT_TRUE(m.count(mcol)) << mb.out;
    const double want = std::stod(k.at(kcol)) / 1024;
    EXPECT_NEAR(std::stod(m.at(mcol)), want, 0.011 + want * 1e-3);
    ASSERT_TRUE(io.count(mcol)) << "iostat -m prints " << mcol;
    EXPECT_NEAR(std::stod(m.at(mcol)), std::stod(io.at(mcol)), 0.011 + want * 1e-3);
    const std::string sz = std::string(dir) + "areq-sz";
    EXPECT_NEAR(std::stod(m.at(sz)), std::stod(k.at(sz)), 0.011 + std::stod(k.at(sz)) * 1e-3) << "sizes stay in kB";
    EXPECT_NEAR(std::stod(m.at(sz)), std::stod(io.at(sz)), 0.011 + std::stod(k.at(sz)) * 1e-3) << "as iostat's do";
  }
  // -k is the default, spelled out.
  const Outcome k2 = run_ioacct({"stat", "-x", "-k", "vda"});
  EXPECT_EQ(habit_cells(habit_lines(k2.out).at(0)), habit_cells(habit_lines(kb.out).at(0)));
}

// -h: iostat -h --compact's line: the device last, sizes with a unit letter,
// percentages with '%'; the same columns as iostat's with the same units.
// --help stays the help, and -h is help everywhere else.
TEST(StatHabits, HumanIsIostatsHumanLineAndDashDashHelpIsTheHelp) {
  if (!iostat_here()) GTEST_SKIP() << "iostat (sysstat) is not installed: run scripts/setup";
  const Outcome o = run_ioacct({"stat", "-x", "-h", "vda"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string theirs_text = sh("iostat -d -x -h --compact vda");
  const auto ours = habit_row(o.out, "vda", "r/s"), theirs = habit_row(theirs_text, "vda", "r/s");
  ASSERT_GE(theirs.size(), 20u) << theirs_text;
  EXPECT_EQ(habit_cells(habit_lines(o.out).at(0)).back(), "Device") << o.out;
  const std::regex unit(R"(([0-9.]+)([kMGTP%]?))");
  for (const auto& [col, cell] : theirs) {
    SCOPED_TRACE(col);
    if (col == "Device") continue;
    ASSERT_TRUE(ours.count(col)) << o.out;
    std::smatch a, b;
    ASSERT_TRUE(std::regex_match(cell, a, unit)) << cell;
    ASSERT_TRUE(std::regex_match(ours.at(col), b, unit)) << ours.at(col);
    EXPECT_EQ(b[2].str(), a[2].str()) << "iostat " << cell << ", ioacct " << ours.at(col);
    EXPECT_NEAR(std::stod(b[1].str()), std::stod(a[1].str()), 0.11 + std::stod(a[1].str()) * 2e-3)
        << "iostat " << cell << ", ioacct " << ours.at(col);
  }
  const Outcome help = run_ioacct({"stat", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Usage: ioacct stat"), std::string::npos);
  EXPECT_EQ(o.out.find("Usage:"), std::string::npos) << "stat -h is not the help";
  EXPECT_NE(run_ioacct({"bench", "-h"}).out.find("Usage: ioacct bench"), std::string::npos) << "bench -h still is";
}

// -t: a time line before each report, in iostat's format: %x %X, or ISO
// 8601 with S_TIME_FORMAT=ISO.
TEST(StatHabits, TimeLineBeforeEachReportInIostatsFormat) {
  if (!iostat_here()) GTEST_SKIP() << "iostat (sysstat) is not installed: run scripts/setup";
  const std::regex plain(R"(\d\d/\d\d/\d\d \d\d:\d\d:\d\d)");
  const std::regex iso(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4})");
  const Outcome o = run_ioacct({"stat", "-t", "--no-bpf", "1", "2", "vda"}, {.env = {"LC_ALL=C"}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto ls = habit_lines(o.out);
  int stamps = 0;
  for (size_t i = 0; i + 1 < ls.size(); ++i)
    if (ls[i + 1].rfind("Device", 0) == 0) {
      EXPECT_TRUE(std::regex_match(ls[i], plain)) << ls[i];
      ++stamps;
    }
  EXPECT_EQ(stamps, 2) << o.out;
  EXPECT_TRUE(std::regex_match(habit_lines(sh("LC_ALL=C iostat -d -t vda")).at(2), plain)) << "iostat's own format";
  const Outcome i = run_ioacct({"stat", "-t", "vda"}, {.env = {"S_TIME_FORMAT=ISO"}});
  EXPECT_TRUE(std::regex_match(habit_lines(i.out).at(0), iso)) << i.out;
  EXPECT_TRUE(std::regex_match(habit_lines(sh("S_TIME_FORMAT=ISO iostat -d -t vda")).at(2), iso)) << "iostat's own format";
  const Outcome none = run_ioacct({"stat", "vda"});
  EXPECT_EQ(habit_lines(none.out).at(0).rfind("Device", 0), 0u) << "no time line without -t";
}

// -z: a device that completed nothing in the interval has no row, as in
// iostat -z watching the same two devices at the same time.
TEST(StatHabits, OmitIdleHidesTheIdleDeviceAsIostatDoes) {
  if (!iostat_here()) GTEST_SKIP() << "iostat (sysstat) is not installed: run scripts/setup";
  TempDir dir;
  LoopDevice busy(dir.path()), idle(dir.path());
  std::thread watch;
  Outcome with_z, without_z;
  std::string iostat_out;
  RunOptions bench_opts;
  bench_opts.action_after = "ioacct bench:";
  bench_opts.action = [&] {
    watch = std::thread([&] {
      std::thread iostat([&] { iostat_out = sh("iostat -d -x -z -y 1 1 " + busy.name() + " " + idle.name()); });
      with_z = run_ioacct({"stat", "-z", "-y", "--no-bpf", "1", "1", busy.name(), idle.name()});
      without_z = run_ioacct({"stat", "-y", "--no-bpf", "1", "1", busy.name(), idle.name()});
      iostat.join();
    });
  };
  const Outcome b = run_ioacct({"bench", "--rw", "randread", "--rate-iops", "300", "--iodepth", "1", "--runtime", "4s",
                                busy.path()},
                               bench_opts);
  if (watch.joinable()) watch.join();
  ASSERT_EQ(b.exit_code, 0) << b.err;
  ASSERT_EQ(with_z.exit_code, 0) << with_z.err;
  EXPECT_FALSE(habit_row(with_z.out, busy.name()).empty()) << with_z.out;
  EXPECT_TRUE(habit_row(with_z.out, idle.name()).empty()) << with_z.out;
  EXPECT_FALSE(habit_row(without_z.out, idle.name()).empty()) << "without -z the idle device has its row: " << without_z.out;
  EXPECT_FALSE(habit_row(iostat_out, busy.name()).empty()) << iostat_out;
  EXPECT_TRUE(habit_row(iostat_out, idle.name()).empty()) << "iostat -z hides it too: " << iostat_out;
}

// -o JSON is --format json: JSON lines that parse, one per report; -d is the
// device report (the default).
TEST(StatHabits, OutputJsonIsFormatJsonAndDIsTheDeviceReport) {
  const Outcome o = run_ioacct({"stat", "-d", "-o", "JSON", "vda"}), f = run_ioacct({"stat", "--format", "json", "vda"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto a = stdout_json(o), b = stdout_json(f);
  EXPECT_EQ(a["schema_version"], b["schema_version"]);
  EXPECT_EQ(a["devices"][0]["device"], "vda");
  EXPECT_EQ(a["devices"][0].size(), b["devices"][0].size());
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"stat", "-o", "xml"}, "error: -o: 'xml' is not JSON (iostat's only -o format); for the console table leave out "
                              "-o\n"},
      {{"stat", "-o", "JSON", "--format", "console"}, "error: -o: JSON, but --format says console; give one of them\n"},
      {{"stat", "-m", "-k"}, "error: -m: MB/s, but -k asks for kB/s; give one of them\n"},
  };
  for (const auto& [args, line] : refused) {
    const Outcome r = run_ioacct(args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, line);
  }
}

// -c: iostat's avg-cpu report, the same figures from the same /proc/stat;
// alone it is the only report, with -d the device report follows.
TEST(StatHabits, CpuReportIsIostatsAvgCpu) {
  if (!iostat_here()) GTEST_SKIP() << "iostat (sysstat) is not installed: run scripts/setup";
  // Since boot: a few ms apart, the shares move by far less than 0.05.
  const Outcome o = run_ioacct({"stat", "-c"});
  const std::string theirs = sh("iostat -c");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto ours_lines = habit_lines(o.out), their_lines = habit_lines(theirs);
  ASSERT_GE(ours_lines.size(), 2u) << o.out;
  EXPECT_EQ(ours_lines[0], their_lines.at(2)) << "iostat's header, to the space";
  const auto a = habit_cells(ours_lines[1]), b = habit_cells(their_lines.at(3));
  ASSERT_EQ(a.size(), 6u) << o.out;
  ASSERT_EQ(b.size(), 6u) << theirs;
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(std::stod(a[i]), std::stod(b[i]), 0.05) << habit_cells(ours_lines[0])[i + 1];
  EXPECT_EQ(ours_lines[1].size(), their_lines.at(3).size()) << "iostat's widths";
  EXPECT_EQ(o.out.find("Device"), std::string::npos) << "-c alone: no device report";
  const Outcome both = run_ioacct({"stat", "-c", "-d", "vda"});
  EXPECT_EQ(habit_lines(both.out).at(0).rfind("avg-cpu:", 0), 0u) << both.out;
  EXPECT_FALSE(habit_row(both.out, "vda").empty()) << both.out;
  const auto j = stdout_json(run_ioacct({"stat", "-c", "-o", "JSON"}));
  EXPECT_NEAR(j["cpu"]["idle_pct"].get<double>(), std::stod(b[5]), 0.05) << j.dump();
  EXPECT_TRUE(j["devices"].empty());
  EXPECT_FALSE(stdout_json(run_ioacct({"stat", "-o", "JSON", "vda"})).contains("cpu"))
      << "the JSON has cpu only when -c asks for it";
}

// -N: a device-mapper device by its name, as iostat -N prints it.
TEST(StatHabits, DeviceMapperNamesWithN) {
  std::ifstream devices("/proc/devices");
  const std::string all((std::istreambuf_iterator<char>(devices)), std::istreambuf_iterator<char>());
  if (all.find("device-mapper") == std::string::npos)
    GTEST_SKIP() << "this kernel has no device-mapper (not in /proc/devices): no dm device to name";
  TempDir dir;
  LoopDevice loop(dir.path());
  const std::string name = "ioacct-habits-" + std::to_string(getpid());
  ASSERT_EQ(std::system(("dmsetup create " + name + " --table '0 2048 linear " + loop.path() + " 0'").c_str()), 0);
  const std::string dm = std::filesystem::canonical("/dev/mapper/" + name).filename().string();  // dm-N
  const Outcome named = run_ioacct({"stat", "-N", dm}), plain = run_ioacct({"stat", dm});
  const std::string theirs = iostat_here() ? sh("iostat -d -x -N " + dm) : "";
  std::system(("dmsetup remove " + name).c_str());
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_FALSE(habit_row(named.out, name).empty()) << named.out;
  EXPECT_TRUE(habit_row(named.out, dm).empty()) << named.out;
  EXPECT_FALSE(habit_row(plain.out, dm).empty()) << "without -N the kernel's name: " << plain.out;
  if (!theirs.empty()) {
    EXPECT_FALSE(habit_row(theirs, name).empty()) << "iostat -N names it the same: " << theirs;
  }
}

}  // namespace
}  // namespace ioacct::test
