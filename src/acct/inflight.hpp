#pragma once
// Exact "in flight" time: the union over all threads of the intervals from
// an I/O's submission to its reaping, and how long 0, 1, 2-3, 4-7, ... I/Os
// were in flight, to the clock's resolution, in constant memory.
//
// A worker logs its own in-flight count each time it changes, with the batch
// stamp it already has (two events per loop, none per I/O, no atomic read-
// modify-write: a single-producer ring with release stores). The main thread
// drains the rings and merges them in time order, but only up to the point
// every worker has passed (each publishes a watermark), so an event can never
// arrive "in the past". See docs/design.md.
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

namespace ioacct {

struct InflightEvent {
  uint64_t t;      // CLOCK_MONOTONIC ns
  uint32_t count;  // this thread's I/Os in flight from t on
};

class InflightLog {
 public:
  static constexpr size_t kCapacity = 1 << 14;  // events; drained every few ms
  InflightLog() : buf_(new InflightEvent[kCapacity]) {}

  // Producer (the worker). Waits, counting the waits, if the ring is full.
  void push(uint64_t t, uint32_t count) noexcept;
  // Everything the worker will log from now on has a stamp >= t.
  void watermark(uint64_t t) noexcept { watermark_.store(t, std::memory_order_release); }
  void finish() noexcept { finished_.store(true, std::memory_order_release); }
  uint64_t waits() const noexcept { return waits_.load(std::memory_order_relaxed); }

  // Consumer (the main thread).
  template <typename F>
  void drain(F&& f) {
    const uint64_t head = head_.load(std::memory_order_acquire);
    uint64_t tail = tail_.load(std::memory_order_relaxed);
    for (; tail != head; ++tail) f(buf_[tail & (kCapacity - 1)]);
    tail_.store(tail, std::memory_order_release);
  }
  uint64_t watermark_now() const noexcept { return watermark_.load(std::memory_order_acquire); }
  bool finished() const noexcept { return finished_.load(std::memory_order_acquire); }

 private:
  std::unique_ptr<InflightEvent[]> buf_;
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
  alignas(64) std::atomic<uint64_t> watermark_{0};
  std::atomic<bool> finished_{false};
  std::atomic<uint64_t> waits_{0};
};

// What the merge found over [start, end].
struct InflightResult {
  static constexpr int kBuckets = 18;  // 0, 1, 2-3, 4-7, ..., 2^16 and more
  uint64_t window_ns = 0;
  uint64_t busy_ns = 0;                // at least one I/O in flight
  uint64_t inflight_ns = 0;            // the count in flight integrated over time: / window_ns = mean
  uint64_t by_depth_ns[kBuckets] = {};  // time spent with that many in flight
  uint64_t log_waits = 0;              // times a worker found its log full
  static int bucket(uint64_t n) noexcept;
  static uint64_t bucket_low(int b) noexcept { return b == 0 ? 0 : uint64_t{1} << (b - 1); }
};

class InflightMerger {
 public:
  explicit InflightMerger(size_t threads) : pending_(threads), count_(threads, 0) {}
  // Time is counted from `start` (the window's opening); earlier events only
  // set the counts.
  void start_at(uint64_t start) { start_ = last_ = start; }
  // Drains every log and merges what is safe to merge. Call often.
  // `window_end`, asked after the logs' watermarks are read, returns the
  // window's end once it is known (UINT64_MAX before): nothing after it is
  // merged. Before, what is merged ends at the earliest watermark of a
  // worker whose window was still open when it was read, never later than
  // that window's end.
  void poll(const std::vector<InflightLog*>& logs, const std::function<uint64_t()>& window_end = {});
  // After the workers are done: merges the rest, up to `end`.
  InflightResult finish(const std::vector<InflightLog*>& logs, uint64_t end);
  // The time series: busy time is also split at these instants (increasing).
  void add_boundary(uint64_t t) { bounds_.push_back(t); }
  // Busy ns of the intervals that end at the boundaries merged past so far.
  const std::vector<uint64_t>& interval_busy() const { return done_busy_; }

 private:
  void advance(uint64_t t);
  void step(uint64_t t);
  void merge_until(uint64_t safe);

  std::vector<std::deque<InflightEvent>> pending_;
  std::vector<uint32_t> count_;
  uint64_t total_ = 0;
  uint64_t start_ = 0, last_ = 0, end_ = UINT64_MAX;
  InflightResult r_;
  std::vector<uint64_t> bounds_, done_busy_;
  size_t next_b_ = 0;
  uint64_t cur_busy_ = 0;
};

}  // namespace ioacct
