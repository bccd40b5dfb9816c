#include "acct/inflight.hpp"

#include <algorithm>
#include <bit>
#include <queue>
#include <thread>

namespace ioacct {

void InflightLog::push(uint64_t t, uint32_t count) noexcept {
  const uint64_t head = head_.load(std::memory_order_relaxed);
  // Full: the main thread drains every few ms, so this is rare; wait rather
  // than lose an event (the result would no longer be exact).
  while (head - tail_.load(std::memory_order_acquire) >= kCapacity) {
    waits_.fetch_add(1, std::memory_order_relaxed);
    std::this_thread::yield();
  }
  buf_[head & (kCapacity - 1)] = {t, count};
  head_.store(head + 1, std::memory_order_release);
}

int InflightResult::bucket(uint64_t n) noexcept {
  if (n == 0) return 0;
  return std::min(kBuckets - 1, 64 - std::countl_zero(n));  // 1 -> 1, 2-3 -> 2, 4-7 -> 3 ...
}

void InflightMerger::advance(uint64_t t) {
  t = std::min(t, end_);
  while (next_b_ < bounds_.size() && bounds_[next_b_] <= t) {
    step(bounds_[next_b_]);
    done_busy_.push_back(cur_busy_);
    cur_busy_ = 0;
    ++next_b_;
  }
  step(t);
}

void InflightMerger::step(uint64_t t) {
  if (t <= last_) return;
  const uint64_t dt = t - last_;
  r_.by_depth_ns[InflightResult::bucket(total_)] += dt;
  r_.inflight_ns += total_ * dt;
  if (total_) {
    r_.busy_ns += dt;
    cur_busy_ += dt;
  }
  last_ = t;
}

void InflightMerger::merge_until(uint64_t safe) {
  // k-way merge of the per-thread queues, each already in time order.
  using Head = std::pair<uint64_t, size_t>;  // (stamp, thread)
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  for (size_t i = 0; i < pending_.size(); ++i)
    if (!pending_[i].empty()) heads.emplace(pending_[i].front().t, i);
  while (!heads.empty() && heads.top().first <= safe) {
    const size_t i = heads.top().second;
    heads.pop();
    const InflightEvent e = pending_[i].front();
    pending_[i].pop_front();
    advance(e.t);
    total_ = total_ - count_[i] + e.count;
    count_[i] = e.count;
    if (!pending_[i].empty()) heads.emplace(pending_[i].front().t, i);
  }
}

void InflightMerger::poll(const std::vector<InflightLog*>& logs, const std::function<uint64_t()>& window_end) {
  uint64_t safe = UINT64_MAX;
  for (size_t i = 0; i < logs.size(); ++i) {
    // Watermark first, then drain: everything stamped before the watermark
    // was pushed before it was published.
    const bool done = logs[i]->finished();
    const uint64_t w = logs[i]->watermark_now();
    logs[i]->drain([&](const InflightEvent& e) { pending_[i].push_back(e); });
    if (!done) safe = std::min(safe, pending_[i].empty() ? w : std::max(w, pending_[i].back().t));
  }
  if (window_end) end_ = std::min(end_, window_end());
  merge_until(safe);
  // Every event up to `safe` is merged and none to come is earlier: the
  // counts hold until then. A worker whose count does not change (the fused
  // path keeps every slot in flight) logs no event for seconds, and the
  // time series' intervals must not wait for one.
  if (safe != UINT64_MAX) advance(safe);
}

InflightResult InflightMerger::finish(const std::vector<InflightLog*>& logs, uint64_t end) {
  end_ = end;
  for (size_t i = 0; i < logs.size(); ++i) {
    logs[i]->drain([&](const InflightEvent& e) { pending_[i].push_back(e); });
    r_.log_waits += logs[i]->waits();
  }
  merge_until(UINT64_MAX);
  advance(end);
  r_.window_ns = end > start_ ? end - start_ : 0;
  return r_;
}

}  // namespace ioacct
