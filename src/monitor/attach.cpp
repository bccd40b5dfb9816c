#include "monitor/attach.hpp"

#include "common/errors.hpp"

namespace ioacct {

TrackerAttach attach_tracker(const std::vector<BusyDevice>& devices, bool latency, bool device_span) {
  TrackerAttach a;
  try {
    a.tracker = BusyTracker::attach(devices, latency, device_span);
  } catch (const NotAvailable& e) {
    a.unavailable = e.what();
  }
  return a;
}

std::vector<BusyDevice> busy_devices(const std::vector<StatDevice>& devices) {
  std::vector<BusyDevice> out;
  out.reserve(devices.size());
  for (const StatDevice& d : devices) out.push_back({d.name, d.major, d.minor});
  return out;
}

std::vector<BusyDevice> busy_devices(const std::map<std::string, DiskStats>& disks) {
  std::vector<BusyDevice> out;
  out.reserve(disks.size());
  for (const auto& [name, d] : disks) out.push_back({name, d.major, d.minor});
  return out;
}

}  // namespace ioacct
