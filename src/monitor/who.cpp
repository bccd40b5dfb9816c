#include "monitor/who.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/files.hpp"
#include "monitor/stat.hpp"

namespace ioacct {
namespace {

bool all_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

// A pod UID as cgroup paths spell it: 32 hex digits with dashes (cgroupfs)
// or underscores (systemd, whose unit names cannot hold a dash there).
bool pod_uid(std::string_view s, std::string& out) {
  std::string u(s);
  std::replace(u.begin(), u.end(), '_', '-');
  const size_t hex = static_cast<size_t>(std::count_if(u.begin(), u.end(), [](char c) { return c != '-'; }));
  std::string digits;
  std::copy_if(u.begin(), u.end(), std::back_inserter(digits), [](char c) { return c != '-'; });
  if (hex != 32 || !all_hex(digits)) return false;
  out = u;
  return true;
}

// "cri-containerd-<64 hex>.scope" and the like: the runtime and the ID.
bool container_scope(std::string_view c, CgroupNames& n) {
  if (!c.ends_with(".scope")) return false;
  c.remove_suffix(6);
  for (std::string_view rt : {"cri-containerd", "docker", "crio", "libpod", "cri-o"}) {
    if (!c.starts_with(rt) || c.size() <= rt.size() + 1 || c[rt.size()] != '-') continue;
    const std::string_view id = c.substr(rt.size() + 1);
    if (id.size() < 12 || !all_hex(id)) continue;
    n.runtime = rt;
    n.container_id = id.substr(0, 12);
    return true;
  }
  return false;
}

}  // namespace

CgroupNames parse_cgroup_path(std::string_view path) {
  CgroupNames n;
  std::vector<std::string_view> parts;
  for (size_t pos = 0; pos <= path.size();) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > pos) parts.push_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  bool in_kube = false, after_pod = false;
  std::string prev;
  for (std::string_view c : parts) {
    if (c == "kubepods" || c.starts_with("kubepods.slice") || c.starts_with("kubepods-")) in_kube = true;
    for (std::string_view q : {"burstable", "besteffort"})
      if (c == q || (c.starts_with("kubepods-") && c.substr(9) == fmt::format("{}.slice", q))) n.qos = q;
    if (in_kube && c.starts_with("pod") && pod_uid(c.substr(3), n.pod_uid)) {  // cgroupfs driver
      after_pod = true;
      continue;
    }
    if (in_kube && c.starts_with("kubepods") && c.ends_with(".slice")) {  // systemd driver
      const size_t p = c.rfind("-pod");
      if (p != std::string_view::npos && pod_uid(c.substr(p + 4, c.size() - p - 4 - 6), n.pod_uid)) {
        after_pod = true;
        continue;
      }
    }
    if (container_scope(c, n)) continue;
    if (all_hex(c) && c.size() == 64 && (after_pod || prev == "docker")) {  // cgroupfs: the container's own folder
      n.container_id = c.substr(0, 12);
      if (prev == "docker") n.runtime = "docker";
      continue;
    }
    if (c.ends_with(".service") || c.ends_with(".scope")) n.unit = c;
    prev = c;
  }
  if (!n.pod_uid.empty() && n.qos.empty()) n.qos = "guaranteed";
  return n;
}

CgroupPaths::CgroupPaths() {
  // The hierarchy with the block controller: cgroup v1's blkio, else a
  // cgroup2 mount whose root lists io.
  std::ifstream in("/proc/self/mountinfo");
  std::string v2;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::array<std::string, 5> head;
    for (std::string& h : head) f >> h;
    std::string w, type, source, opts;
    while (f >> w && w != "-") {
    }
    f >> type >> source >> opts;
    const std::string& at = head[4];
    if (type == "cgroup" && ("," + opts + ",").find(",blkio,") != std::string::npos) mount_ = at;
    if (type == "cgroup2" && v2.empty()) {
      std::string ctl = read_first_line(at + "/cgroup.controllers");
      if ((" " + ctl + " ").find(" io ") != std::string::npos) v2 = at;
    }
  }
  if (mount_.empty()) mount_ = v2;
  scan();
  rescanned_ = true;
}

