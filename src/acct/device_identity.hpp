#pragma once
// What a block device is, from sysfs: its model and firmware revision, for
// the report's header (a figure is only comparable with the device named).
#include <optional>
#include <string>

namespace ioacct {

struct DeviceIdentity {
  std::string disk;                  // the whole disk the name is on: "nvme0n1" for "nvme0n1p2"
  std::optional<std::string> model;  // "Samsung SSD 980 PRO 1TB", "virtio_blk", "loop on /var/tmp/x"
  std::optional<std::string> firmware;  // NVMe firmware_rev, SCSI/ATA rev; none where sysfs has none
};

// Reads SYSFS/class/block/DEVICE (a partition resolves to its disk):
// device/model (with device/vendor before it when that is text, as SCSI
// reports "ATA"), device/firmware_rev or device/rev; where there is no model
// file, the driver's name (virtio_blk), a loop device's backing file, or none.
DeviceIdentity device_identity(const std::string& device, const std::string& sysfs = "/sys");

}  // namespace ioacct
