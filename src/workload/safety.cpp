#include "workload/safety.hpp"

#include <blkid/blkid.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <map>
#include <thread>

#include "acct/procfs.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"

namespace ioacct {
namespace {

// How long a device the run writes to may stay held by someone letting go
// before the run calls it in use (held_exclusively).
constexpr std::chrono::milliseconds kReleaseGrace{1000};

void probe_signatures(const std::string& path, std::vector<std::string>& out) {
  blkid_probe pr = blkid_new_probe_from_filename(path.c_str());
  if (!pr) {
    out.push_back(fmt::format("could not be probed for signatures ({})", errno_text(errno)));
    return;
  }
  blkid_probe_enable_superblocks(pr, 1);
  blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID);
  blkid_probe_enable_partitions(pr, 1);
  const int rc = blkid_do_safeprobe(pr);
  auto value = [&](const char* name) -> std::string {
    const char* v = nullptr;
    return blkid_probe_lookup_value(pr, name, &v, nullptr) == 0 && v ? v : "";
  };
  if (rc == 0) {
    // "a signature: ext4", never "a ext4 signature": the type is a name, not a word.
    if (auto type = value("TYPE"); !type.empty()) {
      std::string label = value("LABEL"), uuid = value("UUID");
      out.push_back(fmt::format("carries a signature: {}{}{}", type,
                                label.empty() ? "" : fmt::format(" labelled '{}'", label),
                                uuid.empty() ? "" : fmt::format(" (UUID {})", uuid)));
    }
    if (auto pt = value("PTTYPE"); !pt.empty()) out.push_back(fmt::format("carries a partition table: {}", pt));
  } else if (rc == -2) {
    out.push_back("carries several conflicting signatures");
  } else if (rc < 0) {
    out.push_back("could not be probed for signatures");
  }
  blkid_free_probe(pr);
}

bool passes(const Extent& e, dev_t dev) { return std::find(e.via.begin(), e.via.end(), dev) != e.via.end(); }

// How device `d` (its bytes at `de`) relates to the target, for the message:
// "" for the target itself, else a parenthesis a reader can act on.
std::string relation(const WriteReach& t, const BlockDevice& d, const Extent& de) {
  if (t.is_block && d.dev == t.rdev) return "";
  if (t.is_block && passes(de, t.rdev))
    return d.backing ? " (a loop device on it)" : d.parent ? " (a partition of it)" : " (on it)";
  if (t.is_block && passes(t.extent, d.dev)) return " (which it lies on)";
  if (!t.is_block && d.backing && d.backing->rdev == 0 &&
      StorageRoot{StorageRoot::Kind::File, d.backing->file_dev, d.backing->ino} == t.extent.root)
    return " (a loop device on it)";
  if (d.backing && d.backing->rdev == 0 && de.root == t.extent.root)
    return fmt::format(" (another loop device on {})", de.root_name);
  return fmt::format(" (it shares bytes of {} with the target)", de.root_name);
}

// Why each device is in use: mounted (by number, or by source for a
// filesystem such as btrfs whose mountinfo number is anonymous), swap, or
// something stacked on it.
std::map<dev_t, std::vector<std::string>> devices_in_use(const BlockStack& stack,
                                                         std::vector<std::pair<StorageRoot, std::string>>& files) {
  std::map<dev_t, std::vector<std::string>> use;
  for (const auto& m : parse_mountinfo(read_file("/proc/self/mountinfo"))) {
    const std::string what = fmt::format("is mounted on {} ({})", m.mount_point, m.fs_type);
    const dev_t by_number = makedev(m.major, m.minor);
    if (find_device(stack, by_number)) use[by_number].push_back(what);
    struct stat st {};
    if (!m.source.empty() && m.source[0] == '/' && stat(m.source.c_str(), &st) == 0 && S_ISBLK(st.st_mode) &&
        st.st_rdev != by_number)
      use[st.st_rdev].push_back(what);
  }
  for (const auto& s : parse_swaps(read_file("/proc/swaps"))) {
    struct stat st {};
    if (stat(s.c_str(), &st) != 0) continue;
    if (S_ISBLK(st.st_mode)) use[st.st_rdev].push_back("is used as swap");
    else files.emplace_back(StorageRoot{StorageRoot::Kind::File, st.st_dev, st.st_ino}, s);
  }
  for (const auto& d : stack) {
    for (const auto& h : d.holders) use[d.dev].push_back(fmt::format("has {} stacked on it", h));
    // A loop's backing file keeps its filesystem alive even once it is no
    // longer in mountinfo (umount -l): that filesystem's device is in use.
    if (d.backing && d.backing->rdev == 0 && find_device(stack, d.backing->file_dev))
      use[d.backing->file_dev].push_back(
          fmt::format("holds the filesystem of {}'s backing file {}", d.name, d.backing->path));
  }
  for (auto& [dev, reasons] : use) {
    std::sort(reasons.begin(), reasons.end());
    reasons.erase(std::unique(reasons.begin(), reasons.end()), reasons.end());
  }
  return use;
}

// O_EXCL on a block device fails with EBUSY while anyone else holds it
// exclusively: a mount, dm, md, btrfs, zram, or a program that asked the same.
// With `grace`, a holder that is letting go gets that long first: a run that
// has just ended can hold its device a few ms past its exit, because io_uring
// tears a ring down in a kernel worker, and a registered file's last
// reference can go with it (CI once found the device busy between two runs).
bool held_exclusively(const std::string& node, std::chrono::milliseconds grace = {}) {
  const auto give_up = std::chrono::steady_clock::now() + grace;
  for (auto pause = std::chrono::milliseconds(1);; pause = std::min(pause * 2, std::chrono::milliseconds(50))) {
    const int fd = ::open(node.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
      ::close(fd);
      return false;
    }
    if (errno != EBUSY) return false;
    if (std::chrono::steady_clock::now() >= give_up) return true;
    std::this_thread::sleep_for(pause);
  }
}

}  // namespace

