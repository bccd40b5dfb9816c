#include "cli/stat_cmd.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <memory>
#include <set>

#include "cli/cli.hpp"
#include "cli/signals.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/output.hpp"
#include "monitor/attach.hpp"
#include "common/units.hpp"
#include "monitor/stat.hpp"
#include "report/stat_report.hpp"

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
      "between the block layer's accounting points), dev% (issue to completion) and the time-weighted "
      "in-flight distribution, from eBPF.");
  s->footer(
      "Like iostat: the first report covers the time since boot unless -y; INTERVAL in seconds (or a duration: "
      "500ms), COUNT reports, then exit (without COUNT: until Ctrl-C). Without root (CAP_BPF+CAP_PERFMON) or BTF "
      "the exact columns are '-' and stderr says why.\nSee docs/cli.md.");
  s->add_flag("-x", a.extended, "extended statistics (always on; accepted so iostat habits carry over)");
  s->add_flag("-p", a.partitions, "also the partitions of each disk reported");
  s->add_flag("-y", a.omit_first, "omit the first report (statistics since boot)");
  s->add_flag("--latency", a.latency, "per-device latency percentiles (p50, p99, max) from an in-kernel histogram");
  s->add_flag("--no-bpf", a.no_bpf, "io_ticks columns only: do not load the eBPF programs");
  s->add_flag("--no-dev", a.no_dev,
              "no dev% column: the issue..complete span is not traced, which halves the events per I/O and "
              "the tracker's cost");
  s->add_option("--format", a.format, "console or json (JSON lines: one object per report)")->type_name("FORMAT");
  s->add_option("args", a.args, "[INTERVAL [COUNT]] [DEVICE...]: devices by name (vda, vda1, loop0) or path")
      ->type_name("");
  return s;
}

int run_stat_command(const StatArgs& a) {
  require_one_of("--format", a.format, {"console", "json"});
  StatLoop loop;
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
  loop.omit_first = a.omit_first;
  if (a.omit_first && loop.interval_ns == 0)
    throw UsageError("-y: needs an INTERVAL (without one the only report is the one since boot)");

  const std::vector<StatDevice> devices = select_stat_devices(read_file("/proc/diskstats"), names, a.partitions);
  if (devices.empty())
    fmt::print(stderr, "ioacct stat: no whole disk has done any I/O since boot; name a device to watch it anyway\n");

  StopSignals signals;
  StatFormat f;
  f.latency = a.latency;
  std::unique_ptr<BusyTracker> tracker;
  // The exact columns need an interval: the since-boot report has none.
  if (!a.no_bpf && loop.interval_ns > 0 && !devices.empty()) {
    TrackerAttach attached = attach_tracker(busy_devices(devices), a.latency, !a.no_dev);
    tracker = std::move(attached.tracker);
    if (tracker) {
      f.source = tracker->source();
      fmt::print(stderr, "ioacct stat: exact busy time from {} (eBPF) on {} device{}\n", tracker->source(),
                 devices.size(), devices.size() == 1 ? "" : "s");
    } else {
      f.unavailable = attached.unavailable;
      fmt::print(stderr, "ioacct stat: no busy%/dev%/in-flight columns: {}\n", *attached.unavailable);
    }
  }

  std::set<std::string> warned, warned_lost, warned_dropped;
  auto emit = [&](const StatReport& r) {
    for (const StatRow& row : r.rows)
      if (row.contended && *row.contended > 0 && warned_dropped.insert(row.device.name).second)
        fmt::print(stderr,
                   "ioacct stat: {}: {} change{} of the in-flight count lost the compare-and-swap race 16 times and "
                   "{} dropped, so busy% and the in-flight columns are off for that report: please report it with "
                   "the device and CPU count\n",
                   row.device.name, *row.contended, *row.contended == 1 ? "" : "s",
                   *row.contended == 1 ? "was" : "were");
    for (const StatRow& row : r.rows)
      if (row.lost && *row.lost > 0 && warned_lost.insert(row.device.name).second)
        fmt::print(stderr,
                   "ioacct stat: {}: the kernel ran no BPF program for {} completion{} (it skips them now and then "
                   "under load); found afterwards, so busy% may read up to {:.2f} points low in that report: the JSON "
                   "has busy_unsure_pct for every report, and less load on the CPUs makes it rarer\n",
                   row.device.name, *row.lost, *row.lost == 1 ? "" : "s", row.unsure_pct.value_or(0));
    for (const StatRow& row : r.rows)
      if (row.untracked && *row.untracked > 0 && warned.insert(row.device.name).second)
        fmt::print(stderr,
                   "ioacct stat: {} request{} on {} started before the tracker attached and {} left out of busy%/dev% "
                   "(the first interval may read low; the next ones are whole)\n",
                   *row.untracked, *row.untracked == 1 ? "" : "s", row.device.name,
                   *row.untracked == 1 ? "is" : "are");
    write_output(a.format == "json" ? stat_to_json(r, f).dump() + "\n" : format_stat_console(r, f));
  };
  run_stat_loop(loop, devices, tracker.get(), [&](int ms) { return signals.wait(ms); }, emit);
  tracker.reset();  // detach before saying goodbye
  if (signals.received()) return 128 + signals.received();
  return kExitOk;
}

}  // namespace ioacct
