#pragma once
// The targets of several jobs (--job, --fio), opened so that jobs can share
// them: one temporary file for every job that names no target, and a block
// device that two jobs write held once.
#include <functional>
#include <vector>

#include "workload/job.hpp"
#include "workload/target.hpp"

namespace ioacct {

// One Targets per job, in job order, each opened with its job's flags and
// ranged by its job's --offset and --size. The temporary file is made once,
// as large as the largest of those jobs' --size, and opened again for each
// (it has no name: /proc/self/fd). A block device that an earlier job writes
// (and so holds with O_EXCL) is opened again through that job's descriptor
// by a later job that writes it too: the kernel lets one holder claim it.
// Throws as open_targets does.
std::vector<Targets> open_run_targets(const std::vector<JobSpec>& jobs, const std::function<bool()>& should_stop);

}  // namespace ioacct
