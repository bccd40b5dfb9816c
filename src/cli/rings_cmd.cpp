#include "cli/rings_cmd.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "cli/cli.hpp"
#include "cli/option_rows.hpp"
#include "cli/signals.hpp"
#include "common/errors.hpp"
#include "common/output.hpp"
#include "common/units.hpp"
#include "monitor/rings.hpp"
#include "report/rings_report.hpp"

namespace ioacct {
namespace {

int to_ms(std::chrono::nanoseconds d) { return static_cast<int>(d.count() / 1'000'000); }

constexpr OptionRow<RingsArgs> kRingsRows[] = {
  {"-i,--interval", "DURATION", "Refresh every DURATION like top (default: one snapshot)", &RingsArgs::interval},
  {"--count", "N", "With -i: stop after N refreshes (default: until Ctrl-C)", &RingsArgs::count},
  {"--pid", "PID", "Only this process's rings", &RingsArgs::pid},
  {"--sample", "DURATION", "One snapshot: SQ-thread rates over this long (default 1s; 0s: no rates)",
   &RingsArgs::sample},
  format_row<RingsArgs>("console or json (default console; json with -i: one object per line)"),
};

}  // namespace

CLI::App* add_rings_command(CLI::App& app, RingsArgs& a) {
  return add_command(
      app, "rings",
      "Every io_uring on the machine: per ring its queues, per SQ thread its CPU and useful work.",
      "Rings are found through /proc/*/fd links to anon_inode:[io_uring] and read from /proc/PID/fdinfo; "
      "processes and fds that go away during a scan are skipped.\nSee docs/cli.md.",
      a, kRingsRows);
}

int run_rings_command(const RingsArgs& a) {
  const Format format = parse_format("--format", a.format, {Format::Console, Format::Json});
  std::optional<int> pid;
  if (!a.pid.empty()) {
    const uint64_t p = parse_id("--pid", a.pid, "a process id");
    if (p == 0 || p > 4'194'304) throw UsageError(fmt::format("--pid: {} is not a process id", a.pid));
    pid = static_cast<int>(p);
    std::error_code ec;
    if (!std::filesystem::exists(fmt::format("/proc/{}", *pid), ec))
      throw RuntimeError(fmt::format("--pid: no process {}", *pid));
  }
  // StopSignals::wait takes int milliseconds: a day is plenty and fits.
  constexpr std::chrono::hours kLongest{24};
  const auto sample = parse_duration("--sample", a.sample);
  if (sample > kLongest) throw UsageError(fmt::format("--sample: {} is too long (at most 24h)", a.sample));
  std::optional<std::chrono::nanoseconds> interval;
  if (!a.interval.empty()) {
    interval = parse_duration("--interval", a.interval);
    if (*interval < std::chrono::milliseconds(10))
      throw UsageError(fmt::format("--interval: {} is too short (at least 10ms)", a.interval));
    if (*interval > kLongest) throw UsageError(fmt::format("--interval: {} is too long (at most 24h)", a.interval));
  }
  std::optional<uint64_t> count;
  if (!a.count.empty()) {
    if (!interval) throw UsageError("--count: only with -i/--interval");
    count = parse_count("--count", a.count);
    if (*count == 0) throw UsageError("--count: must be at least 1");
  }
  const bool json = format == Format::Json;
  const bool tty = !json && isatty(STDOUT_FILENO) == 1;
  StopSignals stop;

  auto show = [&](const RingsView& v) {
    if (json) write_output((interval ? rings_to_json(v).dump() : rings_to_json(v).dump(2)) + "\n");
    else write_output((tty && interval ? "\033[H\033[2J" : "") + format_rings_console(v));
  };
  auto warn_unreadable = [&](const RingScan& s, bool& said) {
    if (s.unreadable && !said)
      fmt::print(stderr, "ioacct rings: {} process{} could not be read (no permission for /proc/PID/fd): run as "
                 "root to see their rings\n", s.unreadable, s.unreadable == 1 ? "" : "es");
    said = s.unreadable > 0;
  };
  bool said = false;
  RingScan before = scan_rings(pid);
  if (!interval) {
    if (sample.count() > 0) {
      if (stop.wait(to_ms(sample))) return kExitOk;  // interrupted before the second sample: nothing measured
      const RingScan after = scan_rings(pid);
      warn_unreadable(after, said);
      show(rings_view(before, after));
    } else {
      warn_unreadable(before, said);
      show(rings_view({}, before));
    }
    return kExitOk;
  }
  for (uint64_t n = 0; !count || n < *count; ++n) {
    if (stop.wait(to_ms(*interval))) break;
    RingScan after = scan_rings(pid);
    warn_unreadable(after, said);
    if (!tty && !json && n) write_output("\n");
    show(rings_view(before, after));
    before = std::move(after);
    std::error_code ec;
    if (pid && !std::filesystem::exists(fmt::format("/proc/{}", *pid), ec)) {
      fmt::print(stderr, "ioacct rings: process {} exited\n", *pid);
      break;
    }
  }
  return kExitOk;
}

}  // namespace ioacct
