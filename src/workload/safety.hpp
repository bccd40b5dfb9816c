#pragma once
// Write safety: nobody should lose a filesystem to a typo, nor to an alias
// (a second loop device on a mounted image, a partition's disk, the image
// file itself).
#include <sys/types.h>

#include <string>
#include <vector>

#include "workload/storage.hpp"

namespace ioacct {

// What stands in the way of writing a target.
struct DeviceFindings {
  std::vector<std::string> in_use;      // mounted, swap, stacked, held: never written
  std::vector<std::string> signatures;  // filesystem, partition table, RAID (block devices)
};

// What a write would reach: the target's path, whether it is a block device
// (then `rdev` is its dev_t) and the bytes it would write, down to their root.
struct WriteReach {
  std::string path;
  bool is_block = false;
  dev_t rdev = 0;
  Extent extent;
};

// Looks at every block device whose bytes overlap the target's, the target
// included: its partitions, the devices it lies on, loop devices on it or on
// the same backing file, and whatever is stacked on any of them
// (sysfs holders): mounts (/proc/self/mountinfo, by device number and by
// source), swap (/proc/swaps), an exclusive open by someone else (O_EXCL)
// and, for a block device, signatures (libblkid).
DeviceFindings inspect_writes(const WriteReach& target, const BlockStack& stack);

// Throws UsageError, one line listing everything found, unless writing is
// allowed: never while anything overlapping is in use, nor into a file of a
// pseudo-filesystem; a block device with signatures, or a blank one, only
// with --destroy-data. A regular file that nothing in use reaches is always
// allowed.
void check_writable(const WriteReach& target, const BlockStack& stack, bool destroy_data);

// The name of the pseudo-filesystem whose statfs magic is `f_type` (procfs,
// sysfs, tracefs, ...), or nullptr for one that stores data. Their regular
// files are the kernel's settings and controls: a write changes the system,
// never measures a device.
const char* pseudo_filesystem(long f_type);

// Throws UsageError when `fd`, opened as `path` for writing, is a file of a
// pseudo-filesystem (checked on the open file, so a path swapped after
// check_writable looked at it is caught too).
void check_not_pseudo(int fd, const std::string& path);

}  // namespace ioacct
