#pragma once
// Who is using the disk: the tracker's per-cgroup or per-process counters
// (BusyCounters::who) over a window, named. The naming reads the system
// (the cgroup hierarchy, /proc/PID/comm); the window and the path parser are
// pure. docs/design.md, "Who is using the disk".
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/bpf/busy_tracker.hpp"

namespace ioacct {

// What a cgroup path says of Kubernetes and systemd, where it says it.
struct CgroupNames {
  std::string pod_uid;       // Kubernetes: the pod's UID (dashes, as `kubectl get pod -o jsonpath='{.metadata.uid}'`)
  std::string qos;           // Kubernetes: guaranteed, burstable or besteffort
  std::string container_id;  // a container's ID (the first 12 hex digits, as `docker ps` and `crictl ps` print it)
  std::string runtime;       // the container's runtime prefix: docker, cri-containerd, crio, libpod
  std::string unit;          // systemd: the last .service or .scope (not a container's), e.g. "postgresql.service"
};

// Pure. Both Kubernetes cgroup drivers (cgroupfs: /kubepods/burstable/podUID/ID;
// systemd: /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podUID.slice/
// cri-containerd-ID.scope) and plain systemd paths (/system.slice/foo.service).
CgroupNames parse_cgroup_path(std::string_view path);

// Cgroup ids to paths in the hierarchy that holds the block controller
// (cgroup v1 blkio, or cgroup2 with io): a cgroup's id is its directory's
// inode number there. Looks the hierarchy up again when asked for an id it
// does not know (a cgroup made since), at most once per lookup round.
class CgroupPaths {
 public:
  CgroupPaths();
  // The hierarchy's mount point ("/sys/fs/cgroup/blkio"); empty: none found.
  const std::string& mount() const { return mount_; }
  // "/" for the root, "/a/b" below it; nullopt: no such cgroup (removed).
  std::optional<std::string> path_of(uint64_t id);
  void new_round() { rescanned_ = false; }

 private:
  void scan();
  std::string mount_;
  std::map<uint64_t, std::string> paths_;
  bool rescanned_ = false;
};

// The names a report gives the tracker's labels.
struct WhoNames {
  std::map<uint64_t, std::string> cgroups;  // by id; missing: removed since (or id 0: unknown)
  std::map<uint32_t, std::string> comms;    // by pid: /proc/PID/comm; missing: exited since
};
// Reads the names of every label in `busy` (cgroup paths, process names).
WhoNames read_who_names(const std::vector<BusyCounters>& busy, CgroupPaths& paths);

struct WhoLatency {
  uint64_t count = 0;
  double mean_ns = 0, p50_ns = 0, p99_ns = 0;
};

// One cgroup's or process's part of a device over a window.
struct WhoRow {
  uint64_t cgroup_id = 0;            // 0: not known
  std::optional<std::string> cgroup;  // its path; none: removed since, or not known
  CgroupNames names;
  std::optional<uint32_t> pid;        // by process (0: kernel threads); none by cgroup, or not known
  std::optional<std::string> comm;    // by process: its name, when it still runs
  uint64_t reads = 0, writes = 0, others = 0;
  uint64_t read_bytes = 0, write_bytes = 0, other_bytes = 0;
  uint64_t unpaired = 0;              // completions whose op and bytes no record said (in `others`)
  uint64_t busy_share_ns = 0;         // its share of the device's exact busy time
  double busy_share_pct = 0;          // of the window
  std::optional<double> share_of_busy_pct;  // of the device's busy time; none when it was idle
  uint64_t inflight_ns = 0;           // time with >= 1 of its requests in flight
  double inflight_pct = 0;            // of the window
  WhoLatency latency;
};

// Pure. The window between two reads of one device: a row for every label
// with a completion or time in flight in it, sorted by busy share (then
// I/Os), largest first. Their busy_share_ns add up to the device's busy_ns
// delta exactly.
std::vector<WhoRow> who_rows(const BusyCounters& a, const BusyCounters& b, BusyBy by, const WhoNames& names);

}  // namespace ioacct
