#pragma once
// Plans: what each worker thread does, decided before any thread starts. The
// threads split the targets (thread i takes targets i, i+T, ...), or, with
// more threads than targets, share them: each sharing thread starts its
// sequential walk at its own point of the target, or with --verify owns a
// disjoint slice of its blocks. --ios is split as evenly as it goes, the
// remainder to the first threads.
#include <cstdint>
#include <vector>

#include "workload/job.hpp"
#include "workload/target.hpp"

namespace ioacct {

struct Plan {
  unsigned index = 0;
  unsigned depth = 1;
  int cpu = -1;                         // pinned CPU, -1 if not pinned
  uint64_t quota = UINT64_MAX;          // measured I/Os this thread does (--ios)
  std::vector<uint32_t> files;          // indices into targets
  std::vector<uint64_t> start_block;    // sequential start per file (threads sharing a target)
  std::vector<uint64_t> stride, phase;  // --verify: the slice of blocks this thread owns
};

// One plan per thread (job.threads of them), in thread order. Reads only
// each target's range; `targets` need not be open.
std::vector<Plan> make_plans(const JobSpec& job, const std::vector<Target>& targets);

}  // namespace ioacct