void CgroupPaths::scan() {
  paths_.clear();
  if (mount_.empty()) return;
  std::error_code ec;
  struct stat st {};
  if (::stat(mount_.c_str(), &st) == 0) paths_[st.st_ino] = std::string(1, '/');
  const size_t skip = mount_.size();
  for (auto it = std::filesystem::recursive_directory_iterator(
           mount_, std::filesystem::directory_options::skip_permission_denied, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    const std::string p = it->path().string();
    if (p.size() <= skip || ::stat(p.c_str(), &st) != 0) continue;
    paths_[st.st_ino] = p.substr(skip);  // "/a/b": the iterator's paths start with the mount point
  }
}

std::optional<std::string> CgroupPaths::path_of(uint64_t id) {
  auto f = paths_.find(id);
  if (f == paths_.end() && !rescanned_) {
    rescanned_ = true;
    scan();
    f = paths_.find(id);
  }
  if (f == paths_.end()) return std::nullopt;
  return f->second;
}

WhoNames read_who_names(const std::vector<BusyCounters>& busy, CgroupPaths& paths) {
  WhoNames n;
  paths.new_round();
  for (const BusyCounters& c : busy)
    for (const BusyWho& w : c.who) {
      if (w.cgroup && !n.cgroups.count(w.cgroup))
        if (auto p = paths.path_of(w.cgroup)) n.cgroups[w.cgroup] = *p;
      if (w.pid != BusyWho::kUnknownPid && w.pid != 0 && !n.comms.count(w.pid)) {
        bool ok = false;
        const std::string comm = read_first_line("/proc/" + std::to_string(w.pid) + "/comm", &ok);
        if (ok) n.comms[w.pid] = comm;
      }
    }
  return n;
}

namespace {

double pct_of(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

WhoRow who_row(const BusyWho& x, const BusyWho& y, const BusyCounters& b, BusyBy by, const WhoNames& names,
               uint64_t window, uint64_t busy) {
  WhoRow r;
  r.cgroup_id = y.cgroup;
  if (auto p = names.cgroups.find(y.cgroup); p != names.cgroups.end()) {
    r.cgroup = p->second;
    r.names = parse_cgroup_path(p->second);
  }
  if (by == BusyBy::Process && y.pid != BusyWho::kUnknownPid) {
    r.pid = y.pid;
    if (y.pid == 0) r.comm = "[kernel]";
    else if (!y.comm.empty()) r.comm = y.comm;
    else if (auto c = names.comms.find(y.pid); c != names.comms.end()) r.comm = c->second;
  }
  r.reads = y.ios[BusyWho::kRead] - x.ios[BusyWho::kRead];
  r.writes = y.ios[BusyWho::kWrite] - x.ios[BusyWho::kWrite];
  r.others = y.ios[BusyWho::kOther] - x.ios[BusyWho::kOther];
  r.read_bytes = y.bytes[BusyWho::kRead] - x.bytes[BusyWho::kRead];
  r.write_bytes = y.bytes[BusyWho::kWrite] - x.bytes[BusyWho::kWrite];
  r.other_bytes = y.bytes[BusyWho::kOther] - x.bytes[BusyWho::kOther];
  r.unpaired = y.unpaired - x.unpaired;
  r.busy_share_ns = y.share_ns - x.share_ns;
  r.busy_share_pct = pct_of(r.busy_share_ns, window);
  if (busy) r.share_of_busy_pct = pct_of(r.busy_share_ns, busy);
  r.inflight_ns = y.inflight_ns - x.inflight_ns;
  r.inflight_pct = pct_of(r.inflight_ns, window);
  std::vector<uint64_t> delta(y.latency_count.size());
  for (size_t k = 0; k < delta.size(); ++k) {
    delta[k] = y.latency_count[k] - (k < x.latency_count.size() ? x.latency_count[k] : 0);
    r.latency.count += delta[k];
  }
  if (r.latency.count) {
    r.latency.mean_ns = static_cast<double>(y.latency_sum_ns - x.latency_sum_ns) / static_cast<double>(r.latency.count);
    r.latency.p50_ns = bucket_quantile(b.who_latency_le_ns, delta, 0.50, 0);
    r.latency.p99_ns = bucket_quantile(b.who_latency_le_ns, delta, 0.99, 0);
  }
  return r;
}

}  // namespace

std::vector<WhoRow> who_rows(const BusyCounters& a, const BusyCounters& b, BusyBy by, const WhoNames& names) {
  std::vector<WhoRow> out;
  const uint64_t window = b.stamp_ns - a.stamp_ns, busy = b.busy_ns - a.busy_ns;
  const BusyWho zero;
  for (size_t i = 0; i < b.who.size(); ++i) {
    const BusyWho& x = i < a.who.size() ? a.who[i] : zero;
    WhoRow r = who_row(x, b.who[i], b, by, names, window, busy);
    if (r.reads + r.writes + r.others == 0 && r.inflight_ns == 0) continue;
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const WhoRow& p, const WhoRow& q) {
    if (p.busy_share_ns != q.busy_share_ns) return p.busy_share_ns > q.busy_share_ns;
    return p.reads + p.writes + p.others > q.reads + q.writes + q.others;
  });
  return out;
}

}  // namespace ioacct
