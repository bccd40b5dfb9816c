// RingWalker: scrapes get the walk they asked for, or, when it takes longer
// than they wait, the last complete one; never a scrape held up by a walk.
// A fake scan that the test lets finish decides when a walk ends.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "acct/clock.hpp"
#include "monitor/ring_walker.hpp"

namespace ioacct {
namespace {

using namespace std::chrono_literals;

// A scan that blocks until the test opens the gate, then returns a scan
// whose `unreadable` says which walk it was (1, 2, ...).
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  std::atomic<size_t> scans{0}, entered{0};
  RingScan scan() {
    ++entered;
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return open; });
    RingScan s;
    s.unreadable = ++scans;
    return s;
  }
  void set(bool o) {
    const std::lock_guard lock(mu);
    open = o;
    cv.notify_all();
  }
};

TEST(RingWalker, AScrapeWaitsOnlyUpToTheCapThenServesTheLastCompleteWalk) {
  Gate gate;
  {
    RingWalker w(20ms, 0ms, [&] { return gate.scan(); });
    EXPECT_EQ(w.latest(now_ns()), nullptr) << "the first walk is held: nothing complete yet";
    gate.set(true);
    auto first = w.latest(now_ns());  // asks for a walk begun after now
    while (!first || first->seq < 2) first = w.latest(now_ns());
    EXPECT_GE(first->scan.unreadable, 2u);
    gate.set(false);
    const uint64_t asked = now_ns();
    const auto stale = w.latest(asked);  // the walk it asks for is held
    ASSERT_NE(stale, nullptr);
    EXPECT_LT(stale->began_ns, asked) << "an earlier walk, served with its own (older) stamps";
    EXPECT_LE(stale->began_ns, stale->ended_ns);
    gate.set(true);  // lets the held walk end, so that the walker can be joined
  }
}

TEST(RingWalker, ScrapesCloseTogetherShareAWalk) {
  Gate gate;
  gate.set(true);
  RingWalker w(5s, 0ms, [&] { return gate.scan(); });
  const uint64_t t = now_ns();
  const auto a = w.latest(t);
  const auto b = w.latest(t);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b) << "a walk begun after t serves every scrape that began at t";
  EXPECT_GE(a->began_ns, t);
}

// Fifty scrapers a second each waiting up to the cap for a walk of their own
// held both serving threads. A walk begun `fresh` or less ago is served
// without a walk of its own, and a scrape that comes while another waits is
// served the last complete walk at once.
TEST(RingWalker, ARecentWalkIsServedAsItIs) {
  Gate gate;
  gate.set(true);
  RingWalker w(60s, 10s, [&] { return gate.scan(); });
  std::shared_ptr<const RingWalk> first;
  while (!first) first = w.latest(now_ns());
  gate.set(false);  // a walk would now be held: a scrape that waited for one would hang
  const auto t0 = std::chrono::steady_clock::now();
  const auto served = w.latest(now_ns());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 30s) << "it did not wait (the cap is 60 s)";
  EXPECT_EQ(served->seq, first->seq);
  gate.set(true);
}

TEST(RingWalker, WhileOneScrapeWaitsAnotherIsServedTheLastWalk) {
  Gate gate;
  gate.set(true);
  RingWalker w(60s, 0ms, [&] { return gate.scan(); });
  std::shared_ptr<const RingWalk> first;
  while (!first) first = w.latest(now_ns());
  const size_t entered = gate.entered;
  gate.set(false);  // the next walk is held
  std::shared_ptr<const RingWalk> waited;
  std::thread asker([&] { waited = w.latest(now_ns()); });  // waits for it
  while (gate.entered == entered) std::this_thread::sleep_for(1ms);
  const auto t0 = std::chrono::steady_clock::now();
  const auto served = w.latest(now_ns());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 30s) << "it did not wait beside the other (the cap is 60 s)";
  EXPECT_EQ(served->seq, first->seq);
  gate.set(true);
  asker.join();
  EXPECT_GT(waited->seq, first->seq) << "the scrape that waited got the walk it asked for";
}

}  // namespace
}  // namespace ioacct
