#pragma once
// The rings' part of `ioacct export`, walked off the HTTP threads.
// scan_rings() costs a read per ring and can take as long as the machine's
// rings make it (one process holding a thousand of them), so a scrape must
// not be the one that pays: one background thread walks when a scrape asks,
// and a scrape waits for that walk at most `wait_cap`, then serves the last
// complete one, whose age it exports. A scrape that finds a walk begun at
// most `fresh` before it serves that one, and one that comes while another
// scrape waits serves the last complete walk: fifty scrapers a second each
// waiting for a walk of their own held both serving threads, and scrapes
// queued for seconds behind them.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>

#include "monitor/rings.hpp"

namespace ioacct {

// One complete walk. Times are CLOCK_MONOTONIC ns.
struct RingWalk {
  RingScan scan;
  uint64_t began_ns = 0, ended_ns = 0;
  uint64_t seq = 0;  // 1 for the first walk, one more for each
};

// Thread-safe: latest() may be called from any thread. The walking thread
// starts with a first walk at once and is joined by the destructor (after
// the walk in progress, if any, ends).
class RingWalker {
 public:
  explicit RingWalker(std::chrono::nanoseconds wait_cap, std::chrono::nanoseconds fresh = {},
                      std::function<RingScan()> scan = [] { return scan_rings(); });
  ~RingWalker();
  RingWalker(const RingWalker&) = delete;
  RingWalker& operator=(const RingWalker&) = delete;

  // Asks for a walk that begins at `since_ns` or later and waits for it at
  // most `wait_cap`; then the last complete walk, which is older when the
  // cap ran out first. Neither a wait nor a walk when the last complete one
  // began `fresh` or less before `since_ns`; no wait while another scrape
  // waits. Null only while no walk has completed yet.
  std::shared_ptr<const RingWalk> latest(uint64_t since_ns);

 private:
  void run(const std::stop_token& stop);

  std::chrono::nanoseconds wait_cap_;
  uint64_t fresh_ns_;
  std::function<RingScan()> scan_;
  std::mutex mu_;
  std::condition_variable_any wanted_cv_;  // the thread: a walk is wanted
  std::condition_variable done_cv_;        // the scrapes: a walk completed
  uint64_t wanted_ns_ = 1;                 // a walk beginning at or after this is wanted (1: the first one)
  uint64_t began_ns_ = 0;                  // the last walk began then (complete or not)
  int waiting_ = 0;                        // scrapes waiting in latest()
  std::shared_ptr<const RingWalk> latest_;
  std::jthread thread_;  // last: stopped and joined before the rest goes
};

}  // namespace ioacct
