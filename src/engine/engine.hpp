#pragma once
// The one engine interface every I/O backend implements (uring, psync, nop,
// libaio).
//
// It is a batch interface: the runner queues a batch of requests and makes one
// enter() call that submits them and collects completions, so there are two
// virtual calls per batch and none per I/O. Per-I/O failures come back as
// completions with res = -errno, never as exceptions or return values; only
// the engine's own syscall failing (the ring refused the call) is returned.
// An io_uring engine also offers the fused path (fused(), one pass per I/O
// for the runner's steady state), beside this interface, not instead of it.
#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/options.hpp"

namespace ioacct {

class FusedRing;  // engine/fused_ring.hpp

// Read and Write move `len` bytes at `offset`. Fsync and Fdatasync sync the
// file (offset, len and buf unused). Trim discards [offset, offset + len): a
// block device's discard, a file's punched hole. Sync and trim complete with
// res 0 when done (never a byte count).
enum class IoOp : uint8_t { Read, Write, Fsync, Fdatasync, Trim };
inline bool io_moves_data(IoOp op) { return op == IoOp::Read || op == IoOp::Write; }

struct IoRequest {
  uint64_t offset;
  void* buf;      // inside EngineOptions::buffers[tag] when buffers are registered
  uint32_t len;
  uint32_t file;  // index into EngineOptions::fds
  uint32_t tag;   // handed back unchanged in the completion; < depth
  IoOp op;
  bool may_block = false;  // a retry after EAGAIN under --nowait: submit without RWF_NOWAIT
};

struct IoCompletion {
  uint32_t tag;
  int32_t res;  // bytes transferred (>= 0), or -errno
};

struct EngineOptions {
  unsigned depth = 32;   // most requests in flight at once
  std::vector<int> fds;  // open files, indexed by IoRequest::file; not owned
  std::vector<uint8_t> is_block;  // per fd: a block device (Trim discards) or a file (Trim punches a hole)
  bool force_blkdiscard = false;  // tests only: io_uring discards with BLKDISCARD, as before 6.12
  std::vector<iovec> buffers;  // one per tag, for registered buffers; not owned
  UringOptions uring;
  SyncOptions sync;  // the psync engine's syscall and flags
};

// Counted by the engine itself: exact, no clock, no syscall of their own.
struct EngineCounters {
  uint64_t syscalls = 0;         // io_uring_enter calls; psync's pread, pwrite (sync: lseek and read or write) ...
  uint64_t submit_syscalls = 0;  // of those, calls that submitted I/O
  uint64_t reap_syscalls = 0;    // of those, calls that waited for completions
  uint64_t submitted = 0;        // I/Os handed to the kernel
  uint64_t reaped = 0;           // completions collected
};

class Engine {
 public:
  virtual ~Engine() = default;

  // Queues requests for the next enter(). Returns how many were queued; fewer
  // than reqs.size() only when the queue is full (that is not an error).
  virtual unsigned queue(std::span<const IoRequest> reqs) noexcept = 0;

  // Submits what is queued, waits until at least `wait_nr` completions are
  // ready, `timeout_ns` passes (0 = no limit) or a signal interrupts a wait
  // that sleeps, then moves up to out.size() completions into `out`.
  // Returns how many it moved, or -errno when the kernel refused the call
  // itself (-EINTR and -ETIME are not errors: the caller just loops).
  virtual int enter(unsigned wait_nr, std::span<IoCompletion> out, uint64_t timeout_ns) noexcept = 0;

  virtual const EngineCounters& counters() const noexcept = 0;
  // One line for the start-up banner: "io_uring (COOP_TASKRUN|SINGLE_ISSUER, sq 32, cq 64)".
  virtual std::string describe() const = 0;
  // IORING_SETUP_* flags the kernel accepted (0 for engines without a ring).
  virtual uint32_t setup_flags() const noexcept { return 0; }
  // The ring's fd, for ATTACH_WQ and for finding it in /proc (-1: no ring).
  virtual int ring_fd() const noexcept { return -1; }
  // What was asked for by default and could not be had, one line each,
  // naming the cause and what to do: "registered buffers: ... (ENOMEM); raise
  // it with 'ulimit -l'". Empty when the engine runs as asked.
  virtual std::vector<std::string> fallbacks() const { return {}; }
  // The fused path (engine/fused_ring.hpp): completions read and the next
  // requests written in place, one pass per I/O. Null where the engine has
  // no ring of its own or its requests are not one plain SQE each; then
  // queue() and enter() are the way. The two may be mixed between calls.
  virtual FusedRing* fused() noexcept { return nullptr; }
};

// What the conformance suite and the runner may rely on per engine.
struct EngineTraits {
  bool moves_data;  // false for nop: completes every request, touches no byte
  bool checks_fd;   // false for nop: never looks at the file
  bool fused;       // offers the fused path in its default mode (the io_uring engines)
};
EngineTraits engine_traits(EngineKind kind) noexcept;
// The engine's name as --engine takes it: the psync family by its syscall
// ("psync", "sync", "pvsync", "pvsync2", fio's names).
const char* engine_name(EngineKind kind, SyncCall call = SyncCall::Pread) noexcept;

// Creates an engine. Call it on the thread that will use the engine: the
// io_uring engine asks for SINGLE_ISSUER, which binds the ring to its creator.
// Throws NotAvailable (io_uring disabled or missing, no AIO) or RuntimeError
// (libaio: fs.aio-max-nr reached).
std::unique_ptr<Engine> make_engine(EngineKind kind, const EngineOptions& opts);

// Checks that the engine can run here at all (io_uring not disabled or
// missing, AIO in the kernel and events left under fs.aio-max-nr) before
// anything expensive is done. Throws NotAvailable or RuntimeError.
void check_engine_available(EngineKind kind, const UringOptions& uring, unsigned depth);

// Names of IORING_SETUP_* bits, "COOP_TASKRUN|SINGLE_ISSUER" ("none" for 0).
std::string setup_flag_names(uint32_t flags);

}  // namespace ioacct
