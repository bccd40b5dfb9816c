// ioacct's fio logs drawn by fio's own plotting tool. The issue asks for a
// chart from fio-plot, which is on PyPI only (unreachable from this
// machine and from a fresh Debian 12 without it); fio2gnuplot, which
// Debian's fio package ships, reads the same write_bw_log/write_iops_log
// files and renders them with gnuplot. Each tool's logs of one job file
// are drawn, and the charts must be there and hold the lines: a log fio's
// tool cannot read gives no trace, or a trace without its points.
// fio_generate_plots draws the latency logs (lat, slat, clat) as well.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

// The PNG files fio2gnuplot drew into `out` from the logs of `kind` ("-b"
// bandwidth, "-i" IOPS) in `dir`, and what it printed.
struct Drawn {
  std::string said;
  std::vector<std::string> pngs;
};

Drawn draw(const std::string& dir, const char* kind) {
  const std::string out = dir + "/charts" + kind;
  sh("rm -rf " + out + " && mkdir -p " + out);
  Drawn d;
  d.said = sh("cd " + dir + " && fio2gnuplot " + kind + " -g -t ioacct -d " + out + " 2>&1; echo rc=$?");
  const std::string list = sh("cd " + out + " && ls *.png 2>/dev/null");
  for (size_t at = 0; at < list.size();) {
    const size_t nl = std::min(list.find('\n', at), list.size());
    if (nl > at) d.pngs.push_back(out + "/" + list.substr(at, nl - at));
    at = nl + 1;
  }
  return d;
}

bool is_png(const std::string& path, size_t& size) {
  std::ifstream f(path, std::ios::binary);
  std::string head(8, '\0');
  f.read(head.data(), 8);
  f.seekg(0, std::ios::end);
  size = static_cast<size_t>(f.tellg());
  return head == std::string("\x89PNG\r\n\x1a\n", 8);
}

TEST(FioPlot, FiosOwnPlotterDrawsIoacctsLogsAsItDrawsFios) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  sh("dd if=/dev/urandom of=" + data + " bs=1M count=16 status=none");
  const std::string job = std::string(IOACCT_SOURCE_DIR) + "/tests/fio/logs.fio";
  for (const char* tool : {"fio", "ioacct"}) {
    SCOPED_TRACE(tool);
    const std::string logs = dir.path() + "/" + tool;
    sh("mkdir -p " + logs);
    if (std::string(tool) == "fio") {
      sh("IOACCT_TARGET=" + data + " LOGDIR=" + logs + " fio --output=/dev/null " + job);
    } else {
      const auto o = run_ioacct({"bench", "--fio", job}, {.env = {"IOACCT_TARGET=" + data, "LOGDIR=" + logs}});
      ASSERT_EQ(o.exit_code, 0) << o.err;
    }
    for (const auto& [kind, log] : {std::pair{"-b", "x_bw.1.log"}, std::pair{"-i", "x_iops.1.log"}}) {
      const Drawn d = draw(logs, kind);
      EXPECT_NE(d.said.find(log), std::string::npos) << "fio2gnuplot did not take " << log << ":\n" << d.said;
      EXPECT_NE(d.said.find("rc=0"), std::string::npos) << d.said;
      EXPECT_EQ(d.said.find("rror"), std::string::npos) << d.said;
      // Its raw, smoothed and trend charts of the log, and the summaries
      // (average, min, max, stddev) over the logs it read.
      ASSERT_GE(d.pngs.size(), 7u) << d.said;
      for (const std::string& png : d.pngs) {
        size_t size = 0;
        EXPECT_TRUE(is_png(png, size)) << png;
        EXPECT_GT(size, 8000u) << png << ": too small to hold the axes and a trace";
      }
    }
    // fio_generate_plots, the other plotter Debian's fio ships, draws lat,
    // IOPS, slat, clat and bandwidth from the same folder; it stops, exit
    // 1, at the first kind it finds no log of.
    const std::string said = sh("cd " + logs + " && fio_generate_plots run 2>&1; echo rc=$?");
    EXPECT_NE(said.find("rc=0"), std::string::npos) << said;
    for (const char* kind : {"lat", "iops", "slat", "clat", "bw"}) {
      const std::string svg = slurp(logs + "/run-" + kind + ".svg");
      EXPECT_NE(svg.find("<svg"), std::string::npos) << kind;
      EXPECT_NE(svg.find("Queue depth"), std::string::npos) << kind << ": no trace's key";
      EXPECT_GT(svg.size(), 4000u) << kind;
    }
  }
}

}  // namespace
}  // namespace ioacct::test
