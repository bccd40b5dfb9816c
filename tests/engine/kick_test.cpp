// The runner's kick (runner/kick.hpp): a worker's wait for completions has
// no timeout, so the main thread's signal is what wakes a worker stuck in
// one. Checked on a real ring waiting for a completion that never comes (a
// poll on an empty pipe), entered through ring_enter() as both hot paths do.
#include <gtest/gtest.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

#include "acct/clock.hpp"
#include "engine/uring_enter.hpp"
#include "runner/control.hpp"
#include "runner/kick.hpp"

namespace ioacct {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() { EXPECT_EQ(pipe(fd), 0); }
  ~Pipe() {
    close(fd[0]);
    close(fd[1]);
  }
};

// Polls `kicker` every millisecond until `finished` or 5 s; true if finished.
bool kick_until(StallKicker& kicker, const std::atomic<bool>& finished, Nanos stall) {
  const Nanos give_up = now_ns() + 5'000'000'000ull;
  while (!finished.load() && now_ns() < give_up) {
    kicker.poll(now_ns(), stall);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return finished.load();
}

TEST(Kick, EndsAWaitForCompletionsThatHasNoTimeout) {
  Pipe p;
  io_uring ring;
  ASSERT_EQ(io_uring_queue_init(4, &ring, 0), 0);
  std::atomic<bool> finished{false};
  long ret = 0;
  std::thread waiter([&] {
    accept_kicks();
    io_uring_prep_poll_add(io_uring_get_sqe(&ring), p.fd[0], POLLIN);
    EngineCounters k;
    const EnterMode m;
    const unsigned n = publish_sq(ring, ring.sq.sqe_tail, m, k);
    ret = ring_enter(ring, m, k, n, 1, IORING_ENTER_GETEVENTS, 0);  // 0: no timeout
    if (ret >= 0 && !io_uring_cq_ready(&ring)) ret = ring_enter(ring, m, k, 0, 1, IORING_ENTER_GETEVENTS, 0);
    finished = true;
  });
  Published pub;  // its count never moves: the waiter is stuck
  StallKicker kicker(&pub, {waiter.native_handle()}, now_ns());
  const bool woken = kick_until(kicker, finished, 20'000'000);
  if (!woken) {
    ASSERT_EQ(write(p.fd[1], "x", 1), 1);  // let it go, then fail
  }
  waiter.join();
  EXPECT_TRUE(woken) << "no kick ended the wait in 5 s";
  EXPECT_EQ(ret, -EINTR);
  EXPECT_GE(kicker.kicks(), 1u);
  EXPECT_EQ(io_uring_cq_ready(&ring), 0u);  // nothing completed: the kick alone ended it
  io_uring_queue_exit(&ring);
}

TEST(Kick, EveryOtherCallRestartsAsIfNothingHappened) {
  Pipe p;
  std::atomic<bool> finished{false};
  ssize_t got = 0;
  int err = 0;
  std::thread reader([&] {
    accept_kicks();
    char c;
    got = read(p.fd[0], &c, 1);
    err = errno;
    finished = true;
  });
  Published pub;
  StallKicker kicker(&pub, {reader.native_handle()}, now_ns());
  for (int i = 0; i < 20; ++i) {  // 20 kicks, 2 ms apart, into a blocked read
    kicker.poll(now_ns() + 1'000'000'000ull * (i + 1), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_FALSE(finished.load()) << "read ended: " << got << " errno " << err;
  EXPECT_EQ(kicker.kicks(), 20u);
  ASSERT_EQ(write(p.fd[1], "x", 1), 1);
  reader.join();
  EXPECT_EQ(got, 1);
}

TEST(Kick, NeverAWorkerWhoseCountMovesNorOneThatIsDone) {
  Pipe p;
  std::atomic<bool> finished{false};
  std::thread reader([&] {
    accept_kicks();
    char c;
    (void)!read(p.fd[0], &c, 1);
    finished = true;
  });
  Published pub[2];
  pub[1].done = true;
  StallKicker kicker(pub, {reader.native_handle(), reader.native_handle()}, 0);
  for (Nanos t = 0; t < 100; ++t) {
    pub[0].completed.store(t + 1, std::memory_order_relaxed);  // one more every poll
    kicker.poll(t * 1'000'000'000ull, 1);
  }
  EXPECT_EQ(kicker.kicks(), 0u);
  ASSERT_EQ(write(p.fd[1], "x", 1), 1);
  reader.join();
}

}  // namespace
}  // namespace ioacct
