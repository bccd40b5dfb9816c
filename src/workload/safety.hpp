#pragma once
// Write safety for block devices: nobody should lose a filesystem to a typo.
#include <string>
#include <vector>

namespace ioacct {

// What stands in the way of writing to a block device.
struct DeviceFindings {
  std::vector<std::string> in_use;      // mounted, swap, held: never written
  std::vector<std::string> signatures;  // filesystem, partition table, RAID
};

// Looks at the device, its partitions and everything stacked on it
// (/sys/class/block/X/holders, recursively): mounts (/proc/self/mountinfo),
// swap (/proc/swaps), an exclusive open (O_EXCL) and signatures (libblkid).
DeviceFindings inspect_block_device(const std::string& path);

// Throws UsageError, one line listing everything found, unless writing is
// allowed: never while in use; with signatures or on a blank device only with
// --destroy-data.
void check_block_device_writable(const std::string& path, bool destroy_data);

}  // namespace ioacct
