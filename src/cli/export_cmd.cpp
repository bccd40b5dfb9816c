#include "cli/export_cmd.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli/cli.hpp"
#include "cli/signals.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/units.hpp"
#include "monitor/export.hpp"
#include "monitor/web_config.hpp"
#include "monitor/web_server.hpp"
#include "trace/attach.hpp"

namespace ioacct {

CLI::App* add_export_command(CLI::App& app, ExportArgs& a) {
  CLI::App* e = app.add_subcommand(
      "export", "Serve Prometheus metrics: per device exact busy time and io_ticks, read/write time, in-flight "
                "depth, I/Os, bytes, latency; SQ threads' CPU and work and the rings' queues, by ring kind.");
  e->footer(
      "Every scrape reads the counters afresh. Without a web config the endpoint has neither TLS nor "
      "authentication: it listens on loopback unless --listen names another address.\n"
      "Without root (CAP_BPF+CAP_PERFMON) or BTF the exact device metrics are left out and stderr says why.\n"
      "Metric names and meanings: docs/metrics.md.");
  e->add_option("--listen", a.listen,
                "ADDR:PORT to serve /metrics on (default 127.0.0.1:19464; port 0: any free one)")
      ->type_name("ADDR:PORT");
  e->add_option("--web.config.file", a.web_config,
                "node_exporter's web config (YAML): TLS certificate and key, client CA, basic_auth_users with bcrypt "
                "hashes")
      ->type_name("FILE");
  e->add_option("--device-include", a.device_include,
                "Without DEVICEs: export only the whole disks whose name this regex matches")
      ->type_name("REGEX");
  e->add_option("--device-exclude", a.device_exclude,
                "Without DEVICEs: leave out the whole disks whose name this regex matches (default "
                "'^(z?ram|loop|fd)\\d+$')")
      ->type_name("REGEX");
  e->add_flag("--per-process", a.per_process,
              "Also per-ring and per-SQ-thread series labelled pid, comm, fd/tid (default: aggregates by ring kind)");
  e->add_option("--per-process-limit", a.per_process_limit,
                "With --per-process: at most this many rings get series, lowest pid and fd first (default 100)")
      ->type_name("COUNT");
  e->add_flag("--per-cgroup", a.per_cgroup,
              "ioacct_cgroup_* series: each device's busy time, I/Os, bytes and latency by cgroup (one more eBPF "
              "program per I/O, at the completion); the top K cgroups by busy time, the rest as cgroup=\"other\"");
  e->add_option("--per-cgroup-top", a.per_cgroup_top,
                "With --per-cgroup: K, the cgroups per device with series of their own (default 20)")
      ->type_name("K");
  e->add_option("--min-interval", a.min_interval,
                "A scrape less than this after the last walk gets that walk's figures (default 0s: every scrape "
                "walks; keep it at most half the scrape interval)")
      ->type_name("DURATION");
  e->add_flag("--no-bpf", a.no_bpf, "io_ticks and ring metrics only: do not load the eBPF programs");
  e->add_flag("--no-latency", a.no_latency, "No request latency histogram (saves its series; the programs do the same either way)");
  e->add_flag("--dev", a.dev, "Also ioacct_device_driver_busy_seconds_total (one more tracepoint, with a clock read, per I/O)");
  e->add_flag("--bpf-stats", a.bpf_stats,
              "Turn on the kernel's BPF run-time statistics while serving, so that ioacct_tracker_cpu_seconds_total "
              "has the programs' own time (it costs every BPF program on the machine two clock reads per run)");
  e->add_option("devices", a.devices,
                "Devices by name (vda, loop0) or path (default: every whole disk that has done I/O, less "
                "--device-exclude)")
      ->type_name("DEVICE");
  return e;
}

namespace {

void require_value(std::string_view flag, const std::optional<std::string>& v) {
  if (v && v->empty()) throw UsageError(fmt::format("{}: needs a value, not an empty string", flag));
}

}  // namespace

int run_export_command(const ExportArgs& a) {
  const ListenAddress listen = parse_listen_address(a.listen);
  const auto min_interval = parse_duration("--min-interval", a.min_interval);
  require_value("--web.config.file", a.web_config);
  require_value("--device-include", a.device_include);
  require_value("--device-exclude", a.device_exclude);
  ExportOptions options;
  options.per_process = a.per_process;
  options.per_process_limit = parse_count("--per-process-limit", a.per_process_limit);
  if (options.per_process_limit == 0)
    throw UsageError("--per-process-limit: must be at least 1 (leave out --per-process for no per-process series)");
  options.per_cgroup = a.per_cgroup;
  options.per_cgroup_top = parse_count("--per-cgroup-top", a.per_cgroup_top);
  if (options.per_cgroup_top == 0)
    throw UsageError("--per-cgroup-top: must be at least 1 (leave out --per-cgroup for no per-cgroup series)");
  if (a.per_cgroup && a.no_bpf)
    throw UsageError("--per-cgroup: needs the eBPF programs, but --no-bpf turns them off; give one of them");
  if ((a.device_include || a.device_exclude) && !a.devices.empty())
    throw UsageError(fmt::format("{}: filters the devices chosen when none are named; name devices or filter, not "
                                 "both", a.device_include ? "--device-include" : "--device-exclude"));
  const DeviceFilter filter = make_device_filter(a.device_include, a.device_exclude);
  const WebConfig web = a.web_config ? load_web_config(*a.web_config) : WebConfig{};
  const std::vector<StatDevice> devices = select_export_devices(read_file("/proc/diskstats"), a.devices, filter);
  if (devices.empty())
    fmt::print(stderr, "ioacct export: no whole disk {}; name a device to export it anyway\n",
               a.device_include ? "matches --device-include" : "has done any I/O since boot, less --device-exclude");

  StopSignals stop;  // before any thread: the HTTP server's threads inherit the blocked signals
  std::unique_ptr<BusyTracker> tracker;
  if (!a.no_bpf && !devices.empty()) {
    TrackerAttach attached = attach_tracker(busy_devices(devices),
                                            {.latency = !a.no_latency,
                                             .device_span = a.dev,
                                             .bpf_stats = a.bpf_stats,
                                             .by = a.per_cgroup ? BusyBy::Cgroup : BusyBy::None});
    tracker = std::move(attached.tracker);
    if (!tracker)
      fmt::print(stderr, "ioacct export: no exact busy, in-flight or latency metrics: {}\n", *attached.unavailable);
  }
  ExportCollector collector(devices, tracker.get(), options, static_cast<uint64_t>(min_interval.count()));
  std::unique_ptr<WebServer> server =
      WebServer::start(listen, web, [&collector] { return collector.exposition(); });
  if (!listen.loopback && web.users.empty())
    fmt::print(stderr, "warning: serving on {} without authentication: anyone who can reach it can read these "
               "metrics (process names included); give --web.config.file with basic_auth_users (and "
               "tls_server_config), or listen on 127.0.0.1\n", listen.host);
  else if (!listen.loopback && !web.tls)
    fmt::print(stderr, "warning: serving on {} with basic authentication but without TLS: passwords cross the "
               "network in clear; add tls_server_config to --web.config.file\n", listen.host);
  fmt::print(stderr, "ioacct export: serving {}://{}:{}/metrics for {} device{}{}{}; Ctrl-C stops\n",
             web.tls ? "https" : "http", listen.host, server->port(), devices.size(), devices.size() == 1 ? "" : "s",
             tracker ? fmt::format(", exact busy time from {} (eBPF)", tracker->source()) : "",
             web.users.empty() ? "" : ", basic authentication");
  while (!stop.wait(1000)) {
    for (const std::string& name : collector.take_gone())
      fmt::print(stderr, "warning: {} is gone (no longer in /proc/diskstats: unplugged, or a loop device detached): its "
                 "series stop; restart ioacct export to watch a device of that name again\n", name);
  }
  server.reset();  // no scrape may run while the tracker goes
  tracker.reset();
  return kExitOk;
}

}  // namespace ioacct
