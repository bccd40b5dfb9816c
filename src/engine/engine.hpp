#pragma once
// The one engine interface every I/O backend implements (uring, psync, nop).
//
// It is a batch interface: the runner queues a batch of requests and makes one
// enter() call that submits them and collects completions, so there are two
// virtual calls per batch and none per I/O. Per-I/O failures come back as
// completions with res = -errno, never as exceptions or return values; only
// the engine's own syscall failing (the ring refused the call) is returned.
#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/options.hpp"

namespace ioacct {

enum class IoOp : uint8_t { Read, Write };

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
  std::vector<iovec> buffers;  // one per tag, for registered buffers; not owned
  UringOptions uring;
};

// Counted by the engine itself: exact, no clock, no syscall of their own.
struct EngineCounters {
  uint64_t syscalls = 0;         // io_uring_enter, pread or pwrite calls
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
  // ready or `timeout_ns` passes (0 = no limit), then moves up to out.size()
  // completions into `out`. Returns how many it moved, or -errno when the
  // kernel refused the call itself (-EINTR and -ETIME are not errors: the
  // caller just loops).
  virtual int enter(unsigned wait_nr, std::span<IoCompletion> out, uint64_t timeout_ns) noexcept = 0;

  virtual const EngineCounters& counters() const noexcept = 0;
  // One line for the start-up banner: "io_uring (COOP_TASKRUN|SINGLE_ISSUER, sq 32, cq 64)".
  virtual std::string describe() const = 0;
  // IORING_SETUP_* flags the kernel accepted (0 for engines without a ring).
  virtual uint32_t setup_flags() const noexcept { return 0; }
  // The ring's fd, for ATTACH_WQ and for finding it in /proc (-1: no ring).
  virtual int ring_fd() const noexcept { return -1; }
};

// What the conformance suite and the runner may rely on per engine.
struct EngineTraits {
  bool moves_data;  // false for nop: completes every request, touches no byte
  bool checks_fd;   // false for nop: never looks at the file
};
EngineTraits engine_traits(EngineKind kind) noexcept;
const char* engine_name(EngineKind kind) noexcept;

// Creates an engine. Call it on the thread that will use the engine: the
// io_uring engine asks for SINGLE_ISSUER, which binds the ring to its creator.
// Throws NotAvailable (io_uring disabled or missing) or RuntimeError.
std::unique_ptr<Engine> make_engine(EngineKind kind, const EngineOptions& opts);

// Checks that the engine can run here at all (io_uring not disabled or
// missing) before anything expensive is done. Throws NotAvailable.
void check_engine_available(EngineKind kind, const UringOptions& uring, unsigned depth);

// Names of IORING_SETUP_* bits, "COOP_TASKRUN|SINGLE_ISSUER" ("none" for 0).
std::string setup_flag_names(uint32_t flags);

}  // namespace ioacct
