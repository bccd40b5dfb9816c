// Where bytes land: partitions and loop devices followed down to their root.
#include "workload/storage.hpp"

#include <gtest/gtest.h>
#include <sys/sysmacros.h>

namespace ioacct {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// vda (with vda1 at 1 MiB), loop0 and loop1 on one image file, loop2 on vda1
// at 4 MiB, loop3 on loop0, loop4 on the same image at 32 MiB.
BlockStack sample() {
  const dev_t vda = makedev(254, 0), vda1 = makedev(254, 1);
  BlockStack s;
  s.push_back({.dev = vda, .name = "vda", .size = 1024 * kMiB});
  s.push_back({.dev = vda1, .name = "vda1", .size = 512 * kMiB, .parent = vda, .start = kMiB});
  const BlockDevice::Backing img{.file_dev = vda1, .ino = 12, .path = "/mnt/l1.img"};
  s.push_back({.dev = makedev(7, 0), .name = "loop0", .size = 64 * kMiB, .backing = img});
  s.push_back({.dev = makedev(7, 1), .name = "loop1", .size = 64 * kMiB, .backing = img});
  s.push_back({.dev = makedev(7, 2), .name = "loop2", .size = 8 * kMiB,
               .backing = BlockDevice::Backing{.file_dev = 5, .ino = 99, .rdev = vda1, .offset = 4 * kMiB,
                                               .path = "/dev/vda1"}});
  s.push_back({.dev = makedev(7, 3), .name = "loop3", .size = 64 * kMiB,
               .backing = BlockDevice::Backing{.file_dev = 5, .ino = 100, .rdev = makedev(7, 0), .path = "/dev/loop0"}});
  BlockDevice::Backing tail = img;
  tail.offset = 32 * kMiB;
  s.push_back({.dev = makedev(7, 4), .name = "loop4", .size = 32 * kMiB, .backing = tail});
  return s;
}

TEST(Storage, APartitionLandsOnItsDiskAtItsStart) {
  const auto s = sample();
  const Extent e = device_extent(s, makedev(254, 1), 0, 4096);
  EXPECT_EQ(e.root, (StorageRoot{StorageRoot::Kind::Disk, makedev(254, 0), 0}));
  EXPECT_EQ(e.begin, kMiB);
  EXPECT_EQ(e.end, kMiB + 4096);
  EXPECT_EQ(e.root_name, "/dev/vda");
  EXPECT_EQ(e.via, (std::vector<dev_t>{makedev(254, 1), makedev(254, 0)}));
  EXPECT_TRUE(overlap(e, device_extent(s, makedev(254, 0), 0, 2 * kMiB)));
  EXPECT_FALSE(overlap(e, device_extent(s, makedev(254, 0), 0, kMiB))) << "the disk's first MiB is not vda1";
}

TEST(Storage, TwoLoopsOnOneImageAreTheSameBytes) {
  const auto s = sample();
  const Extent a = device_extent(s, makedev(7, 0), 0, 64 * kMiB);
  const Extent b = device_extent(s, makedev(7, 1), 0, 64 * kMiB);
  EXPECT_EQ(a.root, (StorageRoot{StorageRoot::Kind::File, makedev(254, 1), 12}));
  EXPECT_EQ(a.root_name, "/mnt/l1.img");
  EXPECT_TRUE(overlap(a, b));
  // The image file itself, under any name: the same (st_dev, st_ino).
  EXPECT_TRUE(overlap(a, file_extent(makedev(254, 1), 12, 0, 4096, "hard link")));
  EXPECT_FALSE(overlap(a, file_extent(makedev(254, 1), 13, 0, 4096, "another file")));
  // A loop at an offset of the image overlaps only from there.
  const Extent tail = device_extent(s, makedev(7, 4), 0, 32 * kMiB);
  EXPECT_EQ(tail.begin, 32 * kMiB);
  EXPECT_TRUE(overlap(tail, a));
  EXPECT_FALSE(overlap(tail, device_extent(s, makedev(7, 0), 0, 32 * kMiB)));
}

TEST(Storage, LoopsOnBlockDevicesAreFollowedDown) {
  const auto s = sample();
  // loop2 sits on vda1 at 4 MiB, so on vda at 5 MiB.
  const Extent e = device_extent(s, makedev(7, 2), 0, kMiB);
  EXPECT_EQ(e.root, (StorageRoot{StorageRoot::Kind::Disk, makedev(254, 0), 0}));
  EXPECT_EQ(e.begin, 5 * kMiB);
  EXPECT_EQ(e.via, (std::vector<dev_t>{makedev(7, 2), makedev(254, 1), makedev(254, 0)}));
  // loop3 sits on loop0, which sits on the image.
  const Extent l3 = device_extent(s, makedev(7, 3), 0, 4096);
  EXPECT_EQ(l3.root, (StorageRoot{StorageRoot::Kind::File, makedev(254, 1), 12}));
  EXPECT_TRUE(overlap(l3, device_extent(s, makedev(7, 1), 0, 4096)));
}

TEST(Storage, AnUnknownDeviceIsItsOwnRoot) {
  const auto s = sample();
  const Extent e = device_extent(s, makedev(8, 0), 10, 20);
  EXPECT_EQ(e.root, (StorageRoot{StorageRoot::Kind::Disk, makedev(8, 0), 0}));
  EXPECT_EQ(e.root_name, "block device 8:0");
  EXPECT_EQ(e.begin, 10u);
  EXPECT_FALSE(overlap(e, device_extent(s, makedev(8, 0), 20, 30))) << "[10,20) and [20,30) touch, no overlap";
}

TEST(Storage, ACycleInOddDataEnds) {
  BlockStack s;
  s.push_back({.dev = makedev(7, 0), .name = "loop0", .size = kMiB,
               .backing = BlockDevice::Backing{.rdev = makedev(7, 1)}});
  s.push_back({.dev = makedev(7, 1), .name = "loop1", .size = kMiB,
               .backing = BlockDevice::Backing{.rdev = makedev(7, 0)}});
  const Extent e = device_extent(s, makedev(7, 0), 0, 1);
  EXPECT_EQ(e.root.kind, StorageRoot::Kind::Disk);
  EXPECT_LE(e.via.size(), 17u);
}

}  // namespace
}  // namespace ioacct
