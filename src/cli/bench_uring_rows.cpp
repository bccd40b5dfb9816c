// io_uring's modes as bench options, one row each (cli/bench_options.hpp;
// docs/cli.md, "io_uring modes"): the SQ thread, polling, the flags wished
// on or off, the wait, and RWF_NOWAIT.
#include <fmt/format.h>

#include <span>
#include <string>

#include "cli/bench_options.hpp"
#include "common/errors.hpp"
#include "common/units.hpp"

namespace ioacct {
namespace {

void decode_sq_cpu(const BenchGiven& g, JobSpec& j) {
  const uint64_t cpu = parse_id(g.flag, g.text, "a CPU number");
  if (cpu > 65535) throw UsageError(fmt::format("--sq-cpu: {} is out of range (0 to 65535)", g.text));
  j.uring.sq_cpu = static_cast<int>(cpu);
}

void decode_sq_idle(const BenchGiven& g, JobSpec& j) {
  const auto d = parse_duration(g.flag, g.text);
  if (d.count() % 1'000'000 || d.count() == 0)
    throw UsageError(fmt::format("--sq-idle: '{}' must be a whole number of milliseconds, at least 1ms "
                                 "(sq_thread_idle is in ms)", g.text));
  j.uring.sq_idle_ms = static_cast<uint32_t>(d.count() / 1'000'000);
}

// A flag wished on (--fixed-files) has its opposite (--no-fixed-files) in
// the next row: the kernel's default unless one is given, never both.
template <bool BenchArgs::*Off, FlagWish UringOptions::*Wish>
void wish_on(const BenchGiven& g, JobSpec& j) {
  if (g.args.*Off) throw UsageError(fmt::format("{}: given both on and off", g.flag));
  j.uring.*Wish = FlagWish::On;
}
template <FlagWish UringOptions::*Wish, FlagWish To>
void wish(const BenchGiven&, JobSpec& j) {
  j.uring.*Wish = To;
}

void decode_wait(const BenchGiven& g, JobSpec& j) {
  UringOptions& u = j.uring;
  const std::string& w = g.text;
  if (w == "sleep") {
    u.wait = WaitMode::Sleep;
  } else if (w == "spin") {
    u.wait = WaitMode::Spin;
  } else if (w.rfind("hybrid", 0) == 0) {
    u.wait = WaitMode::Hybrid;
    if (w.size() > 7 && w[6] == ':') u.hybrid_spin_ns = static_cast<uint64_t>(parse_duration("--wait", w.substr(7)).count());
    else if (w != "hybrid") throw UsageError(fmt::format("--wait: '{}' is not sleep, spin or hybrid:DURATION", w));
  } else {
    throw UsageError(fmt::format("--wait: '{}' is not sleep, spin or hybrid:DURATION", w));
  }
}

// RWF_NOWAIT is io_uring's mode, and a per-call flag of pvsync2's preadv2.
void decode_nowait(const BenchGiven&, JobSpec& j) {
  if (j.engine == EngineKind::Psync && j.sync.call == SyncCall::Preadv2) j.sync.nowait = true;
  else j.uring.nowait = true;
}

constexpr BenchOption kUringRows[] = {
  {"--sqpoll", "", "Kernel SQ polling thread submits (IORING_SETUP_SQPOLL)", &BenchArgs::sqpoll,
   set_on<&JobSpec::uring, &UringOptions::sqpoll>},
  {"--sq-cpu", "N", "Pin the SQ thread to this CPU (IORING_SETUP_SQ_AFF)", &BenchArgs::sq_cpu, decode_sq_cpu},
  {"--sq-idle", "DURATION", "SQ thread idle time before it sleeps (sq_thread_idle; default 1s)", &BenchArgs::sq_idle,
   decode_sq_idle},
  {"--sq-shared", "", "All threads' rings share one SQ thread (IORING_SETUP_ATTACH_WQ)", &BenchArgs::sq_shared,
   set_on<&JobSpec::sq_shared>},
  {"--iopoll", "", "Polled completions (IORING_SETUP_IOPOLL; O_DIRECT on a device with poll queues)",
   &BenchArgs::iopoll, set_on<&JobSpec::uring, &UringOptions::iopoll>},
  {"--fixed-files", "", "Demand registered files (IOSQE_FIXED_FILE; default: used if the kernel and limits allow)",
   &BenchArgs::fixed_files, wish_on<&BenchArgs::no_fixed_files, &UringOptions::fixed_files>},
  {"--no-fixed-files", "", "Do not register the files", &BenchArgs::no_fixed_files,
   wish<&UringOptions::fixed_files, FlagWish::Off>},
  {"--fixed-bufs", "",
   "Demand registered buffers (READ_FIXED/WRITE_FIXED; default: used if the kernel and RLIMIT_MEMLOCK allow)",
   &BenchArgs::fixed_bufs, wish_on<&BenchArgs::no_fixed_bufs, &UringOptions::fixed_bufs>},
  {"--no-fixed-bufs", "", "Do not register the buffers", &BenchArgs::no_fixed_bufs,
   wish<&UringOptions::fixed_bufs, FlagWish::Off>},
  {"--register-ring", "", "Demand a registered ring fd (IORING_ENTER_REGISTERED_RING; default: used on 5.18+)",
   &BenchArgs::register_ring, wish_on<&BenchArgs::no_register_ring, &UringOptions::register_ring>},
  {"--no-register-ring", "", "Do not register the ring fd", &BenchArgs::no_register_ring,
   wish<&UringOptions::register_ring, FlagWish::Off>},
  {"--vectored", "", "READV/WRITEV instead of READ/WRITE", &BenchArgs::vectored,
   set_on<&JobSpec::uring, &UringOptions::vectored>},
  {"--single-issuer", "", "Demand IORING_SETUP_SINGLE_ISSUER (default: used if the kernel has it)",
   &BenchArgs::single_issuer, wish_on<&BenchArgs::no_single_issuer, &UringOptions::single_issuer>},
  {"--no-single-issuer", "", "Do not use IORING_SETUP_SINGLE_ISSUER", &BenchArgs::no_single_issuer,
   wish<&UringOptions::single_issuer, FlagWish::Off>},
  {"--defer-taskrun", "", "Demand IORING_SETUP_DEFER_TASKRUN (default: used without --sqpoll)",
   &BenchArgs::defer_taskrun, wish_on<&BenchArgs::no_defer_taskrun, &UringOptions::defer_taskrun>},
  {"--no-defer-taskrun", "", "Do not use IORING_SETUP_DEFER_TASKRUN", &BenchArgs::no_defer_taskrun,
   wish<&UringOptions::defer_taskrun, FlagWish::Off>},
  {"--coop-taskrun", "", "Demand IORING_SETUP_COOP_TASKRUN (default: used if the kernel has it)",
   &BenchArgs::coop_taskrun, wish_on<&BenchArgs::no_coop_taskrun, &UringOptions::coop_taskrun>},
  {"--no-coop-taskrun", "", "Do not use IORING_SETUP_COOP_TASKRUN", &BenchArgs::no_coop_taskrun,
   wish<&UringOptions::coop_taskrun, FlagWish::Off>},
  {"--no-sqarray", "", "Demand IORING_SETUP_NO_SQARRAY (needs liburing 2.5+)", &BenchArgs::no_sqarray,
   wish<&UringOptions::no_sqarray, FlagWish::On>},
  {"--wait", "MODE", "sleep (in io_uring_enter), spin (poll the CQ) or hybrid:DURATION (spin, then sleep)",
   &BenchArgs::wait, decode_wait},
  {"--no-iowait", "", "Waiting is not iowait (IORING_ENTER_NO_IOWAIT, 6.15+)", &BenchArgs::no_iowait,
   set_on<&JobSpec::uring, &UringOptions::no_iowait>},
  {"--nowait", "", "RWF_NOWAIT: fail instead of blocking inline (io_uring, libaio, pvsync2)", &BenchArgs::nowait,
   decode_nowait},
  {"--force-async", "", "IOSQE_ASYNC: always through the io-wq workers", &BenchArgs::force_async,
   set_on<&JobSpec::uring, &UringOptions::force_async>},
};

}  // namespace

std::span<const BenchOption> bench_uring_rows() { return kUringRows; }

}  // namespace ioacct
