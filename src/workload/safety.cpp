#include "workload/safety.hpp"

#include <blkid/blkid.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "acct/procfs.hpp"
#include "common/files.hpp"
#include "common/errors.hpp"

namespace ioacct {
namespace {

namespace fs = std::filesystem;

struct Dev {
  std::string name;  // sysfs name: "loop0", "vda1", "dm-0"
  dev_t dev;
};

std::optional<dev_t> sysfs_dev(const fs::path& dir) {
  unsigned maj = 0, min = 0;
  char colon = 0;
  std::istringstream in(read_file((dir / "dev").string()));
  if (in >> maj >> colon >> min && colon == ':') return makedev(maj, min);
  return std::nullopt;
}

// The device, its partitions and, recursively, whatever is stacked on any of
// them (dm, md, LVM): writing to the device destroys all of those.
std::vector<Dev> affected_devices(dev_t rdev) {
  std::vector<Dev> out;
  std::set<std::string> seen;
  std::error_code ec;
  const fs::path start = fs::canonical(fmt::format("/sys/dev/block/{}:{}", major(rdev), minor(rdev)), ec);
  if (ec) return out;
  std::vector<fs::path> todo{start};
  while (!todo.empty()) {
    fs::path dir = todo.back();
    todo.pop_back();
    const std::string name = dir.filename().string();
    if (!seen.insert(name).second) continue;
    if (auto d = sysfs_dev(dir)) out.push_back({name, *d});
    // Partitions are subdirectories that have a "partition" file.
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_directory(ec) && fs::exists(e.path() / "partition", ec)) todo.push_back(e.path());
    for (const auto& e : fs::directory_iterator(dir / "holders", ec))
      todo.push_back(fs::canonical(e.path(), ec));
  }
  return out;
}

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
    if (auto type = value("TYPE"); !type.empty()) {
      std::string label = value("LABEL"), uuid = value("UUID");
      out.push_back(fmt::format("carries a {} signature{}{}", type,
                                label.empty() ? "" : fmt::format(" labelled '{}'", label),
                                uuid.empty() ? "" : fmt::format(" (UUID {})", uuid)));
    }
    if (auto pt = value("PTTYPE"); !pt.empty()) out.push_back(fmt::format("carries a {} partition table", pt));
  } else if (rc == -2) {
    out.push_back("carries several conflicting signatures");
  } else if (rc < 0) {
    out.push_back("could not be probed for signatures");
  }
  blkid_free_probe(pr);
}

}  // namespace

DeviceFindings inspect_block_device(const std::string& path) {
  DeviceFindings f;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) return f;
  const std::vector<Dev> devs = affected_devices(st.st_rdev);
  auto named = [&](dev_t d) -> const Dev* {
    for (const auto& x : devs)
      if (x.dev == d) return &x;
    return nullptr;
  };
  for (const auto& m : parse_mountinfo(read_file("/proc/self/mountinfo")))
    if (const Dev* d = named(makedev(m.major, m.minor)))
      f.in_use.push_back(fmt::format("{} is mounted on {} ({})", d->name, m.mount_point, m.fs_type));
  for (const auto& s : parse_swaps(read_file("/proc/swaps"))) {
    struct stat ss {};
    if (stat(s.c_str(), &ss) == 0 && S_ISBLK(ss.st_mode))
      if (const Dev* d = named(ss.st_rdev)) f.in_use.push_back(fmt::format("{} is used as swap", d->name));
  }
  for (const auto& d : devs)
    if (d.dev != st.st_rdev && !fs::exists("/sys/class/block/" + d.name + "/partition"))
      f.in_use.push_back(fmt::format("{} is stacked on it", d.name));
  // O_EXCL on a block device fails with EBUSY while anyone else holds it
  // exclusively: a mount, dm, md, or another program that asked the same.
  const int fd = ::open(path.c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
  if (fd >= 0) {
    ::close(fd);
  } else if (errno == EBUSY && f.in_use.empty()) {
    f.in_use.push_back("it is held open exclusively by another user (O_EXCL failed with EBUSY)");
  }
  probe_signatures(path, f.signatures);
  return f;
}

void check_block_device_writable(const std::string& path, bool destroy_data) {
  const DeviceFindings f = inspect_block_device(path);
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
    return s;
  };
  if (!f.in_use.empty()) {
    std::vector<std::string> all = f.in_use;
    all.insert(all.end(), f.signatures.begin(), f.signatures.end());
    throw UsageError(fmt::format("{}: refusing to write: {}; a device in use is never written, "
                                 "not even with --destroy-data", path, join(all)));
  }
  if (!destroy_data && !f.signatures.empty())
    throw UsageError(fmt::format("{}: refusing to write: it {}; add --destroy-data to overwrite it",
                                 path, join(f.signatures)));
  if (!destroy_data)
    throw UsageError(fmt::format("{}: is a block device and writing to it destroys what it holds "
                                 "(no signature found, but raw data has none); add --destroy-data "
                                 "if that is what you want", path));
}

}  // namespace ioacct
