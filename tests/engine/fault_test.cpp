// The fault-injecting wrapper (test-only --inject-faults), driven like the
// runner drives an engine: short transfers finished by resubmitting the rest,
// EAGAIN retried whole, EIO counted. Run over real engines (uring, psync) and
// a real patterned file, so that what is checked is both the wrapper's
// bookkeeping and that a caller following the engine contract gets every
// request back exactly once with the right bytes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "engine/engine.hpp"
#include "engine/fault_engine.hpp"
#include "engine/test_files.hpp"

namespace ioacct {
namespace {

using namespace enginetest;

// ---------------------------------------------------------------------------
// parse_fault_spec

TEST(FaultSpecParse, ReadsEveryItem) {
  const FaultSpec s = parse_fault_spec("--inject-faults", "eio=0.01,short=0.05,eagain=0.02,delay=0.01:5ms,seed=7");
  EXPECT_DOUBLE_EQ(s.eio, 0.01);
  EXPECT_DOUBLE_EQ(s.short_io, 0.05);
  EXPECT_DOUBLE_EQ(s.eagain, 0.02);
  EXPECT_DOUBLE_EQ(s.delay, 0.01);
  EXPECT_EQ(s.delay_ns, 5'000'000u);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_TRUE(s.any());
}

TEST(FaultSpecParse, DefaultsAndBounds) {
  FaultSpec s = parse_fault_spec("--inject-faults", "delay=0.5");
  EXPECT_DOUBLE_EQ(s.delay, 0.5);
  EXPECT_EQ(s.delay_ns, 2'000'000u) << "delay without a duration holds completions 2 ms";
  EXPECT_EQ(s.eio, 0);
  EXPECT_EQ(s.short_io, 0);
  EXPECT_EQ(s.eagain, 0);
  EXPECT_EQ(s.seed, 1u);

  s = parse_fault_spec("--inject-faults", "eio=1");
  EXPECT_EQ(s.eio, 1.0);
  s = parse_fault_spec("--inject-faults", "eio=0");
  EXPECT_EQ(s.eio, 0.0);
  EXPECT_FALSE(s.any()) << "all rates 0: nothing is injected";

  s = parse_fault_spec("--inject-faults", "seed=2k,short=0.25,delay=1:250us");
  EXPECT_EQ(s.seed, 2000u) << "the seed is a count, SI";
  EXPECT_DOUBLE_EQ(s.short_io, 0.25);
  EXPECT_EQ(s.delay, 1.0);
  EXPECT_EQ(s.delay_ns, 250'000u);
}

TEST(FaultSpecParse, BadSpecsAreUsageErrorsNamingTheFlag) {
  const char* bad[] = {
      "eio",               // no '='
      "eio=",              // no rate
      "eio=2",             // above 1
      "eio=-0.1",          // below 0
      "eio=1.5",
      "eio=abc",
      "eio=0.1x",          // trailing junk
      "eio=inf",
      " eio=0.1",          // a space is not skipped
      "EIO=0.1",           // names are exact
      "bogus=0.1",
      ",eio=0.1",          // an empty item
      "eio=0.1,,short=0.1",
      "delay=0.1:5",       // a duration needs a unit
      "delay=0.1:",        // ... and a value
      "delay=:5ms",
      "short=0.1:5ms",     // only delay takes a duration
      "seed=x",
      "seed=-1",
  };
  for (const char* text : bad) {
    SCOPED_TRACE(text);
    try {
      const FaultSpec s = parse_fault_spec("--inject-faults", text);
      ADD_FAILURE() << "accepted '" << text << "' as eio " << s.eio << " short " << s.short_io << " eagain "
                    << s.eagain << " delay " << s.delay << " for " << s.delay_ns << " ns, seed " << s.seed;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--inject-faults: ", 0), 0u) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw something other than UsageError: " << e.what();
    }
  }
}

// A rate is "a number from 0 to 1"; NaN is neither, and would silently inject
// nothing (every roll compares false).
TEST(FaultSpecParse, NanIsNotARate) {
  for (const char* text : {"eio=nan", "short=NaN", "delay=nan:1ms"}) {
    SCOPED_TRACE(text);
    EXPECT_THROW(parse_fault_spec("--inject-faults", text), UsageError);
  }
}

// ---------------------------------------------------------------------------
// The conformance workload through FaultEngine.

struct Tally {
  uint64_t finished_ok = 0, eio = 0, short_resubmits = 0, eagain_resubmits = 0;
  uint64_t bad_data = 0, enters = 0;
};

// One request per slot (tag = slot), reused as soon as it is finished.
struct Slot {
  uint64_t req = 0;      // which of the `total` requests
  uint64_t block = 0;    // the file block it reads
  uint64_t offset = 0;   // next byte to read
  uint32_t left = 0;     // bytes still to read
  bool busy = false;
};

// Drives `total` 4 KiB reads of a `blocks`-block patterned file through `e`
// with `depth` slots, finishing short transfers and retrying EAGAIN the way
// the runner does. Fails (never hangs) if completions stop coming.
Tally drive(FaultEngine& e, uint64_t total, unsigned depth, uint64_t blocks, std::vector<uint8_t>& finished) {
  Tally t;
  AlignedBuf buf(size_t{kBlock} * depth);
  std::vector<Slot> slots(depth);
  std::vector<IoCompletion> out(depth);
  std::vector<IoRequest> pending;  // to queue: new requests and resubmissions
  finished.assign(total, 0);
  uint64_t issued = 0, done = 0;
  auto last_progress = std::chrono::steady_clock::now();
  unsigned inflight = 0;           // slots busy (queued, in the engine, or held by the wrapper)
  const uint64_t max_enters = total * 20;
  auto request = [&](uint32_t tag) {
    const Slot& s = slots[tag];
    return IoRequest{s.offset, buf.p + size_t{tag} * kBlock + (kBlock - s.left), s.left, 0, tag, IoOp::Read};
  };
  while (done < total) {
    for (uint32_t tag = 0; tag < depth && issued < total; ++tag) {
      Slot& s = slots[tag];
      if (s.busy) continue;
      s = {issued, (issued * 37) % blocks, 0, kBlock, true};
      s.offset = s.block * kBlock;
      std::memset(buf.p + size_t{tag} * kBlock, kPoison, kBlock);
      pending.push_back(request(tag));
      ++issued;
      ++inflight;
    }
    if (!pending.empty()) {
      const unsigned q = e.queue({pending.data(), pending.size()});
      pending.erase(pending.begin(), pending.begin() + q);
    }
    // Mostly wait for a few; every third call only collects what is there.
    const unsigned wait_nr = t.enters % 3 == 0 ? 0 : std::min(inflight, 4u);
    const int got = e.enter(wait_nr, {out.data(), out.size()}, 1'000'000'000ull);
    if (++t.enters > max_enters) {
      ADD_FAILURE() << "no end after " << t.enters << " enter() calls: " << done << " of " << total << " done";
      break;
    }
    if (got < 0) {
      ADD_FAILURE() << "enter: " << strerror(-got);
      break;
    }
    if (got > 0) {
      last_progress = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(10)) {
      ADD_FAILURE() << "no completion for 10 s: " << done << " of " << total << " done, " << inflight << " in flight";
      break;
    }
    for (int i = 0; i < got; ++i) {
      const IoCompletion c = out[i];
      if (c.tag >= depth || !slots[c.tag].busy) {
        ADD_FAILURE() << "tag " << c.tag << " completed but was not in flight";
        continue;
      }
      Slot& s = slots[c.tag];
      uint8_t* b = buf.p + size_t{c.tag} * kBlock;
      if (c.res == static_cast<int32_t>(s.left)) {
        ++t.finished_ok;
        for (size_t j = 0; j < kBlock; ++j)
          if (b[j] != pattern(s.block, j)) {
            if (t.bad_data++ == 0)
              ADD_FAILURE() << "request " << s.req << " (block " << s.block << ") byte " << j << ": got "
                            << int(b[j]) << ", want " << int(pattern(s.block, j));
            break;
          }
      } else if (c.res > 0 && c.res < static_cast<int32_t>(s.left)) {
        // A short transfer: the bytes past it were not read, as far as the
        // caller knows. Poison them so that a wrong resubmission shows.
        const uint32_t got_bytes = static_cast<uint32_t>(c.res);
        std::memset(b + (kBlock - s.left) + got_bytes, kPoison, s.left - got_bytes);
        s.offset += got_bytes;
        s.left -= got_bytes;
        ++t.short_resubmits;
        pending.push_back(request(c.tag));
        continue;
      } else if (c.res == -EAGAIN) {
        ++t.eagain_resubmits;
        pending.push_back(request(c.tag));
        continue;
      } else if (c.res == -EIO) {
        ++t.eio;
      } else {
        ADD_FAILURE() << "request " << s.req << ": unexpected result " << c.res << " with " << s.left << " left";
      }
      ++finished[s.req];
      ++done;
      --inflight;
      s.busy = false;
    }
  }
  return t;
}

class FaultEngineTest : public ::testing::TestWithParam<std::tuple<EngineKind, bool>> {};

TEST_P(FaultEngineTest, EveryRequestFinishesOnceWithTheRightData) {
  const auto [kind, direct] = GetParam();
  constexpr uint64_t kBlocks = 256, kTotal = 20'000;
  constexpr unsigned kDepth = 16;
  TempFile f(kBlocks);
  const int fd = f.open(O_RDONLY | (direct ? O_DIRECT : 0));
  ASSERT_GE(fd, 0) << strerror(errno);
  EngineOptions o;
  o.depth = kDepth;
  o.fds = {fd};
  FaultSpec spec = parse_fault_spec("--inject-faults", "eio=0.05,short=0.1,eagain=0.05,delay=0.02:2ms,seed=7");
  FaultEngine e(make_engine(kind, o), spec, kDepth);
  EXPECT_NE(e.describe().find("injected faults"), std::string::npos) << e.describe();

  std::vector<uint8_t> finished;
  const Tally t = drive(e, kTotal, kDepth, kBlocks, finished);
  close(fd);

  uint64_t never = 0, twice = 0;
  for (uint8_t n : finished) {
    never += n == 0;
    twice += n > 1;
  }
  EXPECT_EQ(never, 0u) << "requests that never finished";
  EXPECT_EQ(twice, 0u) << "requests that finished more than once";
  EXPECT_EQ(t.finished_ok + t.eio, kTotal);
  EXPECT_EQ(t.bad_data, 0u) << "reads finished with the wrong bytes";

  const FaultCounts& inj = e.injected();
  EXPECT_EQ(t.eio, inj.eio) << "every EIO seen was injected, every injected one seen";
  EXPECT_EQ(t.short_resubmits, inj.short_io);
  EXPECT_EQ(t.eagain_resubmits, inj.eagain);
  EXPECT_GT(inj.delayed, 0u);
  // The rates asked for are roughly what was injected (20,000+ rolls each:
  // far outside these bounds only if a roll is broken).
  EXPECT_GT(inj.eio, kTotal * 0.05 / 2);
  EXPECT_GT(inj.short_io, kTotal * 0.1 / 2);
  EXPECT_GT(inj.eagain, kTotal * 0.05 / 2);
  EXPECT_LT(inj.eio, kTotal * 0.05 * 2);

  // The inner engine saw every submission, resubmissions included, and
  // nothing is left in it.
  const EngineCounters& c = e.counters();
  EXPECT_EQ(c.submitted, kTotal + t.short_resubmits + t.eagain_resubmits);
  EXPECT_EQ(c.reaped, c.submitted);
  std::printf("[ %-8s ] %s %s: %lu ok, %lu EIO, %lu short resubmits, %lu EAGAIN retries, %lu delayed, %lu enter calls\n",
              "faults", engine_name(kind), direct ? "O_DIRECT" : "buffered", (unsigned long)t.finished_ok,
              (unsigned long)t.eio, (unsigned long)t.short_resubmits, (unsigned long)t.eagain_resubmits,
              (unsigned long)inj.delayed, (unsigned long)t.enters);
}

INSTANTIATE_TEST_SUITE_P(Engines, FaultEngineTest,
                         ::testing::Combine(::testing::Values(EngineKind::Uring, EngineKind::Psync, EngineKind::Libaio), ::testing::Bool()),
                         [](const auto& p) {
                           return std::string(engine_name(std::get<0>(p.param))) +
                                  (std::get<1>(p.param) ? "_direct" : "_buffered");
                         });

// With everything held back (delay=1), a caller that waits for completions
// must still get them all: the wrapper sleeps until they are due instead of
// waiting in the real engine for completions it has already collected.
TEST(FaultEngineDelay, AllHeldCompletionsAreReleased) {
  TempFile f(16);
  const int fd = f.open(O_RDONLY);
  ASSERT_GE(fd, 0);
  for (EngineKind kind : {EngineKind::Uring, EngineKind::Psync}) {
    SCOPED_TRACE(engine_name(kind));
    EngineOptions o;
    o.depth = 8;
    o.fds = {fd};
    FaultEngine e(make_engine(kind, o), parse_fault_spec("--inject-faults", "delay=1:1ms"), 8);
    std::vector<uint8_t> finished;
    const Tally t = drive(e, 500, 8, 16, finished);
    EXPECT_EQ(t.finished_ok, 500u);
    EXPECT_EQ(e.injected().delayed, 500u);
    EXPECT_EQ(e.injected().eio + e.injected().short_io + e.injected().eagain, 0u);
  }
  close(fd);
}

// The Engine contract: enter() "waits until at least wait_nr completions are
// ready or timeout_ns passes (0 = no limit)". Completions the wrapper collects
// from the real engine and then holds back (delay) must not end the wait: with
// no time limit, asking for 4 must give 4, not 0.
TEST(FaultEngineDelay, EnterWaitsForWaitNrEvenWhenItHoldsWhatItCollected) {
  TempFile f(16);
  const int fd = f.open(O_RDONLY);
  ASSERT_GE(fd, 0);
  for (EngineKind kind : {EngineKind::Uring, EngineKind::Psync}) {
    SCOPED_TRACE(engine_name(kind));
    EngineOptions o;
    o.depth = 4;
    o.fds = {fd};
    FaultEngine e(make_engine(kind, o), parse_fault_spec("--inject-faults", "delay=1:5ms"), 4);
    AlignedBuf buf(4 * kBlock);
    std::vector<IoRequest> reqs;
    for (uint32_t i = 0; i < 4; ++i) reqs.push_back({i * uint64_t{kBlock}, buf.p + i * kBlock, kBlock, 0, i, IoOp::Read});
    ASSERT_EQ(e.queue({reqs.data(), reqs.size()}), 4u);
    std::vector<IoCompletion> out(4);
    const int got = e.enter(4, {out.data(), out.size()}, 0);
    EXPECT_EQ(got, 4) << "enter(wait_nr 4, no time limit) returned before 4 completions were ready";
    // Whatever it returned, collect the rest so that the engine is drained.
    int total = std::max(got, 0);
    for (int i = 0; i < 100 && total < 4; ++i) {
      const int more = e.enter(1, {out.data(), out.size()}, 100'000'000);
      if (more > 0) total += more;
    }
    EXPECT_EQ(total, 4);
  }
  close(fd);
}

}  // namespace
}  // namespace ioacct
