#pragma once
// Targets: the files and block devices a run does I/O on, opened and checked.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "workload/job.hpp"

namespace ioacct {

struct Target {
  std::string path;         // as given; "(temporary file in DIR)" for the default
  int fd = -1;              // owned
  bool is_block = false;
  bool is_temp = false;
  uint64_t file_size = 0;   // bytes the target has now
  uint64_t base = 0;        // first byte used (--offset)
  uint64_t range = 0;       // bytes used from base (--size or what is left)
  uint32_t dio_align = 512; // O_DIRECT alignment of offset, length and memory
  std::string device;       // block device holding it: "vda", "loop0"; "" if none or unknown
  bool in_memory = false;   // on tmpfs or ramfs: no device under it at all
  unsigned dev_major = 0, dev_minor = 0;
};

class Targets {
 public:
  Targets() = default;
  Targets(Targets&&) noexcept;
  Targets& operator=(Targets&&) noexcept;
  ~Targets();  // closes every fd; the temporary file has no name, so closing removes it
  std::vector<Target> list;
};

// Opens and checks every target of `job` (or creates the temporary file).
// `should_stop` is polled while filling the temporary file (Ctrl-C).
// Throws UsageError for targets that cannot be used as asked, RuntimeError
// when the system refuses (permission, I/O error).
Targets open_targets(const JobSpec& job, const std::function<bool()>& should_stop);

// The targets `opened` already holds (the temporary file included: it has no
// name) opened again, through /proc/self/fd, with `job`'s flags: O_DIRECT or
// not, read-only or read-write, O_DSYNC. So one temporary file serves every
// variant of `ioacct compare`. Checks --bs against the O_DIRECT alignment and
// trims each range to whole --bs blocks. `opened` must stay open meanwhile.
Targets reopen_targets(const Targets& opened, const JobSpec& job);

// What can be checked once the targets are open: --iopoll needs a device
// with poll queues (UsageError without a device, RuntimeError without poll
// queues); a target in memory (tmpfs, ramfs) gets a warning on stderr.
void check_targets(const JobSpec& job, const Targets& targets);

}  // namespace ioacct
