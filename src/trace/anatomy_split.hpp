#pragma once
// The anatomy of one I/O: its stamps (two from the bench thread, the rest
// from the kernel's tracepoints, all CLOCK_MONOTONIC) split into stages. A
// pure core over plain data, so that every rule of linking is unit-tested.
//
// The stages telescope: each runs from the previous stamp the I/O has to the
// next, so for a linked I/O they sum to its end-to-end latency exactly, and a
// stamp out of order (or missing where it must be) unlinks the I/O instead of
// giving a negative or stretched stage. docs/design.md ("Anatomy of an I/O").
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ioacct {

enum class AnatomyStage : uint8_t {
  Submit,      // user submit stamp -> io_uring_submit_req (psync: syscall entry)
  Issue,       // -> block_io_start of the I/O's block request
  Queue,       // -> block_rq_issue (the driver has it)
  Device,      // -> block_rq_complete
  Completion,  // -> io_uring_complete (psync: syscall exit)
  Kernel,      // submit_req -> io_uring_complete, for I/Os whose block stages are not linked
  Reaping,     // -> user reap stamp (psync: the syscall has returned)
};
inline constexpr int kAnatomyStages = 7;

// Which side of the table the I/O went through: io_uring (uring, nop) or a
// plain syscall (psync); only the names of the stages differ.
enum class AnatomyFlavor : uint8_t { Uring, Syscall };

// How a block request is tied to its I/O. The programs give a request to the
// I/O whose submission its thread is in when the request starts (the one
// after the thread's latest submission stamp); which runs say that is the
// I/O's request:
enum class AnatomyBlockLink : uint8_t {
  // One I/O in flight per thread: nothing else of the thread can start a
  // request. The wake-up inside the completion is that I/O's too.
  Order,
  // Deeper, O_DIRECT on io_uring: a request starts inline, inside its own
  // SQE's issue, or in an io-wq worker (not a bench thread: in no I/O); a
  // retry is queued to io-wq. So the request is the submission's.
  Submission,
  // Deeper, through the page cache: a read retried from task work (after a
  // locked page) can start readahead while a later I/O is the latest
  // submitted. Block stamps only feed per-request distributions.
  None,
};

struct AnatomyStageName {
  std::string_view name, from, to;
};
AnatomyStageName anatomy_stage_name(AnatomyStage s, AnatomyFlavor f);

// One I/O's stamps, 0 where absent.
struct AnatomyStamps {
  uint64_t user_submit = 0, user_reap = 0;  // the bench thread's (the latency figure's own)
  uint64_t submit = 0;                      // io_uring_submit_req / sys_enter
  uint64_t io_start = 0, rq_issue = 0, rq_complete = 0;  // its first block request
  uint32_t nreq = 0;                        // block requests started for it
  uint64_t post = 0;                        // io_uring_complete / sys_exit
  uint64_t wake = 0, run = 0;               // the thread's latest sched_wakeup, and going on CPU
};

enum class AnatomyUnlinked : uint8_t {
  None,
  NoSubmit,    // no submission stamp inside the I/O's window (not seen, or reused)
  NoPost,      // no completion stamp inside it
  Retried,     // resubmitted (short transfer, EAGAIN): its stamps are the last try's
  Count,
};

struct AnatomySplit {
  AnatomyUnlinked unlinked = AnatomyUnlinked::None;
  std::array<std::optional<uint64_t>, kAnatomyStages> stage{};  // ns, present stages only
  uint64_t e2e = 0;                                             // user_reap - user_submit
  int64_t residual = 0;                                         // e2e - sum(stages)
  // The I/O's block request, when it had one with all three stamps in order
  // (with or without being linked per I/O).
  std::optional<uint64_t> req_queue, req_device;
  bool block_linked = false;  // its block stages are in `stage`
  bool had_request = false;   // at least one block request started for it
  // Its request was started and issued, but no program saw it complete: the
  // kernel runs no BPF program on top of some tasks (docs/design.md, "Lost
  // events"), and a completion in an interrupt lands on whichever is current.
  bool end_unseen = false;
  // The thread slept and was woken inside the completion (or kernel) stage:
  // sched_wakeup -> on CPU, a part of that stage, not a stage of its own
  // (AnatomyBlockLink::Order only: one I/O in flight, so the wake-up is its).
  std::optional<uint64_t> wakeup;
};

// Splits one I/O. Unless `link` is None, its block request is linked to it
// when it had exactly one, wholly inside its kernel time; otherwise the block
// stamps only feed the per-request distributions and the I/O's kernel time
// is one stage.
AnatomySplit split_io(const AnatomyStamps& s, AnatomyBlockLink link) noexcept;

// The stage a run's wake-ups lie in, given how many of its I/Os each of the
// two stages that can hold one counts: split_io() keeps a wake-up only
// between the block request's completion and the I/O's (the completion
// stage) or, where the block stages are not linked, inside the kernel time.
// A run whose I/Os are linked, all or most, shows it under the completion.
constexpr AnatomyStage anatomy_wakeup_stage(uint64_t completion_ios, uint64_t kernel_ios) noexcept {
  return completion_ios >= kernel_ios ? AnatomyStage::Completion : AnatomyStage::Kernel;
}

}  // namespace ioacct
