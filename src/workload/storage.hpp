#pragma once
// Where a target's bytes really live. A path names a file or a device, but
// a hard link, a symlink, a bind mount, a partition and its disk, or two loop
// devices on one image are different names for the same bytes. Followed down
// through partitions and loop devices, every byte range lands on a *root*: a
// regular file (st_dev, st_ino) or a block device nothing further is seen
// under. Two ranges touch the same bytes exactly when they land on the same
// root and overlap there.
//
// The mapping is a pure function over plain data (unit-tested);
// read_block_stack() takes the data from sysfs and the loop driver.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ioacct {

// A regular file (kind File: dev = st_dev, ino = st_ino) or a block device
// nothing further is seen under (kind Disk: dev = its dev_t, ino = 0).
struct StorageRoot {
  enum class Kind { File, Disk } kind = Kind::Disk;
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const StorageRoot&) const = default;
};

// Bytes [begin, end) of a root; `via` lists the block devices passed on the
// way down (sysfs names, outermost first), `root_name` says what the root is
// ("/dev/vda", "/var/tmp/l1.img").
struct Extent {
  StorageRoot root;
  uint64_t begin = 0, end = 0;
  std::vector<dev_t> via;
  std::string root_name;
};

inline bool overlap(const Extent& a, const Extent& b) {
  return a.root == b.root && a.begin < b.end && b.begin < a.end;
}

// One block device, as sysfs and the loop driver describe it.
struct BlockDevice {
  dev_t dev = 0;
  std::string name;            // sysfs name: "vda1", "loop0"
  uint64_t size = 0;           // bytes
  std::vector<std::string> holders;  // what is stacked on it (sysfs holders/: dm, md)
  // A partition: its disk and the partition's first byte on it.
  std::optional<dev_t> parent;
  uint64_t start = 0;
  // A bound loop device: its backing file and the loop's first byte in it
  // (LOOP_GET_STATUS64: lo_device, lo_inode, lo_rdevice, lo_offset).
  struct Backing {
    dev_t file_dev = 0;  // st_dev of the backing file
    ino_t ino = 0;       // st_ino of the backing file
    dev_t rdev = 0;      // non-zero: the backing file is a block device, this one
    uint64_t offset = 0;
    std::string path;    // sysfs loop/backing_file, for messages
  };
  std::optional<Backing> backing;
};

using BlockStack = std::vector<BlockDevice>;

const BlockDevice* find_device(const BlockStack& stack, dev_t dev);

// Where bytes [begin, end) of block device `dev` land. A device the stack does
// not know is its own root.
Extent device_extent(const BlockStack& stack, dev_t dev, uint64_t begin, uint64_t end);
// Bytes [begin, end) of a regular file are their own root.
Extent file_extent(dev_t st_dev, ino_t ino, uint64_t begin, uint64_t end, std::string name);

// Every block device of the system, partitions and bound loops described.
// Loop backing files come from LOOP_GET_STATUS64 on /dev/NAME, or, where that
// cannot be opened (not root), from stat() of sysfs loop/backing_file.
BlockStack read_block_stack();

}  // namespace ioacct
