#include "runner/result.hpp"

#include <algorithm>

#include "acct/device_identity.hpp"
#include "common/errors.hpp"

namespace ioacct {

std::string error_key_name(int key) {
  return key == kErrEof ? "EOF" : errno_name(key);
}

std::vector<TargetInfo> target_infos(const Targets& targets) {
  std::vector<TargetInfo> out;
  for (const auto& t : targets.list) {
    out.push_back({t.path, t.device, t.is_block, t.is_temp, t.base, t.range, t.dio_align, std::nullopt});
    if (!t.device.empty()) out.back().identity = device_identity(t.device);
  }
  return out;
}

uint64_t RunResult::error_count() const {
  uint64_t n = 0;
  for (const auto& [k, v] : total.errors) n += v;
  return n;
}

namespace {

void merge_into(std::shared_ptr<Histogram>& into, const std::shared_ptr<Histogram>& from) {
  if (!from) return;
  if (!into) into = std::make_shared<Histogram>();
  into->merge(*from);
}

void merge_dir(DirLatency& into, const DirLatency& from) {
  merge_into(into.lat, from.lat);
  merge_into(into.slat, from.slat);
  merge_into(into.clat, from.clat);
}

// The threads' reads' and writes' latency, where any kept them apart.
void merge_directions(ThreadResult& into, std::span<const ThreadResult> threads) {
  if (std::none_of(threads.begin(), threads.end(), [](const ThreadResult& r) { return r.read_lat.lat != nullptr; }))
    return;
  into.read_lat.lat = std::make_shared<Histogram>();
  into.write_lat.lat = std::make_shared<Histogram>();
  for (const auto& r : threads) {
    if (r.read_lat.lat) {
      merge_dir(into.read_lat, r.read_lat);
      merge_dir(into.write_lat, r.write_lat);
    } else if (r.reads && !r.writes) {
      merge_dir(into.read_lat, {r.latency, r.slat, r.clat});
    } else if (r.writes && !r.reads) {
      merge_dir(into.write_lat, {r.latency, r.slat, r.clat});
    }
  }
}

}  // namespace

ThreadResult merge_results(std::span<const ThreadResult> threads) {
  ThreadResult t;
  t.latency = std::make_shared<Histogram>();
  uint64_t open = UINT64_MAX, close = 0;
  t.latency_found = !threads.empty();
  for (const auto& r : threads) {
    t.depth += r.depth;
    t.latency_depth += r.latency_depth;  // one thread per job with a target (job.cpp)
    t.latency_found = t.latency_found && r.latency_found;
    if (t.floor_missed.empty()) t.floor_missed = r.floor_missed;  // the first thread's, in order
    t.ios += r.ios;
    t.reads += r.reads;
    t.writes += r.writes;
    t.trims += r.trims;
    t.bytes_read += r.bytes_read;
    t.bytes_written += r.bytes_written;
    t.bytes_trimmed += r.bytes_trimmed;
    t.syncs += r.syncs;
    if (r.window_start_ns) {
      open = std::min(open, r.window_start_ns);
      close = std::max(close, r.window_start_ns + r.window_ns);
    }
    t.latency->merge(*r.latency);
    merge_into(t.slat, r.slat);
    merge_into(t.clat, r.clat);
    merge_into(t.trim_latency, r.trim_latency);
    merge_into(t.sync_latency, r.sync_latency);
    t.slat_unsplit += r.slat_unsplit;
    t.clat_at_submit += r.clat_at_submit;
    t.engine.syscalls += r.engine.syscalls;
    t.engine.submit_syscalls += r.engine.submit_syscalls;
    t.engine.reap_syscalls += r.engine.reap_syscalls;
    t.engine.submitted += r.engine.submitted;
    t.engine.reaped += r.engine.reaped;
    for (const auto& [k, v] : r.errors) t.errors[k] += v;
    t.short_resubmits += r.short_resubmits;
    t.eagain_retries += r.eagain_retries;
    t.faults.eio += r.faults.eio;
    t.faults.short_io += r.faults.short_io;
    t.faults.eagain += r.faults.eagain;
    t.faults.delayed += r.faults.delayed;
    if (t.refill.decided_by.empty()) t.refill.decided_by = r.refill.decided_by;
    else if (!r.refill.decided_by.empty() && r.refill.decided_by != t.refill.decided_by) t.refill.decided_by = "mixed";
    t.refill.each_ns += r.refill.each_ns;
    t.refill.pass_ns += r.refill.pass_ns;
    t.refill.probes += r.refill.probes;
    t.refill.chose_each += r.refill.chose_each;
    t.refill.extended += r.refill.extended;
    t.refill.cut_short += r.refill.cut_short;
    t.refill.unconfirmed += r.refill.unconfirmed;
    t.refill.probe_ratios.insert(t.refill.probe_ratios.end(), r.refill.probe_ratios.begin(), r.refill.probe_ratios.end());
  }
  merge_directions(t, threads);
  if (close) {
    t.window_start_ns = open;
    t.window_ns = close - open;
  }
  return t;
}

void RunResult::merge_threads() {
  total = merge_results(threads);
  window_ns = total.window_ns;
  for (auto& j : jobs) {
    j.total = merge_results(std::span<const ThreadResult>(threads).subspan(j.first_thread, j.threads));
    j.window_ns = j.total.window_ns;
  }
}

}  // namespace ioacct