DeviceFindings inspect_writes(const WriteReach& t, const BlockStack& stack) {
  DeviceFindings f;
  std::vector<std::pair<StorageRoot, std::string>> swap_files;
  const auto use = devices_in_use(stack, swap_files);
  std::vector<const BlockDevice*> overlapping;
  for (const auto& d : stack) {
    const Extent de = device_extent(stack, d.dev, 0, d.size);
    if (!overlap(de, t.extent) && !(t.is_block && d.dev == t.rdev)) continue;
    overlapping.push_back(&d);
    if (auto it = use.find(d.dev); it != use.end())
      for (const auto& why : it->second) f.in_use.push_back(fmt::format("{}{} {}", d.name, relation(t, d, de), why));
  }
  for (const auto& [root, name] : swap_files)
    if (root == t.extent.root) f.in_use.push_back(fmt::format("{} is used as swap", name));
  if (f.in_use.empty()) {
    if (t.is_block && held_exclusively(t.path, kReleaseGrace)) {
      // A disk cannot be held while one of its partitions is, even one the
      // run would not touch: name that partition rather than "another user".
      std::string why = "it is held open exclusively by another user";
      for (const auto& d : stack) {
        if (d.parent != t.rdev) continue;
        auto it = use.find(d.dev);
        if (it != use.end() || held_exclusively("/dev/" + d.name)) {
          why = fmt::format("{} (a partition of it) {}, so the whole disk cannot be held exclusively", d.name,
                            it != use.end() ? it->second.front() : "is held open exclusively by another user");
          break;
        }
      }
      f.in_use.push_back(why + " (O_EXCL failed with EBUSY)");
    }
    // Aliases and devices on top of the target, never the ones it lies on:
    // a disk is held while any of its partitions is, even one this target
    // does not touch.
    for (const BlockDevice* d : overlapping)
      if (!(t.is_block && (d->dev == t.rdev || passes(t.extent, d->dev))) && held_exclusively("/dev/" + d->name))
        f.in_use.push_back(fmt::format("{}{} is held open exclusively by another user (O_EXCL failed with EBUSY)",
                                       d->name, relation(t, *d, device_extent(stack, d->dev, 0, d->size))));
  }
  if (t.is_block) probe_signatures(t.path, f.signatures);
  return f;
}

namespace {

[[noreturn]] void refuse_pseudo(const std::string& path, const char* fs) {
  throw UsageError(fmt::format("{}: refusing to write: it is a file of {}, a pseudo-filesystem whose files are "
                               "the kernel's settings, not storage; not even with --destroy-data; give a file on "
                               "a disk, or a block device", path, fs));
}

}  // namespace

const char* pseudo_filesystem(long f_type) {
  // Not every magic is in <linux/magic.h> (configfs' lives in fs/configfs).
  constexpr long kConfigfs = 0x62656570;
  switch (f_type) {
    case PROC_SUPER_MAGIC: return "procfs";
    case SYSFS_MAGIC: return "sysfs";
    case TRACEFS_MAGIC: return "tracefs";
    case DEBUGFS_MAGIC: return "debugfs";
    case kConfigfs: return "configfs";
    case SECURITYFS_MAGIC: return "securityfs";
    case BPF_FS_MAGIC: return "bpffs";
    case CGROUP_SUPER_MAGIC: return "cgroupfs";
    case CGROUP2_SUPER_MAGIC: return "cgroup2";
    case EFIVARFS_MAGIC: return "efivarfs";
    case PSTOREFS_MAGIC: return "pstore";
    case SELINUX_MAGIC: return "selinuxfs";
    case SMACK_MAGIC: return "smackfs";
    default: return nullptr;
  }
}

void check_not_pseudo(int fd, const std::string& path) {
  struct statfs sf {};
  if (fstatfs(fd, &sf) != 0) return;
  if (const char* fs = pseudo_filesystem(static_cast<long>(sf.f_type))) refuse_pseudo(path, fs);
}

void check_writable(const WriteReach& t, const BlockStack& stack, bool destroy_data) {
  if (!t.is_block) {
    struct statfs sf {};
    if (statfs(t.path.c_str(), &sf) == 0)
      if (const char* fs = pseudo_filesystem(static_cast<long>(sf.f_type))) refuse_pseudo(t.path, fs);
  }
  const DeviceFindings f = inspect_writes(t, stack);
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
    return s;
  };
  if (!f.in_use.empty()) {
    std::vector<std::string> all = f.in_use;
    all.insert(all.end(), f.signatures.begin(), f.signatures.end());
    throw UsageError(fmt::format("{}: refusing to write: {}; {} in use is never written, "
                                 "not even with --destroy-data", t.path, join(all),
                                 t.is_block ? "a device" : "a file"));
  }
  if (!t.is_block) return;
  if (!destroy_data && !f.signatures.empty())
    throw UsageError(fmt::format("{}: refusing to write: it {}; add --destroy-data to overwrite it",
                                 t.path, join(f.signatures)));
  if (!destroy_data)
    throw UsageError(fmt::format("{}: is a block device and writing to it destroys what it holds "
                                 "(no signature found, but raw data has none); add --destroy-data "
                                 "if that is what you want", t.path));
}

}  // namespace ioacct
