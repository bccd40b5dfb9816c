#include "runner/plan.hpp"

namespace ioacct {

std::vector<Plan> make_plans(const JobSpec& job, const std::vector<Target>& targets) {
  const unsigned T = job.threads;
  const size_t nt = targets.size();
  std::vector<Plan> plans(T);
  for (unsigned i = 0; i < T; ++i) {
    Plan& p = plans[i];
    p.index = i;
    p.depth = job.depth_per_thread();
    if (!job.cpus.empty()) p.cpu = job.cpus[i % job.cpus.size()];
    if (job.ios) p.quota = *job.ios / T + (i < *job.ios % T ? 1 : 0);
    if (T <= nt) {
      for (size_t j = i; j < nt; j += T) {
        p.files.push_back(static_cast<uint32_t>(j));
        p.start_block.push_back(0);
        p.stride.push_back(1);
        p.phase.push_back(0);
      }
    } else {
      // More threads than targets: threads share a target; sequential
      // threads start at evenly spaced points of it so they do not all read
      // the same blocks.
      const size_t j = i % nt;
      const unsigned sharers = static_cast<unsigned>(T / nt + (j < T % nt ? 1 : 0));
      const unsigned k = static_cast<unsigned>(i / nt);
      const uint64_t blocks = targets[j].range / job.bs_align();  // OffsetGen's blocks
      p.files.push_back(static_cast<uint32_t>(j));
      if (job.verify) {
        // Disjoint slices (every sharers-th block): no two threads ever
        // have I/O in flight to the same block.
        p.start_block.push_back(0);
        p.stride.push_back(sharers);
        p.phase.push_back(k);
      } else {
        p.start_block.push_back(blocks * k / sharers);
        p.stride.push_back(1);
        p.phase.push_back(0);
      }
    }
  }
  return plans;
}

}  // namespace ioacct
