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
#include "trace/bpf/busy_tracker.hpp"

namespace ioacct {

struct TrackerAttach {
  std::unique_ptr<BusyTracker> tracker;    // null when it could not be attached
  std::optional<std::string> unavailable;  // then why: NotAvailable's message
};

// BusyTracker::attach, with NotAvailable turned into `unavailable`; any other
// error is thrown as it is.
TrackerAttach attach_tracker(const std::vector<BusyDevice>& devices, const BusyOptions& options = {});

// What to watch: the devices of a diskstats sample (in its order: by name).
// stat and export watch the devices they chose (monitor/stat.hpp).
std::vector<BusyDevice> busy_devices(const std::map<std::string, DiskStats>& disks);

}  // namespace ioacct
