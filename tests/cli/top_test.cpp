// `ioacct top` in a real terminal: tmux runs it in an 80x24 pane, presses
// its keys (send-keys) and reads the screen back (capture-pane); and
// --batch without one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

// Paced O_DIRECT reads, GAP seconds apart, until the file STOP exists (or
// 60 s have passed).
constexpr const char* kReader = R"(import mmap, os, sys, time
dev, gap, stop = sys.argv[1], float(sys.argv[2]), sys.argv[3]
fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
end = time.monotonic() + 60
i = 0
while not os.path.exists(stop) and time.monotonic() < end:
    os.preadv(fd, [buf], (i % 1024) * 4096)
    i += 1
    time.sleep(gap)
)";

// A tmux server of the test's own (its own socket), one 80x24 session.
class Tmux {
 public:
  explicit Tmux(const std::string& command) : sock_("ioacct-top-" + std::to_string(getpid())) {
    sh(tmux() + " new-session -d -s top -x 80 -y 24 '" + command + "'");
  }
  ~Tmux() { std::system((tmux() + " kill-server 2>/dev/null").c_str()); }
  Tmux(const Tmux&) = delete;
  Tmux& operator=(const Tmux&) = delete;
  std::string screen() const { return sh(tmux() + " capture-pane -p -t top"); }
  void key(const std::string& k) const { sh(tmux() + " send-keys -t top " + k); }
  bool running() const { return std::system((tmux() + " has-session -t top 2>/dev/null").c_str()) == 0; }
  // Waits up to `s` seconds for the screen to hold `text`, and to hold it
  // again 100 ms later (a capture may land in the middle of a redraw);
  // returns the later screen.
  std::string wait_for(const std::string& text, double s = 5) const {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(s);
    std::string now = screen();
    for (;;) {
      const bool held = now.find(text) != std::string::npos;
      if (std::chrono::steady_clock::now() >= end) return now;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const std::string later = screen();
      if (held && later.find(text) != std::string::npos) return later;
      now = later;
    }
  }

 private:
  std::string tmux() const { return "tmux -L " + sock_; }
  std::string sock_;
};

class TwoCgroups {
 public:
  TwoCgroups() : base_("/sys/fs/cgroup/blkio/ioacct-top-" + std::to_string(getpid())) {
    sh("mkdir -p " + base_ + "/busy " + base_ + "/light");
  }
  ~TwoCgroups() { std::system(("rmdir " + base_ + "/busy " + base_ + "/light " + base_ + " 2>/dev/null").c_str()); }
  TwoCgroups(const TwoCgroups&) = delete;
  TwoCgroups& operator=(const TwoCgroups&) = delete;
  std::string path(const std::string& g) const { return base_.substr(std::string("/sys/fs/cgroup/blkio").size()) + "/" + g; }
  std::string run_in(const std::string& g, const std::string& cmd) const {
    return "sh -c 'echo $$ > " + base_ + "/" + g + "/cgroup.procs; exec " + cmd + "'";
  }

 private:
  std::string base_;
};

// The line of `screen` that holds `text`, or "".
std::string line_with(const std::string& screen, const std::string& text) {
  std::istringstream in(screen);
  for (std::string line; std::getline(in, line);)
    if (line.find(text) != std::string::npos) return line;
  return "";
}

// The device filter the header names ("all", "vda"), or "".
std::string filtered(const std::string& screen) {
  const std::string header = line_with(screen, "ioacct top");
  const size_t at = header.find(" device ");
  if (at == std::string::npos) return "";
  const std::string rest = header.substr(at + 8);
  return rest.substr(0, rest.find(' '));
}

