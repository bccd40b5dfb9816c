#include "cli/export_cmd.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <prometheus/exposer.h>

#include <cstdio>
#include <memory>

#include "cli/cli.hpp"
#include "cli/signals.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/units.hpp"
#include "monitor/attach.hpp"
#include "monitor/export.hpp"

namespace ioacct {
namespace {

struct Listen {
  std::string host;  // as civetweb wants it: "127.0.0.1", "[::1]"
  uint16_t port = 0;
  bool loopback = false;
};

// ADDR:PORT, ADDR an IPv4 or a bracketed IPv6 address (no names: what would
// be bound must be plain to see).
Listen parse_listen(const std::string& text) {
  const auto bad = [&](std::string_view why) {
    return UsageError(fmt::format("--listen: '{}' {} (give ADDR:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)", text, why));
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) throw bad("has no port");
  Listen l;
  l.host = text.substr(0, colon);
  const uint64_t port = parse_count("--listen", text.substr(colon + 1));
  if (port > 65535) throw bad("has a port above 65535");
  l.port = static_cast<uint16_t>(port);
  in_addr v4{};
  in6_addr v6{};
  if (l.host.size() > 2 && l.host.front() == '[' && l.host.back() == ']' &&
      inet_pton(AF_INET6, l.host.substr(1, l.host.size() - 2).c_str(), &v6) == 1) {
    l.loopback = IN6_IS_ADDR_LOOPBACK(&v6);
  } else if (inet_pton(AF_INET, l.host.c_str(), &v4) == 1) {
    l.loopback = (ntohl(v4.s_addr) >> 24) == 127;
  } else {
    throw bad("is not an IPv4 address or a bracketed IPv6 address");
  }
  return l;
}

}  // namespace

CLI::App* add_export_command(CLI::App& app, ExportArgs& a) {
  CLI::App* e = app.add_subcommand(
      "export", "Serve Prometheus metrics: per device exact busy time and io_ticks, in-flight depth, I/Os, bytes, "
                "latency; per SQ thread CPU and work; per ring pending SQEs/CQEs and overflow.");
  e->footer(
      "The endpoint has no authentication: it listens on loopback unless --listen names another address.\n"
      "Without root (CAP_BPF+CAP_PERFMON) or BTF the exact device metrics are left out and stderr says why.\n"
      "Metric names and meanings: docs/metrics.md. See docs/cli.md.");
  e->add_option("--listen", a.listen, "ADDR:PORT to serve /metrics on (default 127.0.0.1:9464; port 0: any free one)")
      ->type_name("ADDR:PORT");
  e->add_option("--min-interval", a.min_interval,
                "Scrapes closer together than this get the previous walk's figures (default 1s)")
      ->type_name("DURATION");
  e->add_flag("--no-bpf", a.no_bpf, "io_ticks and ring metrics only: do not load the eBPF programs");
  e->add_flag("--no-latency", a.no_latency, "No request latency histogram (the tracker then does less per request)");
  e->add_option("devices", a.devices, "Devices by name (vda, loop0) or path (default: every whole disk that has done I/O)")
      ->type_name("DEVICE");
  return e;
}

int run_export_command(const ExportArgs& a) {
  const Listen listen = parse_listen(a.listen);
  const auto min_interval = parse_duration("--min-interval", a.min_interval);
  const std::vector<StatDevice> devices = select_stat_devices(read_file("/proc/diskstats"), a.devices, false);
  if (devices.empty())
    fmt::print(stderr, "ioacct export: no whole disk has done any I/O since boot; name a device to export it anyway\n");

  StopSignals stop;  // before any thread: the HTTP server's threads inherit the blocked signals
  std::unique_ptr<BusyTracker> tracker;
  if (!a.no_bpf && !devices.empty()) {
    TrackerAttach attached = attach_tracker(busy_devices(devices), !a.no_latency);
    tracker = std::move(attached.tracker);
    if (!tracker)
      fmt::print(stderr, "ioacct export: no exact busy, in-flight or latency metrics: {}\n", *attached.unavailable);
  }
  auto collector = std::make_shared<ExportCollector>(devices, tracker.get(),
                                                     static_cast<uint64_t>(min_interval.count()));
  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(fmt::format("{}:{}", listen.host, listen.port), 2);
  } catch (const std::exception& e) {
    throw RuntimeError(fmt::format("--listen: cannot listen on {}: {} (is the port in use?)", a.listen, e.what()));
  }
  exposer->RegisterCollectable(collector);
  const auto ports = exposer->GetListeningPorts();
  const int port = ports.empty() ? listen.port : ports.front();
  if (!listen.loopback)
    fmt::print(stderr, "warning: serving on {}, which is not loopback, and the endpoint has no authentication: anyone "
               "who can reach it can read these metrics; put it behind a firewall or listen on 127.0.0.1\n", listen.host);
  fmt::print(stderr, "ioacct export: serving http://{}:{}/metrics for {} device{}{}; Ctrl-C stops\n", listen.host,
             port, devices.size(), devices.size() == 1 ? "" : "s",
             tracker ? fmt::format(", exact busy time from {} (eBPF)", tracker->source()) : "");
  while (!stop.wait(1000)) {
  }
  exposer.reset();  // no scrape may run while the tracker goes
  tracker.reset();
  return kExitOk;
}

}  // namespace ioacct
