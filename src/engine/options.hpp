#pragma once
// What a run asks of its engine: which one, the io_uring modes, and (tests
// only) the faults to inject. Plain data, apart from the one parser of
// --inject-faults, so that a job (workload/job.hpp) can carry them without
// the engine interface itself.
#include <cstdint>
#include <string_view>

namespace ioacct {

enum class EngineKind { Uring, Psync, Nop, Libaio };

// The psync family, named as fio names its engines: which syscall moves the
// data, one I/O per call. psync: pread/pwrite; sync: lseek, then read/write;
// pvsync: preadv/pwritev; pvsync2: preadv2/pwritev2, with RWF_HIPRI
// (`hipri`: poll for the completion where the device has poll queues) and
// RWF_NOWAIT (`nowait`: EAGAIN instead of blocking) as per-call flags.
enum class SyncCall { Pread, Read, Preadv, Preadv2 };
struct SyncOptions {
  SyncCall call = SyncCall::Pread;
  bool hipri = false;   // pvsync2 only
  unsigned hipri_pct = 100;  // with hipri: the share of calls that carry RWF_HIPRI (fio's hipri_percentage)
  bool nowait = false;  // pvsync2 only
};

// How a ring is waited on: sleep in io_uring_enter, busy-poll the CQ, or
// busy-poll for a while and then sleep.
enum class WaitMode { Sleep, Spin, Hybrid };

// A ring setup flag ioacct asks for by default can be left to the default
// (used if the kernel takes it, dropped if not), demanded (refusal is an
// error) or refused.
enum class FlagWish { Default, On, Off };

// io_uring modes (ignored by psync; nop uses the ring ones; libaio only
// --vectored, the rest are usage errors with it).
struct UringOptions {
  bool sqpoll = false;
  int sq_cpu = -1;           // IORING_SETUP_SQ_AFF
  uint32_t sq_idle_ms = 0;   // sq_thread_idle; 0: the kernel's default (1 s)
  int attach_wq_fd = -1;     // IORING_SETUP_ATTACH_WQ: share that ring's SQ thread
  bool iopoll = false;
  // Registered files, registered buffers and a registered ring fd save a
  // file lookup, a page pin and an fd lookup per I/O or per call. Default:
  // used wherever the kernel and limits allow, and a refusal is named
  // (Engine::fallbacks); On: a refusal is an error; Off: never asked for.
  FlagWish fixed_files = FlagWish::Default;    // IOSQE_FIXED_FILE
  FlagWish fixed_bufs = FlagWish::Default;     // READ_FIXED/WRITE_FIXED (not with vectored)
  FlagWish register_ring = FlagWish::Default;  // IORING_ENTER_REGISTERED_RING (5.18+)
  bool vectored = false;     // READV/WRITEV
  bool nowait = false;       // RWF_NOWAIT
  bool force_async = false;  // IOSQE_ASYNC
  bool no_iowait = false;    // IORING_ENTER_NO_IOWAIT (6.15+)
  FlagWish single_issuer = FlagWish::Default, defer_taskrun = FlagWish::Default,
           coop_taskrun = FlagWish::Default, no_sqarray = FlagWish::Default;
  WaitMode wait = WaitMode::Sleep;
  uint64_t hybrid_spin_ns = 0;  // WaitMode::Hybrid: spin this long, then sleep
};

struct FaultSpec {
  double eio = 0, short_io = 0, eagain = 0, delay = 0;  // probability per completion
  uint64_t delay_ns = 2'000'000;
  uint64_t seed = 1;
  bool any() const { return eio > 0 || short_io > 0 || eagain > 0 || delay > 0; }
};

// "eio=0.01,short=0.05,eagain=0.02,delay=0.01:5ms,seed=7". Throws UsageError.
FaultSpec parse_fault_spec(std::string_view flag, std::string_view text);

}  // namespace ioacct