// The frame against the same run's `stat --by cgroup --format json`, then
// every key as the help line says.
TEST(Top, AFrameInTmuxMatchesStatAndEveryKeyDoesWhatItsHelpSays) {
  if (access("/sys/fs/cgroup/blkio/cgroup.procs", W_OK) != 0)
    GTEST_SKIP() << "no cgroup v1 blkio hierarchy to make the test's cgroups in";
  TempDir dir;
  LoopDevice loop(dir.path(), {.size = "8m", .remove_at_end = true});  // frees the test's cgroups at once
  const std::string reader = dir.path() + "/reader.py";
  std::ofstream(reader) << kReader;
  TwoCgroups cg;
  // The busy cgroup reads ~10x as often as the light one, until the test
  // is done with the keys.
  const std::string stop = dir.path() + "/stop";
  std::thread busy([&] { sh(cg.run_in("busy", "/usr/bin/python3 " + reader + " " + loop.path() + " 0.002 " + stop)); });
  std::thread light([&] { sh(cg.run_in("light", "/usr/bin/python3 " + reader + " " + loop.path() + " 0.05 " + stop)); });
  struct Stop {
    std::string file;
    std::thread &a, &b;
    ~Stop() {
      std::ofstream{file};
      a.join();
      b.join();
    }
  } stop_readers{stop, busy, light};
  Tmux t(std::string(IOACCT_BINARY) + " top --interval 500ms " + loop.name() + " vda");
  Outcome stat = run_ioacct({"stat", "--by", "cgroup", "--format", "json", "-y", "2", "1", loop.name()});
  std::string s = t.wait_for(cg.path("light"));
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  const auto j = nlohmann::json::parse(stat.out);
  const auto& who = j["devices"].at(0)["who"];
  ASSERT_GE(who.size(), 2u) << who;
  EXPECT_EQ(who[0]["cgroup"], cg.path("busy")) << "stat: the busy cgroup first: " << who;
  // The frame: the device with its exact busy%, the cgroups in stat's order.
  EXPECT_NE(s.find("ioacct top"), std::string::npos) << s;
  EXPECT_NE(line_with(s, "DEVICE").find("busy%"), std::string::npos) << s;
  EXPECT_FALSE(line_with(s, loop.name() + " ").empty()) << s;
  // Sorted by share: the rows' share% never rises. Which cgroup leads a
  // 0.5 s frame is the device's to say: under the ASan suite's load the
  // light reader's lone requests once waited 0.33 ms each, the busy one's
  // 0.01, and light led (0.69% against 0.43%).
  EXPECT_NE(s.find(cg.path("busy")), std::string::npos) << s;
  {
    std::istringstream in(s.substr(s.find("BY cgroup")));
    std::string line, dev;
    std::getline(in, line);
    double last = 1e9, share = 0;
    while (std::getline(in, line) && (std::istringstream(line) >> dev >> share))
      if (line.find('/') != std::string::npos) {
        EXPECT_LE(share, last) << "top: by share, highest first\n" << s;
        last = share;
      }
  }
  EXPECT_NE(s.find("q quit  s sort  d device  c cgroup/process  p pause"), std::string::npos) << s;
  for (const std::string& line : [&] {
         std::vector<std::string> v;
         std::istringstream in(s);
         for (std::string l; std::getline(in, l);) v.push_back(l);
         return v;
       }())
    EXPECT_LE(line.size(), 80u) << "fits 80 columns: " << line;

  t.key("s");
  EXPECT_NE(t.wait_for("sort io/s").find("sort io/s"), std::string::npos);
  t.key("s");
  EXPECT_NE(t.wait_for("sort MB/s").find("sort MB/s"), std::string::npos);
  t.key("s");
  EXPECT_NE(t.wait_for("sort share").find("sort share"), std::string::npos);
  // d: all, then each device in /proc/diskstats order (a loop device made
  // late comes after vda), then all again.
  auto press_d_until = [&](const std::string& want) {
    for (int i = 0; i < 3 && filtered(t.screen()) != want; ++i) {
      const std::string was = filtered(t.screen());
      t.key("d");
      for (int k = 0; k < 30 && filtered(t.screen()) == was; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return t.screen();
  };
  s = press_d_until(loop.name());
  ASSERT_EQ(filtered(s), loop.name()) << s;
  EXPECT_TRUE(line_with(s, "vda ").empty()) << "vda's row is filtered out\n" << s;
  EXPECT_FALSE(line_with(s, loop.name() + " ").empty()) << s;
  s = press_d_until("all");
  EXPECT_EQ(filtered(s), "all") << "d comes back to all devices: " << s;
  t.key("p");
  s = t.wait_for("[paused]");
  ASSERT_NE(s.find("[paused]"), std::string::npos) << s;
  // The capture may land in the middle of the redraw that shows it: the
  // frame is whole once two captures agree.
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    const std::string again = t.screen();
    if (again == s) break;
    s = again;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // two intervals: a running top would redraw
  EXPECT_EQ(t.screen(), s) << "paused: the frame stays";
  t.key("p");
  s = t.wait_for("by cgroup  sort share  device all\n");
  EXPECT_EQ(s.find("[paused]"), std::string::npos) << s;
  t.key("c");
  s = t.wait_for("python3");
  EXPECT_NE(s.find("by process"), std::string::npos) << s;
  EXPECT_NE(s.find("python3"), std::string::npos) << "by process, the readers' pids and names\n" << s;
  t.key("q");
  for (int i = 0; i < 30 && t.running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(t.running()) << "q quits";
}

TEST(Top, BatchPrintsNFramesWithoutATerminal) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.size = "8m"});
  const Outcome o = run_ioacct({"top", "--batch", "2", "--interval", "200ms", loop.name()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  size_t frames = 0;
  for (size_t at = o.out.find("ioacct top "); at != std::string::npos; at = o.out.find("ioacct top ", at + 1)) ++frames;
  EXPECT_EQ(frames, 2u) << o.out;
  EXPECT_NE(o.out.find(loop.name()), std::string::npos) << o.out;
}

TEST(Top, WithoutATerminalOrWithBadFlagsItSaysWhat) {
  expect_refused(run_ioacct({"top"}), {"terminal", "--batch"});
  expect_refused(run_ioacct({"top", "--batch", "0"}), {"--batch"});
  expect_refused(run_ioacct({"top", "--by", "pod", "--batch", "1"}), {"--by", "pod"});
  expect_refused(run_ioacct({"top", "--interval", "1ms", "--batch", "1"}), {"--interval"});
}

}  // namespace
}  // namespace ioacct::test
