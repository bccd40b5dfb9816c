#include "cli/stat_cmd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "cli/cli.hpp"
#include "cli/signals.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/output.hpp"
#include "common/units.hpp"
#include "monitor/stat.hpp"
#include "report/stat_report.hpp"
#include "trace/attach.hpp"

namespace ioacct {
namespace {

bool looks_numeric(const std::string& s) { return !s.empty() && std::isdigit(static_cast<unsigned char>(s[0])); }

// iostat's INTERVAL is whole seconds ("2"); a duration with a unit ("500ms") works too.
uint64_t parse_interval(const std::string& s) {
  const bool plain = s.find_first_not_of("0123456789.") == std::string::npos;
  const auto ns = parse_duration("INTERVAL", plain ? s + "s" : s).count();
  if (ns < 1'000'000)
    throw UsageError(fmt::format("INTERVAL: '{}' is shorter than 1ms (iostat's interval is in seconds: try 1)", s));
  return static_cast<uint64_t>(ns);
}

}  // namespace

CLI::App* add_stat_command(CLI::App& app, StatArgs& a) {
  CLI::App* s = app.add_subcommand(
      "stat",
      "iostat -x for block devices, with the exact busy time beside io_ticks' %util: busy% (>= 1 request "
      "between the block layer's accounting points, with how unsure it is) and the time-weighted in-flight "
      "distribution, from eBPF.");
  s->footer(
      "Like iostat: the first report covers the time since boot unless -y; INTERVAL in seconds (or a duration: "
      "500ms), COUNT reports, then exit (without COUNT: until Ctrl-C). Without root (CAP_BPF+CAP_PERFMON) or BTF "
      "the exact columns are '-' and stderr says why.\nSee docs/cli.md.");
  s->add_flag("-x", a.extended, "extended statistics (always on; accepted so iostat habits carry over)");
  s->add_flag("-p", a.partitions, "also the partitions of each disk reported");
  s->add_flag("-y", a.omit_first, "omit the first report (statistics since boot)");
  s->add_flag("--latency", a.latency, "per-device latency percentiles (p50, p99, max) from an in-kernel histogram");
  s->add_flag("--no-bpf", a.no_bpf, "io_ticks columns only: do not load the eBPF programs");
  s->add_flag("--dev", a.dev,
              "also dev%: >= 1 request between block_rq_issue and the end of its accounting (one more tracepoint, "
              "with a clock read, per I/O)");
  s->add_option("--by", a.by,
                "cgroup or process: a table per device of who made it busy, by share of the exact busy time, with "
                "I/Os, bytes, time in flight and latency (process adds a program where requests start, which "
                "costs the submitting task; see docs/cli.md)")
      ->type_name("WHO");
  s->add_flag("--bpf-stats", a.bpf_stats,
              "turn on the kernel's BPF run-time statistics while running, so that the JSON's tracker cost includes "
              "the programs' own time (it costs every BPF program on the machine two clock reads per run)");
  // iostat's -h is human-readable output, not help: here too, and --help is
  // the help (docs/cli.md, "ioacct stat").
  s->set_help_flag("--help", "Print this help message and exit");
  s->add_flag("-t", a.time, "print the time before each report (local time; S_TIME_FORMAT=ISO: ISO 8601, as iostat)");
  s->add_flag("-k", a.kilobytes, "kB/s columns (the default)");
  s->add_flag("-m", a.megabytes, "MB/s columns: rMB/s, wMB/s, dMB/s (kB/s / 1024, as iostat; request sizes stay in kB)");
  s->add_flag("-z", a.omit_idle, "omit the devices that completed no I/O in the interval");
  s->add_flag("-c", a.cpu_only, "the CPU report (iostat's avg-cpu) only; with -d, both");
  s->add_flag("-d", a.device_only, "the device report only (the default: without -c it is the only report)");
  s->add_flag("-N", a.dm_names, "device-mapper devices by their names (dm-0 as vg-root, from /sys/block/dm-N/dm/name)");
  s->add_flag("-h", a.human, "human-readable: sizes with a unit (12.0k, 85.3M), percentages with '%', the device name "
              "last (iostat -h --compact)");
  s->add_option("-o", a.output, "JSON: the same as --format json (ioacct's JSON lines, not iostat's layout)")
      ->type_name("JSON");
  s->add_option("--format", a.format, "console or json (JSON lines: one object per report)")->type_name("FORMAT");
  s->add_option("args", a.args, "[INTERVAL [COUNT]] [DEVICE...]: devices by name (vda, vda1, loop0) or path")
      ->type_name("");
  return s;
}

namespace {

// --format as given, or as -o says; iostat's -o takes only JSON, in any case.
Format output_format(const StatArgs& a) {
  const Format given = parse_format("--format", a.format, {Format::Console, Format::Json});
  if (a.output.empty()) return given;
  std::string upper;
  for (char c : a.output) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper != "JSON") throw UsageError(fmt::format("-o: '{}' is not JSON (iostat's only -o format); "
                                                    "for the console table leave out -o", a.output));
  if (given == Format::Console && a.format_given)
    throw UsageError("-o: JSON, but --format says console; give one of them");
  return Format::Json;
}

// -N: the device-mapper name of every dm device among `devices`.
std::map<std::string, std::string> dm_names(const std::vector<StatDevice>& devices) {
  std::map<std::string, std::string> out;
  for (const StatDevice& d : devices) {
    if (!d.name.starts_with("dm-")) continue;
    std::string name;
    try {
      name = read_file("/sys/block/" + d.name + "/dm/name");
    } catch (const RuntimeError&) {
      continue;  // gone since it was listed, or no dm folder: its kernel name stays
    }
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
    if (!name.empty()) out[d.name] = name;
  }
  return out;
}

// -z: iostat's test (write_stats): a device that completed no read, write,
// discard or flush in the interval has no row.
void omit_idle(StatReport& r) {
  std::erase_if(r.rows, [](const StatRow& row) {
    return row.io.r_s == 0 && row.io.w_s == 0 && row.io.d_s == 0 && row.io.f_s == 0;
  });
}

// What the reporters print, as the flags say.
StatFormat stat_format(const StatArgs& a, const std::vector<StatDevice>& devices) {
  StatFormat f;
  f.latency = a.latency;
  f.cpu = a.cpu_only;
  f.devices = !a.cpu_only || a.device_only;
  f.megabytes = a.megabytes;
  f.human = a.human;
  if (a.time) {
    // Read before any thread starts, and nothing here sets the environment.
    const char* s_time = std::getenv("S_TIME_FORMAT");  // NOLINT(concurrency-mt-unsafe)
    f.time_format = s_time && std::string_view(s_time) == "ISO" ? "%FT%T%z" : "%x %X";
  }
  if (a.dm_names) f.names = dm_names(devices);
  return f;
}

// iostat's [INTERVAL [COUNT]] [DEVICE...]: the interval and count into
// `loop`; returns the devices named.
std::vector<std::string> positional_args(const StatArgs& a, StatLoop& loop) {
  std::vector<std::string> names;
  size_t i = 0;
  if (i < a.args.size() && looks_numeric(a.args[i])) loop.interval_ns = parse_interval(a.args[i++]);
  if (i < a.args.size() && looks_numeric(a.args[i])) {
    loop.count = parse_count("COUNT", a.args[i++]);
    if (loop.count == 0) throw UsageError("COUNT: must be at least 1 (leave it out to run until Ctrl-C)");
  }
  for (; i < a.args.size(); ++i) {
    if (looks_numeric(a.args[i]))
      throw UsageError(fmt::format("{}: INTERVAL and COUNT come before the devices", a.args[i]));
    names.push_back(a.args[i]);
  }
  return names;
}

// --by as given; None without it.
BusyBy parse_by(const StatArgs& a) {
  if (a.by.empty()) return BusyBy::None;
  if (a.by == "cgroup") return BusyBy::Cgroup;
  if (a.by == "process") return BusyBy::Process;
  throw UsageError(fmt::format("--by: '{}' is not cgroup or process", a.by));
}

}  // namespace

