#include "workload/storage.hpp"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "common/files.hpp"

namespace ioacct {
namespace {

namespace fs = std::filesystem;

// Loops can be stacked (a loop on a loop), partitions nest in nothing; the
// kernel refuses cycles, so this bound is only a guard against odd sysfs data.
constexpr int kMaxDepth = 16;

std::optional<dev_t> sysfs_dev(const fs::path& dir) {
  unsigned maj = 0, min = 0;
  char colon = 0;
  std::istringstream in(read_file((dir / "dev").string()));
  if (in >> maj >> colon >> min && colon == ':') return makedev(maj, min);
  return std::nullopt;
}

uint64_t sysfs_number(const fs::path& file) {
  std::istringstream in(read_file(file.string()));
  uint64_t v = 0;
  in >> v;
  return v;
}

std::optional<BlockDevice::Backing> loop_backing(const fs::path& dir, const std::string& name, dev_t dev) {
  std::string path = read_first_line((dir / "loop" / "backing_file").string());
  if (path.empty()) return std::nullopt;  // an unbound loop device
  BlockDevice::Backing b;
  b.path = path;
  // The device node is the reliable source: the backing file's own (st_dev,
  // st_ino), even if it was renamed, deleted or lives in another mount
  // namespace. Opening it read-only, without O_EXCL, changes nothing.
  const int fd = ::open(("/dev/" + name).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st {};
  loop_info64 info{};
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == dev &&
      ioctl(fd, LOOP_GET_STATUS64, &info) == 0) {
    ::close(fd);
    b.file_dev = static_cast<dev_t>(info.lo_device);
    b.ino = static_cast<ino_t>(info.lo_inode);
    b.rdev = static_cast<dev_t>(info.lo_rdevice);
    b.offset = info.lo_offset;
    return b;
  }
  if (fd >= 0) ::close(fd);
  // Not root: the path sysfs gives, as it is now.
  const std::string deleted = " (deleted)";
  if (path.size() > deleted.size() && path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0)
    return std::nullopt;  // nothing left to alias with a name
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  b.file_dev = st.st_dev;
  b.ino = st.st_ino;
  b.rdev = S_ISBLK(st.st_mode) ? st.st_rdev : 0;
  b.offset = sysfs_number(dir / "loop" / "offset");
  return b;
}

}  // namespace

const BlockDevice* find_device(const BlockStack& stack, dev_t dev) {
  for (const auto& d : stack)
    if (d.dev == dev) return &d;
  return nullptr;
}

Extent device_extent(const BlockStack& stack, dev_t dev, uint64_t begin, uint64_t end) {
  Extent e;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    e.via.push_back(dev);
    const BlockDevice* d = find_device(stack, dev);
    if (d && d->parent) {
      begin += d->start;
      end += d->start;
      dev = *d->parent;
      continue;
    }
    if (d && d->backing && d->backing->rdev) {  // a loop on a block device
      begin += d->backing->offset;
      end += d->backing->offset;
      dev = d->backing->rdev;
      continue;
    }
    if (d && d->backing) {  // a loop on a regular file
      e.root = {StorageRoot::Kind::File, d->backing->file_dev, d->backing->ino};
      e.root_name = d->backing->path;
      e.begin = begin + d->backing->offset;
      e.end = end + d->backing->offset;
      return e;
    }
    break;
  }
  e.root = {StorageRoot::Kind::Disk, dev, 0};
  const BlockDevice* d = find_device(stack, dev);
  e.root_name = d ? "/dev/" + d->name : "block device " + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
  e.begin = begin;
  e.end = end;
  return e;
}

Extent file_extent(dev_t st_dev, ino_t ino, uint64_t begin, uint64_t end, std::string name) {
  Extent e;
  e.root = {StorageRoot::Kind::File, st_dev, ino};
  e.begin = begin;
  e.end = end;
  e.root_name = std::move(name);
  return e;
}

BlockStack read_block_stack() {
  BlockStack out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/class/block", ec)) {
    const fs::path dir = fs::canonical(entry.path(), ec);
    if (ec) continue;
    const auto dev = sysfs_dev(dir);
    if (!dev) continue;
    BlockDevice d;
    d.dev = *dev;
    d.name = dir.filename().string();
    d.size = sysfs_number(dir / "size") * 512;  // sysfs counts 512-byte sectors, always
    for (const auto& h : fs::directory_iterator(dir / "holders", ec)) d.holders.push_back(h.path().filename().string());
    ec.clear();
    if (fs::exists(dir / "partition", ec)) {
      d.parent = sysfs_dev(dir.parent_path());
      d.start = sysfs_number(dir / "start") * 512;
    }
    if (fs::exists(dir / "loop", ec)) d.backing = loop_backing(dir, d.name, d.dev);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace ioacct
