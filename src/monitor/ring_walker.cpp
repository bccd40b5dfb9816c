#include "monitor/ring_walker.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "acct/clock.hpp"

namespace ioacct {

RingWalker::RingWalker(std::chrono::nanoseconds wait_cap, std::chrono::nanoseconds fresh, std::function<RingScan()> scan)
    : wait_cap_(wait_cap),
      fresh_ns_(static_cast<uint64_t>(std::max<int64_t>(0, fresh.count()))),
      scan_(std::move(scan)),
      thread_([this](const std::stop_token& st) { run(st); }) {}

RingWalker::~RingWalker() {
  thread_.request_stop();  // wakes the wait in run(); the walk in progress finishes first
}

void RingWalker::run(const std::stop_token& stop) {
  uint64_t seq = 0;
  std::unique_lock lock(mu_);
  while (wanted_cv_.wait(lock, stop, [this] { return wanted_ns_ > began_ns_; })) {
    const uint64_t began = now_ns();
    began_ns_ = began;
    lock.unlock();
    std::shared_ptr<RingWalk> walk;
    try {
      walk = std::make_shared<RingWalk>(RingWalk{.scan = scan_(), .began_ns = began, .ended_ns = now_ns()});
    } catch (const std::exception&) {
      // A walk that fails (a /proc file unreadable, memory) keeps the last
      // one; the next scrape asks again.
    }
    lock.lock();
    if (walk) {
      walk->seq = ++seq;
      latest_ = std::move(walk);
    }
    done_cv_.notify_all();
  }
}

std::shared_ptr<const RingWalk> RingWalker::latest(uint64_t since_ns) {
  std::unique_lock lock(mu_);
  // A walk begun `fresh` or less before the scrape is served as it is, and
  // asks for no other: fifty scrapers a second then share about two walks a
  // second, where a walk each kept the walking thread busy for ever.
  if (latest_ && latest_->began_ns + fresh_ns_ >= since_ns) return latest_;
  if (since_ns > wanted_ns_) {
    wanted_ns_ = since_ns;
    wanted_cv_.notify_one();
  }
  // One scrape waits for the walk; one that comes while it waits serves the
  // last complete walk at once, so at most one serving thread is held here.
  if (latest_ && waiting_ > 0) return latest_;
  ++waiting_;
  done_cv_.wait_for(lock, wait_cap_, [&] { return latest_ && latest_->began_ns >= since_ns; });
  --waiting_;
  return latest_;
}

}  // namespace ioacct
