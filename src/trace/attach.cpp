#include "trace/attach.hpp"

#include "common/errors.hpp"

namespace ioacct {

TrackerAttach attach_tracker(const std::vector<BusyDevice>& devices, const BusyOptions& options) {
  TrackerAttach a;
  try {
    a.tracker = BusyTracker::attach(devices, options);
  } catch (const NotAvailable& e) {
    a.unavailable = e.what();
  }
  return a;
}

std::vector<BusyDevice> busy_devices(const std::map<std::string, DiskStats>& disks) {
  std::vector<BusyDevice> out;
  out.reserve(disks.size());
  for (const auto& [name, d] : disks) out.push_back({name, d.major, d.minor});
  return out;
}

}  // namespace ioacct
