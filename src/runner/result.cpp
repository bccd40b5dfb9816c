#include "runner/result.hpp"

#include <algorithm>

#include "common/errors.hpp"

namespace ioacct {

std::string error_key_name(int key) {
  return key == kErrEof ? "EOF" : errno_name(key);
}

std::vector<TargetInfo> target_infos(const Targets& targets) {
  std::vector<TargetInfo> out;
  for (const auto& t : targets.list) out.push_back({t.path, t.device, t.is_block, t.is_temp, t.base, t.range, t.dio_align});
  return out;
}

uint64_t RunResult::error_count() const {
  uint64_t n = 0;
  for (const auto& [k, v] : total.errors) n += v;
  return n;
}

void RunResult::merge_threads() {
  ThreadResult t;
  t.latency = std::make_shared<Histogram>();
  for (const auto& r : threads) {
    t.depth += r.depth;
    t.ios += r.ios;
    t.reads += r.reads;
    t.writes += r.writes;
    t.bytes_read += r.bytes_read;
    t.bytes_written += r.bytes_written;
    t.window_ns = std::max(t.window_ns, r.window_ns);
    t.latency->merge(*r.latency);
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
  }
  total = std::move(t);
}

}  // namespace ioacct
