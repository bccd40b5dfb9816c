#include "cli/top_cmd.hpp"

#include <curses.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "cli/cli.hpp"
#include "cli/signals.hpp"
#include "cli/top_session.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/output.hpp"
#include "common/units.hpp"

namespace ioacct {
namespace {

int frame_ms(std::chrono::nanoseconds d) { return static_cast<int>(d.count() / 1'000'000); }

// ncurses for as long as it lives: the terminal is given back as it was
// however the screen ends (q, a signal, an exception).
class Screen {
 public:
  Screen() {
    // newterm, not initscr: a terminal ncurses does not know is an error
    // line of ours, not ncurses' own message and exit.
    screen_ = newterm(nullptr, stdout, stdin);
    if (!screen_) {
      const char* term = std::getenv("TERM");  // NOLINT(concurrency-mt-unsafe): read before any thread starts
      throw RuntimeError(fmt::format("top: terminal type '{}' is not one ncurses knows: set TERM (e.g. "
                                     "TERM=xterm-256color), or give --batch N for plain-text frames",
                                     term ? term : ""));
    }
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    timeout(100);  // getch() waits at most this long: signals and the next frame are looked at in between
  }
  ~Screen() {
    endwin();
    delscreen(screen_);
  }
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;
  static void draw(const std::vector<std::string>& lines) {
    erase();
    for (size_t i = 0; i < lines.size() && static_cast<int>(i) < LINES; ++i)
      mvaddnstr(static_cast<int>(i), 0, lines[i].c_str(), COLS);
    refresh();
  }

 private:
  SCREEN* screen_ = nullptr;
};

// One key, as its help line says (kTopHelp); false: quit.
bool on_key(int key, TopSession& s) {
  TopView& v = s.view();
  switch (key) {
    case 'q':
    case 'Q':
      return false;
    case 's':
      v.sort = next_sort(v.sort);
      break;
    case 'd': {  // all, then each device in turn, then all again
      const auto& devs = s.devices();
      size_t at = 0;
      while (v.device && at < devs.size() && devs[at].name != *v.device) ++at;
      if (!v.device) at = 0;
      else ++at;
      v.device = at < devs.size() ? std::optional<std::string>(devs[at].name) : std::nullopt;
      break;
    }
    case 'c':
      s.switch_by();
      break;
    case 'p':
      v.paused = !v.paused;
      if (!v.paused) s.restart();  // the next frame covers the time since
      break;
    default:
      break;
  }
  return true;
}

// The interactive screen: a frame every interval, keys in between.
int run_screen(TopSession& s, std::chrono::nanoseconds interval, StopSignals& signals) {
  Screen screen;
  s.view().width = COLS;
  s.view().height = LINES;
  Screen::draw(s.redraw());
  auto due = std::chrono::steady_clock::now() + interval;
  for (;;) {
    if (signals.wait(0)) return 128 + signals.received();
    const int key = getch();
    if (key == KEY_RESIZE) {
      s.view().width = COLS;
      s.view().height = LINES;
      Screen::draw(s.redraw());
    } else if (key != ERR) {
      if (!on_key(key, s)) return kExitOk;
      Screen::draw(s.redraw());
    }
    if (std::chrono::steady_clock::now() < due) continue;
    due += interval;
    if (!s.view().paused) Screen::draw(s.next());
  }
}

// --batch N: N frames, each its lines then a blank line, to stdout.
int run_batch(TopSession& s, uint64_t frames, std::chrono::nanoseconds interval, StopSignals& signals) {
  for (uint64_t i = 0; i < frames; ++i) {
    if (signals.wait(frame_ms(interval))) return 128 + signals.received();
    std::string text;
    for (const std::string& line : s.next()) text += line + "\n";
    write_output(text + "\n");
  }
  return kExitOk;
}

}  // namespace

CLI::App* add_top_command(CLI::App& app, TopArgs& a) {
  CLI::App* t = app.add_subcommand(
      "top", "Live view of who is using the disks: devices, then cgroups or processes by share of the exact busy "
             "time, then io_uring SQ threads.");
  t->footer(std::string("Keys: ") + kTopHelp + ".\nSee docs/cli.md.");
  t->add_option("--interval", a.interval, "Refresh every DURATION (default 1s)")->type_name("DURATION");
  t->add_option("--batch", a.batch, "Print N plain-text frames to stdout and exit (no terminal needed)")
      ->type_name("N");
  t->add_option("--by", a.by, "cgroup (default) or process: what the middle table is by; the c key switches")
      ->type_name("WHO");
  t->add_option("devices", a.devices, "DEVICE...: by name or path (default: every disk that has done I/O)")
      ->type_name("");
  return t;
}

int run_top_command(const TopArgs& a) {
  const auto interval = parse_duration("--interval", a.interval);
  if (interval < std::chrono::milliseconds(100) || interval > std::chrono::hours(1))
    throw UsageError(fmt::format("--interval: {} is out of range (100ms to 1h)", a.interval));
  if (a.by != "cgroup" && a.by != "process")
    throw UsageError(fmt::format("--by: '{}' is not cgroup or process", a.by));
  uint64_t frames = 0;
  if (!a.batch.empty()) {
    frames = parse_count("--batch", a.batch);
    if (frames == 0) throw UsageError("--batch: must be at least 1");
  } else if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)) {
    throw UsageError("top needs a terminal (stdin and stdout): give --batch N for N plain-text frames");
  }
  const std::vector<StatDevice> devices = select_stat_devices(read_file("/proc/diskstats"), a.devices, false);
  StopSignals signals;
  TopSession session(devices, a.by == "process" ? BusyBy::Process : BusyBy::Cgroup,
                     static_cast<double>(interval.count()) / 1e9);
  if (session.view().no_exact)
    fmt::print(stderr, "ioacct top: no exact busy time and no cgroup or process table: {}\n", *session.view().no_exact);
  if (frames) return run_batch(session, frames, interval, signals);
  return run_screen(session, interval, signals);
}

}  // namespace ioacct