int run_stat_command(const StatArgs& a) {
  const Format format = output_format(a);
  const BusyBy by = parse_by(a);
  if (by != BusyBy::None && a.no_bpf)
    throw UsageError("--by: needs the eBPF programs, but --no-bpf turns them off; give one of them");
  if (a.megabytes && a.kilobytes) throw UsageError("-m: MB/s, but -k asks for kB/s; give one of them");
  StatLoop loop;
  const std::vector<std::string> names = positional_args(a, loop);
  loop.omit_first = a.omit_first;
  if (a.omit_first && loop.interval_ns == 0)
    throw UsageError("-y: needs an INTERVAL (without one the only report is the one since boot)");

  const std::vector<StatDevice> devices = select_stat_devices(read_file("/proc/diskstats"), names, a.partitions);
  if (devices.empty())
    fmt::print(stderr, "ioacct stat: no whole disk has done any I/O since boot; name a device to watch it anyway\n");

  StopSignals signals;
  StatFormat f = stat_format(a, devices);
  std::unique_ptr<BusyTracker> tracker;
  // The exact columns need an interval: the since-boot report has none, so
  // `stat N 1` (only that report, as iostat) loads nothing.
  const bool interval_reports = loop.interval_ns > 0 && (loop.count != 1 || loop.omit_first);
  // -c alone: no device report, so no exact columns to load for.
  if (!a.no_bpf && interval_reports && !devices.empty() && (!a.cpu_only || a.device_only)) {
    TrackerAttach attached = attach_tracker(
        busy_devices(devices), {.latency = a.latency, .device_span = a.dev, .bpf_stats = a.bpf_stats, .by = by});
    tracker = std::move(attached.tracker);
    if (tracker) {
      f.source = tracker->source();
      fmt::print(stderr, "ioacct stat: exact busy time from {} (eBPF) on {} device{}\n", tracker->source(),
                 devices.size(), devices.size() == 1 ? "" : "s");
    } else {
      f.unavailable = attached.unavailable;
      fmt::print(stderr, "ioacct stat: no busy%/dev%/in-flight columns{}: {}\n",
                 by != BusyBy::None ? " and no --by tables" : "", *attached.unavailable);
    }
  }

  std::set<std::string> warned_lost, warned_unseen, warned_late, warned_invisible, warned_gone;
  bool warned_error = false;
  auto emit = [&](StatReport r) {
    if (r.busy_error && !warned_error) {
      warned_error = true;
      fmt::print(stderr, "ioacct stat: the exact columns of this report are '-': cannot read the busy tracker: {}\n",
                 *r.busy_error);
    }
    // A device that left /proc/diskstats has no row from then on: say so
    // once, rather than let it vanish from the table.
    for (const StatDevice& d : devices) {
      const bool listed = std::any_of(r.rows.begin(), r.rows.end(), [&](const StatRow& row) { return row.device.name == d.name; });
      if (!listed && warned_gone.insert(d.name).second)
        fmt::print(stderr, "ioacct stat: {}: gone (no longer in /proc/diskstats: unplugged, or a loop device "
                   "detached); its row stops; run ioacct stat again to watch a device of that name once it is back\n",
                   d.name);
    }
    for (const StatRow& row : r.rows) {
      const std::string& n = row.device.name;
      if (row.lost && *row.lost > 0 && warned_lost.insert(n).second)
        fmt::print(stderr,
                   "ioacct stat: {}: the kernel ran no BPF program for the end of {} request{} (docs/design.md, "
                   "\"Lost events\"); the time since each was last seen in flight is counted as unsure, not busy: "
                   "busy% may read up to {:.2f} points low in that report, and the JSON has busy_unsure_pct for every "
                   "report\n",
                   n, *row.lost, *row.lost == 1 ? "" : "s", row.unsure_pct.value_or(0));
      if (row.invisible && *row.invisible > 0 && warned_invisible.insert(n).second)
        fmt::print(stderr,
                   "ioacct stat: {}: diskstats counted {} completion{} that no BPF program saw (docs/design.md, \"Lost "
                   "events\"); the time they may have taken, bounded by diskstats' own latency sum, is counted as "
                   "unsure: see busy_unsure_pct in the JSON\n",
                   n, *row.invisible, *row.invisible == 1 ? "" : "s");
      if (row.unseen_starts && *row.unseen_starts > 0 && warned_unseen.insert(n).second)
        fmt::print(stderr,
                   "ioacct stat: {}: {} request{} {} first seen later than the tracker's sweep should have found {} "
                   "in flight; {} time before that is unsure (docs/design.md, \"A request first seen late\")\n",
                   n, *row.unseen_starts, *row.unseen_starts == 1 ? "" : "s", *row.unseen_starts == 1 ? "was" : "were",
                   *row.unseen_starts == 1 ? "it" : "them", *row.unseen_starts == 1 ? "its" : "their");
      if (row.late_ns && *row.late_ns > 0 && row.window_ns && warned_late.insert(n).second)
        fmt::print(stderr,
                   "ioacct stat: {}: the previous report's busy% + unsure% may have been low by up to {:.2f} points: "
                   "a request its sweep did not find was already in flight then\n",
                   n, 100.0 * static_cast<double>(*row.late_ns) / static_cast<double>(*row.window_ns));
    }
    if (a.omit_idle) omit_idle(r);
    write_output(format == Format::Json ? stat_to_json(r, f).dump() + "\n" : format_stat_console(r, f));
  };
  if (tracker) loop.who_by = by;
  run_stat_loop(loop, devices, tracker.get(), [&](int ms) { return signals.wait(ms); }, emit);
  tracker.reset();  // detach before saying goodbye
  if (signals.received()) return 128 + signals.received();
  return kExitOk;
}

}  // namespace ioacct
