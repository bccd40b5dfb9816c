#include "acct/device_identity.hpp"

#include <filesystem>

#include "common/files.hpp"

namespace ioacct {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> text(const fs::path& p) {
  bool ok = false;
  std::string s = read_first_line(p.string(), &ok);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  if (!ok || s.empty()) return std::nullopt;
  return s;
}

}  // namespace

DeviceIdentity device_identity(const std::string& device, const std::string& sysfs) {
  DeviceIdentity id;
  std::error_code ec;
  fs::path dir = fs::canonical(fs::path(sysfs) / "class" / "block" / device, ec);
  if (ec) return id;
  if (fs::exists(dir / "partition", ec)) dir = dir.parent_path();  // a partition sits inside its disk
  id.disk = dir.filename().string();
  const fs::path dev = dir / "device";
  id.model = text(dev / "model");
  if (id.model) {
    // SCSI and ATA put the maker in vendor ("ATA", "SEAGATE"); PCI-style
    // devices put a number there ("0x1af4"), which says nothing to a reader.
    if (auto vendor = text(dev / "vendor"); vendor && vendor->rfind("0x", 0) != 0) id.model = *vendor + " " + *id.model;
  } else if (auto backing = text(dir / "loop" / "backing_file")) {
    id.model = "loop on " + *backing;
  } else if (fs::path drv = fs::read_symlink(dev / "driver", ec); !ec) {
    id.model = drv.filename().string();
  }
  id.firmware = text(dev / "firmware_rev");
  if (!id.firmware) id.firmware = text(dev / "rev");
  return id;
}

}  // namespace ioacct
