#include "acct/system.hpp"
#include "common/files.hpp"

#include <sched.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "acct/clock.hpp"

namespace ioacct {
namespace {

namespace fs = std::filesystem;

}  // namespace

DeviceChain resolve_device(unsigned major, unsigned minor) {
  DeviceChain c;
  if (major == 0) return c;  // anonymous: tmpfs, overlay, btrfs subvolumes
  std::error_code ec;
  const fs::path p = fs::canonical(fmt::format("/sys/dev/block/{}:{}", major, minor), ec);
  if (ec) return c;
  c.device = p.filename().string();
  // A partition's directory sits inside its disk's.
  c.disk = fs::exists(p / "partition", ec) ? p.parent_path().filename().string() : c.device;
  std::set<std::string> seen{c.disk};
  std::vector<std::string> todo{c.disk};
  while (!todo.empty()) {
    const std::string d = todo.back();
    todo.pop_back();
    const fs::path sys = "/sys/class/block/" + d;
    for (const auto& e : fs::directory_iterator(sys / "slaves", ec)) {
      std::string s = e.path().filename().string();
      const fs::path sp = fs::canonical(e.path(), ec);
      if (!ec && fs::exists(sp / "partition", ec)) s = sp.parent_path().filename().string();
      if (seen.insert(s).second) {
        c.underlying.push_back(s);
        todo.push_back(s);
      }
    }
    // A loop device's I/O lands on the disk holding its backing file.
    const std::string backing = read_first_line((sys / "loop" / "backing_file").string());
    struct stat st {};
    if (!backing.empty() && stat(backing.c_str(), &st) == 0) {
      const DeviceChain under = resolve_device(major(st.st_dev), minor(st.st_dev));
      for (const std::string& s : {under.disk}) {
        if (!s.empty() && seen.insert(s).second) {
          c.underlying.push_back(s);
          todo.push_back(s);
        }
      }
    }
  }
  return c;
}

namespace {

// Set once a ring's fdinfo was read without its locked part: this kernel
// prints all of it under the lock or nothing (see fdinfo_sq_thread_final).
std::atomic<bool> g_whole_fdinfo_under_lock{false};

bool kernel_at_least(int major, int minor) {
  utsname u{};
  if (uname(&u) != 0) return false;
  int ma = 0, mi = 0;
  if (std::sscanf(u.release, "%d.%d", &ma, &mi) != 2) return false;  // NOLINT(cert-err34-c): a bad release is "no"
  return ma > major || (ma == major && mi >= minor);
}

}  // namespace

bool fdinfo_sq_thread_final() {
  // 6.16 ("io_uring/fdinfo: grab ctx->uring_lock around
  // io_uring_show_fdinfo()") takes the trylock around the whole of the
  // ring's part; before, only the SQ thread and the lists were under it.
  static const bool by_release = kernel_at_least(6, 16);
  return by_release || g_whole_fdinfo_under_lock.load(std::memory_order_relaxed);
}

std::string read_ring_fdinfo(const std::string& path, bool sqpoll, int attempts, FdinfoRetryBudget* budget) {
  std::string text;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    const uint64_t start = attempt ? now_ns() : 0;
    if (attempt) {
      if (budget && budget->spent()) break;
      sched_yield();
    }
    text = read_file(path);
    if (attempt && budget) budget->left_ns -= std::min(budget->left_ns, now_ns() - start);
    if (text.empty()) return text;  // gone
    const FdInfo info = parse_fdinfo(text);
    auto it = info.find("SqThread");
    if (it == info.end()) {  // 6.16+: nothing past "ino:" without the lock
      g_whole_fdinfo_under_lock.store(true, std::memory_order_relaxed);
      continue;
    }
    if (!sqpoll || it->second != "-1") break;  // the lock was had
  }
  return text;
}

