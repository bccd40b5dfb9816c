#include "workload/run_targets.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>

#include "common/errors.hpp"

namespace ioacct {
namespace {

// The target an earlier job holds for writing at `path`'s block device, if any.
const Target* held_for_writing(const std::vector<JobSpec>& jobs, const std::vector<Targets>& opened, size_t upto,
                               const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) return nullptr;
  for (size_t j = 0; j < upto; ++j) {
    if (!rw_writes(jobs[j].rw)) continue;
    for (const Target& t : opened[j].list)
      if (t.is_block && makedev(t.dev_major, t.dev_minor) == st.st_rdev) return &t;
  }
  return nullptr;
}

}  // namespace

std::vector<Targets> open_run_targets(const std::vector<JobSpec>& jobs, const std::function<bool()>& should_stop) {
  std::vector<Targets> out(jobs.size());
  // The temporary file, once, for every job without a target.
  Targets temp;
  const JobSpec* largest = nullptr;
  for (const JobSpec& j : jobs)
    if (j.targets.empty() && (!largest || j.temp_size > largest->temp_size)) largest = &j;
  if (largest) temp = open_targets(*largest, should_stop);

  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobSpec& job = jobs[i];
    if (job.targets.empty()) {
      Target t = reopen_target(temp.list.front(), job);
      out[i].list.push_back(t);  // owned from here
      Target& mine = out[i].list.back();
      mine.range = std::min(job.temp_size, temp.list.front().range) / job.bs * job.bs;
      if (mine.range < job.bs)
        throw UsageError(fmt::format("--size: {} bytes is smaller than one --bs block ({})", job.temp_size, job.bs));
      continue;
    }
    // Named targets: opened by the job itself, but for a block device an
    // earlier job already holds for writing, which is opened again through it.
    JobSpec own = job;
    own.targets.clear();
    std::vector<std::pair<size_t, const Target*>> shared;
    for (size_t k = 0; k < job.targets.size(); ++k) {
      const Target* held = rw_writes(job.rw) ? held_for_writing(jobs, out, i, job.targets[k]) : nullptr;
      if (held) shared.emplace_back(k, held);
      else own.targets.push_back(job.targets[k]);
    }
    for (const auto& [k, held] : shared)
      if (!job.destroy_data)
        throw UsageError(fmt::format("{}: is a block device and --rw {} writes to it, destroying what it holds; add "
                                     "--destroy-data if that is what you want", job.targets[k], rw_name(job.rw)));
    Targets opened = own.targets.empty() ? Targets{} : open_targets(own, should_stop);
    size_t next_own = 0;
    for (size_t k = 0; k < job.targets.size(); ++k) {
      auto it = std::find_if(shared.begin(), shared.end(), [&](const auto& s) { return s.first == k; });
      if (it == shared.end()) {
        out[i].list.push_back(opened.list[next_own]);
        opened.list[next_own++].fd = -1;  // moved: owned by out[i] now
        continue;
      }
      out[i].list.push_back(reopen_target(*it->second, job));
      set_range(job, out[i].list.back());
    }
  }
  return out;
}

}  // namespace ioacct
