#pragma once
// Attaching the busy tracker, written once for bench, stat and export: the
// devices to watch, then the tracker, or the one line that says why there is
// none (no permission, no BTF, no tracepoints).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acct/procfs.hpp"
#include "monitor/bpf/busy_tracker.hpp"
#include "monitor/stat.hpp"

namespace ioacct {

struct TrackerAttach {
  std::unique_ptr<BusyTracker> tracker;    // null when it could not be attached
  std::optional<std::string> unavailable;  // then why: NotAvailable's message
};

// BusyTracker::attach, with NotAvailable turned into `unavailable`; any other
// error is thrown as it is.
TrackerAttach attach_tracker(const std::vector<BusyDevice>& devices, bool latency, bool device_span = true);

// What to watch: the devices stat and export chose, or the devices of a
// diskstats sample (in its order: by name).
std::vector<BusyDevice> busy_devices(const std::vector<StatDevice>& devices);
std::vector<BusyDevice> busy_devices(const std::map<std::string, DiskStats>& disks);

}  // namespace ioacct