SystemSample sample_system(const std::vector<std::string>& disks, const std::vector<int>& ring_fds, bool sqpoll,
                           bool tasks) {
  SystemSample s;
  s.stamp_ns = now_ns();
  // Devices.
  std::istringstream ds(read_file("/proc/diskstats"));
  for (std::string line; std::getline(ds, line);)
    if (auto d = parse_diskstats_line(line))
      for (const auto& want : disks)
        if (d->name == want) s.disks[want] = *d;
  // Every thread of this process, SQ threads and io-wq workers included.
  std::error_code ec;
  if (tasks) {
    for (const auto& e : fs::directory_iterator("/proc/self/task", ec)) {
      const std::string name = e.path().filename().string();
      int tid = 0;
      auto [p, err] = std::from_chars(name.data(), name.data() + name.size(), tid);
      if (err != std::errc{} || p != name.data() + name.size()) continue;
      std::istringstream st(read_first_line(e.path().string() + "/schedstat"));
      TaskTime t;
      if (!(st >> t.runtime_ns)) continue;  // exited meanwhile
      t.comm = read_first_line(e.path().string() + "/comm");
      s.tasks[tid] = t;
    }
  }
  // The rings' own view of their SQ threads.
  for (int fd : ring_fds) {
    // fdinfo prints the SQ thread's figures only if it can take the ring's
    // lock at that instant (a trylock); a busy SQ thread holds it most of the
    // time, and the line then reads -1. Look again, briefly, before giving up.
    const FdInfo info =
        parse_fdinfo(read_ring_fdinfo(fmt::format("/proc/self/fdinfo/{}", fd), sqpoll, sqpoll ? 2000 : 1));
    RingTime r;
    r.fd = fd;
    r.sq_thread = fdinfo_number(info, "SqThread");
    if (r.sq_thread && (*r.sq_thread == 0 || *r.sq_thread == static_cast<uint64_t>(-1))) r.sq_thread.reset();
    r.sq_total_us = fdinfo_number(info, "SqTotalTime");
    r.sq_work_us = fdinfo_number(info, "SqWorkTime");
    s.rings.push_back(r);
  }
  if (!tasks) return s;
  // The whole machine.
  std::istringstream cpu(read_first_line("/proc/stat"));
  std::string label;
  cpu >> label;
  for (uint64_t v; cpu >> v;) s.cpu_ticks.push_back(v);
  if (fs::exists("/sys/devices/system/cpu/cpu0/cpuidle", ec)) {
    std::map<std::string, uint64_t> idle;
    for (const auto& cpu_dir : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
      const fs::path states = cpu_dir.path() / "cpuidle";
      for (const auto& st : fs::directory_iterator(states, ec)) {
        const std::string name = read_first_line((st.path() / "name").string());
        std::istringstream t(read_first_line((st.path() / "time").string()));
        uint64_t us = 0;
        if (!name.empty() && t >> us) idle[name] += us;
      }
    }
    s.cpuidle_us = idle;
  }
  return s;
}

IostatRow iostat_row(const DiskStats& a, const DiskStats& b, double itv) {
  // sysstat's iostat -x (rd_common.c, compute_ext_disk_stats) on deltas.
  IostatRow r;
  r.device = b.name;
  const double reads = static_cast<double>(b.reads - a.reads), writes = static_cast<double>(b.writes - a.writes);
  const double rsec = static_cast<double>(b.sectors_read - a.sectors_read);
  const double wsec = static_cast<double>(b.sectors_written - a.sectors_written);
  r.reads = b.reads - a.reads;
  r.writes = b.writes - a.writes;
  if (itv <= 0) return r;
  r.r_s = reads / itv;
  r.w_s = writes / itv;
  r.rkB_s = rsec / 2 / itv;
  r.wkB_s = wsec / 2 / itv;
  r.r_await = reads ? static_cast<double>(b.read_ms - a.read_ms) / reads : 0;
  r.w_await = writes ? static_cast<double>(b.write_ms - a.write_ms) / writes : 0;
  r.aqu_sz = static_cast<double>(b.weighted_ms - a.weighted_ms) / (itv * 1000);
  r.areq_sz = reads + writes ? (rsec + wsec) / 2 / (reads + writes) : 0;
  r.util_raw = static_cast<double>(b.io_ms - a.io_ms) / (itv * 1000) * 100;
  r.util = std::min(100.0, r.util_raw);
  const auto d = [](uint64_t x, uint64_t y) { return static_cast<double>(y - x); };
  const double discards = d(a.discards, b.discards), flushes = d(a.flushes, b.flushes);
  const double rm = d(a.reads_merged, b.reads_merged), wm = d(a.writes_merged, b.writes_merged);
  const double dm = d(a.discards_merged, b.discards_merged), dsec = d(a.sectors_discarded, b.sectors_discarded);
  r.d_s = discards / itv;
  r.f_s = flushes / itv;
  r.dkB_s = dsec / 2 / itv;
  r.rrqm_s = rm / itv;
  r.wrqm_s = wm / itv;
  r.drqm_s = dm / itv;
  r.rrqm_pct = rm + reads ? rm / (rm + reads) * 100 : 0;
  r.wrqm_pct = wm + writes ? wm / (wm + writes) * 100 : 0;
  r.drqm_pct = dm + discards ? dm / (dm + discards) * 100 : 0;
  r.d_await = discards ? d(a.discard_ms, b.discard_ms) / discards : 0;
  r.f_await = flushes ? d(a.flush_ms, b.flush_ms) / flushes : 0;
  r.rareq_sz = reads ? rsec / reads / 2 : 0;
  r.wareq_sz = writes ? wsec / writes / 2 : 0;
  r.dareq_sz = discards ? dsec / discards / 2 : 0;
  return r;
}

}  // namespace ioacct
