#pragma once
// Concrete engines. Only make_engine() and the tests see these classes.
#include <liburing.h>

#include <optional>
#include <vector>

#include "common/rng.hpp"
#include "engine/engine.hpp"
#include "engine/fused_ring.hpp"

namespace ioacct {

class UringEngine final : public Engine {
 public:
  // nop = true submits IORING_OP_NOP instead of reads and writes: the cost of
  // the ring itself. Throws NotAvailable / RuntimeError / UsageError.
  UringEngine(const EngineOptions& opts, bool nop);
  ~UringEngine() override;
  UringEngine(const UringEngine&) = delete;
  UringEngine& operator=(const UringEngine&) = delete;

  unsigned queue(std::span<const IoRequest> reqs) noexcept override;
  int enter(unsigned wait_nr, std::span<IoCompletion> out, uint64_t timeout_ns) noexcept override;
  const EngineCounters& counters() const noexcept override { return counters_; }
  std::string describe() const override;
  uint32_t setup_flags() const noexcept override { return flags_; }
  int ring_fd() const noexcept override { return ring_.ring_fd; }
  std::vector<std::string> fallbacks() const override { return fallbacks_; }
  FusedRing* fused() noexcept override { return fused_ ? &*fused_ : nullptr; }

 private:
  void setup(const EngineOptions& opts);
  void register_resources(const EngineOptions& opts);
  unsigned flush_sq() noexcept;
  void prep_trim(io_uring_sqe* sqe, int fd, const IoRequest& r) noexcept;
  int32_t blkdiscard(const IoRequest& r) noexcept;
  int sys_enter(unsigned to_submit, unsigned min_complete, unsigned flags, uint64_t timeout_ns) noexcept;
  EnterMode enter_mode() const noexcept;
  bool spin_wait(unsigned wait_nr, uint64_t until_ns) noexcept;

  // user_data bit of a block discard, whose failure may call for the fallback.
  static constexpr uint64_t kDiscardTag = uint64_t{1} << 63;

  io_uring ring_{};
  bool ring_ok_ = false;
  std::vector<int> fds_;
  std::vector<uint8_t> is_block_;
  std::vector<iovec> iovs_;  // per tag, for READV/WRITEV
  // Block discards: IORING_OP_URING_CMD's BLOCK_URING_CMD_DISCARD (6.12+),
  // or, where the kernel refuses it, BLKDISCARD made inline by queue(), its
  // result handed back by the next enter() (`inline_done_`).
  bool discard_cmd_ = true;
  std::vector<IoRequest> trims_;            // per tag: the discard in flight, for the fallback
  std::vector<IoCompletion> inline_done_;
  EngineCounters counters_;
  uint32_t flags_ = 0;
  uint32_t features_ = 0;
  UringOptions o_;
  bool nop_;
  bool fixed_files_ = false;  // in use (registered), whatever was asked
  bool fixed_bufs_ = false;
  bool registered_ring_ = false;
  std::vector<std::string> fallbacks_;
  std::optional<FusedRing> fused_;  // where a read or write is one plain SQE
};

class PsyncEngine final : public Engine {
 public:
  explicit PsyncEngine(const EngineOptions& opts);
  unsigned queue(std::span<const IoRequest> reqs) noexcept override;
  int enter(unsigned wait_nr, std::span<IoCompletion> out, uint64_t timeout_ns) noexcept override;
  const EngineCounters& counters() const noexcept override { return counters_; }
  std::string describe() const override;

 private:
  int32_t run(const IoRequest& r) noexcept;
  ssize_t move(int fd, const IoRequest& r, off_t off) noexcept;

  std::vector<int> fds_;
  std::vector<uint8_t> is_block_;
  std::vector<IoRequest> queue_;
  size_t queued_ = 0;
  SyncOptions sync_;
  int rwf_ = 0;  // pvsync2's per-call flags (RWF_HIPRI, RWF_NOWAIT)
  Rng hipri_draw_{0x41b21ull};  // --hipri-percentage: which calls carry RWF_HIPRI
  EngineCounters counters_;
};

// libaio (libaio_engine.cpp keeps libaio.h to itself: its struct iocb and
// io_event would clash with <linux/aio_abi.h> wherever both are seen).
// Throws NotAvailable (no AIO in the kernel) or RuntimeError (fs.aio-max-nr).
std::unique_ptr<Engine> make_libaio_engine(const EngineOptions& opts);
void check_libaio_available(unsigned depth);

}  // namespace ioacct
