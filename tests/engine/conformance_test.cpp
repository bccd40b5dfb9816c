// One conformance suite that every engine passes, against the real kernel
// and real files. Engines that move no data (nop) are held to their own
// contract: every request completes whole and no byte is touched.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "engine/fused_ring.hpp"
#include "engine/test_files.hpp"

namespace ioacct {
namespace {

using namespace enginetest;

// Submits every request (no more than `depth` at a time) and collects every
// completion; fails the test if one is lost or a tag comes back twice.
std::map<uint32_t, int32_t> run_all(Engine& e, const std::vector<IoRequest>& reqs, unsigned depth) {
  std::map<uint32_t, int32_t> done;
  std::vector<IoCompletion> out(depth);
  size_t next = 0, inflight = 0;
  int spins = 0;
  while (done.size() < reqs.size()) {
    while (next < reqs.size() && inflight < depth) {
      unsigned q = e.queue({&reqs[next], 1});
      if (q == 0) break;
      ++next;
      ++inflight;
    }
    int got = e.enter(static_cast<unsigned>(std::min<size_t>(inflight, 4)), {out.data(), out.size()}, 2'000'000'000ull);
    EXPECT_GE(got, 0) << "enter: " << strerror(-got);
    if (got < 0) break;
    for (int i = 0; i < got; ++i) {
      EXPECT_TRUE(done.emplace(out[i].tag, out[i].res).second) << "tag " << out[i].tag << " completed twice";
      --inflight;
    }
    if (got == 0 && ++spins > 1000) {
      ADD_FAILURE() << "no progress: " << done.size() << " of " << reqs.size() << " completed";
      break;
    }
  }
  return done;
}

// One file and one block-sized buffer per tag, as the runner sets them up
// (registered where the engine registers buffers).
EngineOptions options_with_buffers(int fd, uint8_t* buf, unsigned depth) {
  EngineOptions o;
  o.depth = depth;
  o.fds = {fd};
  for (unsigned i = 0; i < depth; ++i) o.buffers.push_back({buf + i * kBlock, kBlock});
  return o;
}

// The fused path's contract (engine/fused_ring.hpp), as the runner uses it:
// `depth` reads queued through queue() first (the two paths mix), then every
// completion refills its own tag in place with the next block, `total` in
// all. Checks that each read comes back once, whole, with its block's data
// (engines that move data), and that no tag completes while not in flight.
void run_fused(Engine& e, FusedRing& ring, uint8_t* buf, unsigned depth, uint64_t total, uint64_t blocks,
               bool moves_data, bool early = false) {
  uint64_t waits = 0, kicks = 0;
  std::vector<uint64_t> block_of(depth);
  std::vector<bool> busy(depth, false);
  uint64_t issued = 0, completed = 0;
  for (uint32_t t = 0; t < depth; ++t) {
    block_of[t] = (issued * 37) % blocks;
    IoRequest r{block_of[t] * kBlock, buf + t * kBlock, kBlock, 0, t, IoOp::Read};
    ASSERT_EQ(e.queue({&r, 1}), 1u);
    busy[t] = true;
    ++issued;
  }
  int idle = 0;
  while (completed < total) {
    const int ready = ring.submit_and_wait(2'000'000'000ull);
    ++waits;
    ASSERT_GE(ready, 0) << strerror(-ready);
    ASSERT_TRUE(ring.all_submitted()) << "the kernel took every request it was given";
    if (ready == 0) {
      ASSERT_LT(++idle, 3) << "no completion within 2 s, " << completed << " of " << total;
      continue;
    }
    bool ok = true;
    const auto on = [&](uint32_t t, int32_t res, FusedRing::Sq& sq) {
      if (!ok) return;
      ok = t < depth && busy[t] && res == static_cast<int32_t>(kBlock);
      EXPECT_TRUE(ok) << "tag " << t << " res " << res << (t < depth && !busy[t] ? " (not in flight)" : "");
      if (moves_data)
        for (size_t j = 0; ok && j < kBlock; j += 509) {
          ok = buf[t * kBlock + j] == pattern(block_of[t], j);
          EXPECT_TRUE(ok) << "tag " << t << " byte " << j;
        }
      busy[t] = false;
      ++completed;
      if (issued < total) {
        block_of[t] = (issued * 37) % blocks;
        if (moves_data) buf[t * kBlock] = kPoison;  // a read that did not happen shows
        if (moves_data) sq.refill<false>(true, 0, block_of[t] * kBlock, buf + t * kBlock, kBlock, t);
        else sq.refill<true>(true, 0, block_of[t] * kBlock, buf + t * kBlock, kBlock, t);
        busy[t] = true;
        ++issued;
      }
    };
    ASSERT_EQ(ring.nop(), !moves_data) << "only the nop engine moves no data";
    const unsigned n = moves_data ? ring.reap<false>(on, early) : ring.reap<true>(on, early);
    if (early && n > 1) ++kicks;
    ASSERT_TRUE(ok);
  }
  EXPECT_EQ(e.counters().submitted, total);
  EXPECT_EQ(e.counters().reaped, total);
  // An early submit with nothing to submit (the last requests) is skipped.
  EXPECT_LE(e.counters().syscalls, waits + kicks) << "one enter per batch, and one per early submit";
  if (early) {
    EXPECT_GT(e.counters().syscalls, waits) << "the passes of two or more submitted early";
  }
  if (!early) {
    EXPECT_LT(e.counters().syscalls, total / 2) << "one enter per batch, not per I/O";
  }
}

// An engine, and for the psync family the syscall its member moves data with.
template <EngineKind K, SyncCall C = SyncCall::Pread>
struct Kind {
  static constexpr EngineKind value = K;
  static constexpr SyncCall call = C;
};

template <typename T>
class EngineConformance : public ::testing::Test {
 protected:
  static constexpr EngineKind kKind = T::value;
  EngineTraits traits() const { return engine_traits(kKind); }
  std::unique_ptr<Engine> make(std::vector<int> fds, unsigned depth = 8) {
    EngineOptions o;
    o.depth = depth;
    o.fds = std::move(fds);
    return make_with(o);
  }
  std::unique_ptr<Engine> make_with(EngineOptions o) {
    o.sync.call = T::call;
    return make_engine(kKind, o);
  }
};

using Kinds = ::testing::Types<Kind<EngineKind::Uring>, Kind<EngineKind::Psync>, Kind<EngineKind::Psync, SyncCall::Read>,
                               Kind<EngineKind::Psync, SyncCall::Preadv>, Kind<EngineKind::Psync, SyncCall::Preadv2>,
                               Kind<EngineKind::Nop>, Kind<EngineKind::Libaio>>;
class KindNames {
 public:
  template <typename T>
  static std::string GetName(int) { return engine_name(T::value, T::call); }
};
TYPED_TEST_SUITE(EngineConformance, Kinds, KindNames);

TYPED_TEST(EngineConformance, ReadsKnownDataAtKnownOffsets) {
  for (bool direct : {false, true}) {
    SCOPED_TRACE(direct ? "O_DIRECT" : "buffered");
    TempFile f(64);
    const int fd = f.open(O_RDONLY | (direct ? O_DIRECT : 0));
    ASSERT_GE(fd, 0) << strerror(errno);
    auto e = this->make({fd});
    const uint64_t blocks[] = {0, 63, 7, 31, 1, 62, 32, 5};
    AlignedBuf buf(kBlock * std::size(blocks));
    std::vector<IoRequest> reqs;
    for (uint32_t i = 0; i < std::size(blocks); ++i)
      reqs.push_back({blocks[i] * kBlock, buf.p + i * kBlock, kBlock, 0, i, IoOp::Read});
    auto done = run_all(*e, reqs, 8);
    ASSERT_EQ(done.size(), std::size(blocks));
    for (uint32_t i = 0; i < std::size(blocks); ++i) {
      EXPECT_EQ(done[i], static_cast<int32_t>(kBlock)) << "request " << i;
      for (size_t j = 0; j < kBlock; ++j) {
        const uint8_t want = this->traits().moves_data ? pattern(blocks[i], j) : 0xEE;
        if (buf.p[i * kBlock + j] != want) {
          ADD_FAILURE() << "block " << blocks[i] << " byte " << j << ": got " << int(buf.p[i * kBlock + j])
                        << ", want " << int(want);
          break;
        }
      }
    }
    EXPECT_EQ(e->counters().submitted, std::size(blocks));
    EXPECT_EQ(e->counters().reaped, std::size(blocks));
    EXPECT_GT(e->counters().syscalls, 0u);
    close(fd);
  }
}

TYPED_TEST(EngineConformance, WriteThenRead) {
  TempFile f(16);
  const int fd = f.open(O_RDWR | O_DIRECT);
  ASSERT_GE(fd, 0) << strerror(errno);
  auto e = this->make({fd});
  AlignedBuf w(kBlock * 4), r(kBlock * 4);
  for (size_t i = 0; i < w.size; ++i) w.p[i] = static_cast<uint8_t>(0xA5 ^ (i * 13));
  std::vector<IoRequest> writes, reads;
  for (uint32_t i = 0; i < 4; ++i) {
    writes.push_back({(2 + i * 3) * uint64_t{kBlock}, w.p + i * kBlock, kBlock, 0, i, IoOp::Write});
    reads.push_back({(2 + i * 3) * uint64_t{kBlock}, r.p + i * kBlock, kBlock, 0, i, IoOp::Read});
  }
  for (auto [tag, res] : run_all(*e, writes, 8)) EXPECT_EQ(res, static_cast<int32_t>(kBlock)) << "write " << tag;
  for (auto [tag, res] : run_all(*e, reads, 8)) EXPECT_EQ(res, static_cast<int32_t>(kBlock)) << "read " << tag;
  // Check independently of the engine, with plain pread.
  AlignedBuf check(kBlock);
  for (uint32_t i = 0; i < 4; ++i) {
    ASSERT_EQ(pread(fd, check.p, kBlock, static_cast<off_t>((2 + i * 3) * kBlock)), static_cast<ssize_t>(kBlock));
    if (this->traits().moves_data) {
      EXPECT_EQ(0, std::memcmp(check.p, w.p + i * kBlock, kBlock)) << "block written " << i;
      EXPECT_EQ(0, std::memcmp(r.p + i * kBlock, w.p + i * kBlock, kBlock)) << "block read back " << i;
    } else {
      for (size_t j = 0; j < kBlock; ++j)
        ASSERT_EQ(check.p[j], pattern(2 + i * 3, j)) << "nop changed the file at block " << 2 + i * 3;
    }
  }
  close(fd);
}

TYPED_TEST(EngineConformance, ShortReadAtEndOfFile) {
  TempFile f(10, 100);  // 10 blocks and 100 bytes
  const int fd = f.open(O_RDONLY);
  ASSERT_GE(fd, 0);
  auto e = this->make({fd});
  AlignedBuf buf(2 * kBlock);
  std::vector<IoRequest> reqs = {{10 * uint64_t{kBlock}, buf.p, kBlock, 0, 0, IoOp::Read},
                                 {11 * uint64_t{kBlock}, buf.p + kBlock, kBlock, 0, 1, IoOp::Read}};
  auto done = run_all(*e, reqs, 4);
  if (this->traits().moves_data) {
    EXPECT_EQ(done[0], 100) << "a read across the end of the file returns what is there";
    EXPECT_EQ(done[1], 0) << "a read past the end returns 0";
    for (size_t j = 0; j < 100; ++j) ASSERT_EQ(buf.p[j], pattern(10, j));
  } else {
    EXPECT_EQ(done[0], static_cast<int32_t>(kBlock));
    EXPECT_EQ(done[1], static_cast<int32_t>(kBlock));
  }
  close(fd);
}

TYPED_TEST(EngineConformance, BadDescriptorIsAPerIoError) {
  // -1, and a number far above any open descriptor. (A just-closed number
  // would not do: the ring's own fd may take it.)
  auto e = this->make({999'999, -1});
  AlignedBuf buf(2 * kBlock);
  // Tags are below the depth (8), as engine.hpp's contract says: libaio
  // keeps an iocb per tag, and tag 9 once wrote past them (ASan).
  std::vector<IoRequest> reqs = {{0, buf.p, kBlock, 0, 7, IoOp::Read}, {0, buf.p + kBlock, kBlock, 1, 5, IoOp::Write}};
  auto done = run_all(*e, reqs, 4);
  ASSERT_EQ(done.size(), 2u);
  if (this->traits().checks_fd) {
    EXPECT_EQ(done[7], -EBADF);
    EXPECT_EQ(done[5], -EBADF);
  } else {
    EXPECT_EQ(done[7], static_cast<int32_t>(kBlock)) << "nop never looks at the file";
    EXPECT_EQ(done[5], static_cast<int32_t>(kBlock));
  }
}

// One bad request in the middle of a batch fails alone: libaio's io_submit
// stops at the iocb it refuses, and the engine goes on with the rest.
TYPED_TEST(EngineConformance, ABadDescriptorInABatchFailsAlone) {
  TempFile f(8);
  const int fd = f.open(O_RDONLY);
  ASSERT_GE(fd, 0) << strerror(errno);
  auto e = this->make({fd, 999'999});
  AlignedBuf buf(4 * kBlock);
  std::vector<IoRequest> reqs;
  for (uint32_t i = 0; i < 4; ++i) reqs.push_back({i * uint64_t{kBlock}, buf.p + i * kBlock, kBlock, i == 1 ? 1u : 0u, i, IoOp::Read});
  ASSERT_EQ(e->queue(reqs), 4u);
  std::map<uint32_t, int32_t> done;
  std::vector<IoCompletion> out(4);
  for (int tries = 0; done.size() < 4 && tries < 100; ++tries) {
    const int got = e->enter(1, {out.data(), out.size()}, 2'000'000'000ull);
    ASSERT_GE(got, 0) << strerror(-got);
    for (int i = 0; i < got; ++i) EXPECT_TRUE(done.emplace(out[i].tag, out[i].res).second);
  }
  ASSERT_EQ(done.size(), 4u);
  for (uint32_t i : {0u, 2u, 3u}) EXPECT_EQ(done[i], static_cast<int32_t>(kBlock)) << "request " << i;
  EXPECT_EQ(done[1], this->traits().checks_fd ? -EBADF : static_cast<int32_t>(kBlock));
  if (this->traits().moves_data) {
    for (uint32_t i : {0u, 2u, 3u}) EXPECT_EQ(buf.p[i * kBlock + 5], pattern(i, 5)) << "request " << i;
  }
  EXPECT_EQ(e->counters().submitted, 4u);
  EXPECT_EQ(e->counters().reaped, 4u);
  close(fd);
}

TYPED_TEST(EngineConformance, NoCompletionLostAtFullDepth) {
  TempFile f(256);
  const int fd = f.open(O_RDONLY);
  ASSERT_GE(fd, 0);
  const unsigned depth = 16;
  auto e = this->make({fd}, depth);
  AlignedBuf buf(kBlock * depth);
  // 20,000 reads through a queue of 16, each tag reused as soon as it is free.
  std::vector<IoCompletion> out(depth);
  std::vector<bool> busy(depth, false);
  uint64_t issued = 0, completed = 0, next_block = 0;
  const uint64_t total = 20'000;
  while (completed < total) {
    for (uint32_t t = 0; t < depth && issued < total; ++t) {
      if (busy[t]) continue;
      IoRequest r{(next_block++ % 256) * kBlock, buf.p + t * kBlock, kBlock, 0, t, IoOp::Read};
      ASSERT_EQ(e->queue({&r, 1}), 1u) << "queue refused with " << issued - completed << " in flight of " << depth;
      busy[t] = true;
      ++issued;
    }
    const int got = e->enter(1, {out.data(), out.size()}, 2'000'000'000ull);
    ASSERT_GT(got, 0);
    for (int i = 0; i < got; ++i) {
      ASSERT_LT(out[i].tag, depth);
      ASSERT_TRUE(busy[out[i].tag]) << "tag " << out[i].tag << " completed but was not in flight";
      ASSERT_EQ(out[i].res, static_cast<int32_t>(kBlock));
      busy[out[i].tag] = false;
      ++completed;
    }
  }
  EXPECT_EQ(e->counters().submitted, total);
  EXPECT_EQ(e->counters().reaped, total);
  // Batching: io_uring and libaio (an io_submit and an io_getevents per
  // batch) need far fewer syscalls than I/Os; psync needs one each, and
  // sync two (lseek, then read or write).
  if (this->kKind == EngineKind::Psync)
    EXPECT_EQ(e->counters().syscalls, (TypeParam::call == SyncCall::Read ? 2 : 1) * total);
  else
    EXPECT_LT(e->counters().syscalls, total / 2);
}

// The fused path: io_uring engines (nop too) offer it in their default
// mode, psync and libaio have no io_uring to offer. With `early` (the runner's for O_DIRECT)
// a pass of two or more submits its first request at once and loses none of
// the rest; the enters are one per batch and one per such pass.
TYPED_TEST(EngineConformance, FusedPathRefillsInPlaceAndLosesNothing) {
  TempFile f(256);
  for (bool direct : {false, true}) {
    for (bool early : {false, true}) {
      SCOPED_TRACE(std::string(direct ? "O_DIRECT" : "buffered") + (early ? ", early submit" : ""));
      const int fd = f.open(O_RDONLY | (direct ? O_DIRECT : 0));
      ASSERT_GE(fd, 0);
      const unsigned depth = 16;
      AlignedBuf buf(kBlock * depth);
      auto e = this->make_with(options_with_buffers(fd, buf.p, depth));
      FusedRing* ring = e->fused();
      if (!this->traits().fused) {
        EXPECT_EQ(ring, nullptr);
      } else {
        ASSERT_NE(ring, nullptr);
        run_fused(*e, *ring, buf.p, depth, 20'000, 256, this->traits().moves_data, early);
      }
      close(fd);
    }
  }
}

TYPED_TEST(EngineConformance, SyncsCompleteWithZero) {
  if (!this->traits().moves_data) GTEST_SKIP() << "nop neither syncs nor trims (the runner never asks it to)";
  TempFile f(8);
  const int fd = f.open(O_RDWR);
  ASSERT_GE(fd, 0) << strerror(errno);
  auto e = this->make({fd});
  AlignedBuf w(kBlock);
  std::vector<IoRequest> reqs = {{0, w.p, kBlock, 0, 0, IoOp::Write},
                                 {0, nullptr, 0, 0, 1, IoOp::Fsync},
                                 {0, nullptr, 0, 0, 2, IoOp::Fdatasync}};
  auto done = run_all(*e, reqs, 1);  // one at a time: each sync follows the write
  EXPECT_EQ(done[0], static_cast<int32_t>(kBlock));
  EXPECT_EQ(done[1], 0) << "fsync";
  EXPECT_EQ(done[2], 0) << "fdatasync";
  // A sync of a bad descriptor is a per-I/O error, like a read's.
  auto bad = this->make({-1});
  auto err = run_all(*bad, {{0, nullptr, 0, 0, 0, IoOp::Fsync}}, 1);
  EXPECT_EQ(err[0], -EBADF);
  close(fd);
}

TYPED_TEST(EngineConformance, TrimPunchesAHoleInAFile) {
  if (!this->traits().moves_data) GTEST_SKIP() << "nop neither syncs nor trims (the runner never asks it to)";
  TempFile f(16);
  const int fd = f.open(O_RDWR);
  ASSERT_GE(fd, 0) << strerror(errno);
  auto e = this->make({fd});
  auto done = run_all(*e, {{4 * kBlock, nullptr, 2 * kBlock, 0, 0, IoOp::Trim}}, 1);
  ASSERT_EQ(done[0], 0) << strerror(-done[0]);
  std::vector<uint8_t> buf(16 * kBlock);
  ASSERT_EQ(pread(fd, buf.data(), buf.size(), 0), static_cast<ssize_t>(buf.size())) << "the file keeps its size";
  for (uint64_t b = 0; b < 16; ++b)
    for (size_t i = 0; i < kBlock; i += 97) {
      const uint8_t want = b == 4 || b == 5 ? 0 : pattern(b, i);
      ASSERT_EQ(buf[b * kBlock + i], want) << "block " << b << " byte " << i;
    }
  close(fd);
}

// A block device's discard: io_uring's block command (6.12+), and the
// BLKDISCARD the engine falls back to where the kernel lacks it (forced
// here), on a loop device of the test's own: the discarded blocks read as zeros.
TEST(EngineDiscard, BlockDeviceDiscardsWithTheCommandAndWithoutIt) {
  TempFile backing(256);
  FILE* p = popen(("losetup --find --show " + backing.path() + " 2>/dev/null").c_str(), "r");
  char dev[64] = {};
  const bool attached = p && fgets(dev, sizeof(dev), p) != nullptr;
  if (p) pclose(p);
  if (!attached) GTEST_SKIP() << "losetup failed (not root, or no loop devices): no block device to discard";
  std::string path(dev);
  path.erase(path.find_last_not_of('\n') + 1);
  for (EngineKind kind : {EngineKind::Uring, EngineKind::Psync, EngineKind::Libaio}) {
    for (bool force_ioctl : {false, true}) {
      if (kind != EngineKind::Uring && force_ioctl) continue;  // BLKDISCARD is all they have
      SCOPED_TRACE(std::string(engine_name(kind)) + (force_ioctl ? " (BLKDISCARD fallback)" : ""));
      const int fd = ::open(path.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
      ASSERT_GE(fd, 0) << strerror(errno);
      const uint64_t at = (force_ioctl ? 64 : kind == EngineKind::Psync ? 128 : kind == EngineKind::Libaio ? 192 : 0) *
                          uint64_t{kBlock};
      EngineOptions o;
      o.depth = 4;
      o.fds = {fd};
      o.is_block = {1};
      o.force_blkdiscard = force_ioctl;
      auto e = make_engine(kind, o);
      std::vector<IoRequest> reqs;
      for (uint32_t i = 0; i < 4; ++i) reqs.push_back({at + i * 8 * kBlock, nullptr, 8 * kBlock, 0, i, IoOp::Trim});
      auto done = run_all(*e, reqs, 4);
      for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(done[i], 0) << "discard " << i << ": " << strerror(-done[i]);
      AlignedBuf r(kBlock);
      ASSERT_EQ(pread(fd, r.p, kBlock, static_cast<off_t>(at + 8 * kBlock)), static_cast<ssize_t>(kBlock));
      for (size_t i = 0; i < kBlock; ++i) ASSERT_EQ(r.p[i], 0) << "byte " << i << " of a discarded block";
      ASSERT_EQ(pread(fd, r.p, kBlock, static_cast<off_t>(at + 32 * kBlock)), static_cast<ssize_t>(kBlock));
      EXPECT_EQ(r.p[1], pattern(at / kBlock + 32, 1)) << "the block after the discards is intact";
      close(fd);
    }
  }
  std::system(("losetup -d " + path).c_str());
}

// libaio's own: PREADV/PWRITEV under --vectored, and a poll with nothing
// completed makes no syscall (the engine reads the AIO ring's head and tail,
// as libaio's io_getevents would, so that what it counts is what it made).
TEST(EngineLibaio, VectoredMovesDataAndAnEmptyPollMakesNoSyscall) {
  TempFile f(16);
  const int fd = f.open(O_RDWR | O_DIRECT);
  ASSERT_GE(fd, 0) << strerror(errno);
  EngineOptions o;
  o.depth = 4;
  o.fds = {fd};
  o.uring.vectored = true;
  auto e = make_engine(EngineKind::Libaio, o);
  EXPECT_NE(e->describe().find("vectored"), std::string::npos) << e->describe();
  AlignedBuf w(kBlock), r(kBlock);
  std::memset(w.p, 0x5A, kBlock);
  EXPECT_EQ(run_all(*e, {{3 * kBlock, w.p, kBlock, 0, 0, IoOp::Write}}, 4)[0], static_cast<int32_t>(kBlock));
  EXPECT_EQ(run_all(*e, {{3 * kBlock, r.p, kBlock, 0, 1, IoOp::Read}}, 4)[1], static_cast<int32_t>(kBlock));
  EXPECT_EQ(0, std::memcmp(w.p, r.p, kBlock));
  const uint64_t before = e->counters().syscalls;
  std::vector<IoCompletion> out(4);
  EXPECT_EQ(e->enter(0, {out.data(), out.size()}, 0), 0);
  EXPECT_EQ(e->counters().syscalls, before) << "nothing queued, nothing completed: no syscall";
  close(fd);
}

TEST(EngineSetup, SetupFlagsAreReportedByName) {
  EngineOptions o;
  o.depth = 4;
  auto e = make_engine(EngineKind::Uring, o);
  // On this kernel (6.1+) the default set is obtained whole.
  EXPECT_NE(e->describe().find("io_uring"), std::string::npos);
  EXPECT_EQ(setup_flag_names(0), "none");
  EXPECT_EQ(setup_flag_names(e->setup_flags() & (1u << 8)), "COOP_TASKRUN");
}

}  // namespace
}  // namespace ioacct

// The same contract through every io_uring mode that changes how requests
// are built or completions found.
namespace ioacct {
namespace {

struct ModeCase {
  const char* name;
  UringOptions uring;
  bool fused = true;  // Engine::fused() offers the fused path in this mode
};

class UringModes : public ::testing::TestWithParam<ModeCase> {};

TEST_P(UringModes, ReadsKnownDataAndLosesNothing) {
  TempFile f(256);
  for (bool direct : {false, true}) {
    SCOPED_TRACE(direct ? "O_DIRECT" : "buffered");
    const int fd = f.open(O_RDONLY | (direct ? O_DIRECT : 0));
    ASSERT_GE(fd, 0);
    const unsigned depth = 16;
    AlignedBuf buf(kBlock * depth);
    EngineOptions o = options_with_buffers(fd, buf.p, depth);
    o.uring = GetParam().uring;
    auto e = make_engine(EngineKind::Uring, o);
    std::vector<IoCompletion> out(depth);
    std::vector<uint64_t> block_of(depth);
    std::vector<bool> busy(depth, false);
    uint64_t issued = 0, completed = 0;
    const uint64_t total = 5000;
    while (completed < total) {
      for (uint32_t t = 0; t < depth && issued < total; ++t) {
        if (busy[t]) continue;
        block_of[t] = (issued * 37) % 256;
        IoRequest r{block_of[t] * kBlock, buf.p + t * kBlock, kBlock, 0, t, IoOp::Read};
        ASSERT_EQ(e->queue({&r, 1}), 1u);
        busy[t] = true;
        ++issued;
      }
      const int got = e->enter(1, {out.data(), out.size()}, 2'000'000'000ull);
      ASSERT_GT(got, 0) << "no completion within 2 s";
      for (int i = 0; i < got; ++i) {
        const uint32_t t = out[i].tag;
        ASSERT_TRUE(busy[t]);
        ASSERT_EQ(out[i].res, static_cast<int32_t>(kBlock));
        for (size_t j = 0; j < kBlock; j += 511)
          ASSERT_EQ(buf.p[t * kBlock + j], pattern(block_of[t], j)) << "tag " << t << " byte " << j;
        busy[t] = false;
        ++completed;
      }
    }
    EXPECT_EQ(e->counters().submitted, total);
    EXPECT_EQ(e->counters().reaped, total);
    // The fused path where a request is one plain SQE and the wait sleeps;
    // held to the same contract on a ring of its own.
    auto e2 = make_engine(EngineKind::Uring, o);
    if (!GetParam().fused) {
      EXPECT_EQ(e2->fused(), nullptr) << "this mode keeps the batch path";
    } else {
      ASSERT_NE(e2->fused(), nullptr);
      run_fused(*e2, *e2->fused(), buf.p, depth, total, 256, true);
    }
    close(fd);
  }
}

UringOptions with(void (*f)(UringOptions&)) {
  UringOptions o;
  f(o);
  return o;
}

INSTANTIATE_TEST_SUITE_P(
    Modes, UringModes,
    ::testing::Values(ModeCase{"defaults", {}},
                      ModeCase{"plain", with([](UringOptions& o) {
                                 o.fixed_files = o.fixed_bufs = o.register_ring = FlagWish::Off;
                               })},
                      ModeCase{"fixed_files", with([](UringOptions& o) {
                                 o.fixed_files = FlagWish::On;
                                 o.fixed_bufs = o.register_ring = FlagWish::Off;
                               })},
                      ModeCase{"fixed_bufs", with([](UringOptions& o) {
                                 o.fixed_bufs = FlagWish::On;
                                 o.fixed_files = o.register_ring = FlagWish::Off;
                               })},
                      ModeCase{"vectored", with([](UringOptions& o) { o.vectored = true; }), false},
                      ModeCase{"register_ring", with([](UringOptions& o) {
                                 o.register_ring = FlagWish::On;
                                 o.fixed_files = o.fixed_bufs = FlagWish::Off;
                               })},
                      ModeCase{"sqpoll", with([](UringOptions& o) { o.sqpoll = true; o.sq_idle_ms = 10; }), false},
                      ModeCase{"spin", with([](UringOptions& o) { o.wait = WaitMode::Spin; }), false},
                      ModeCase{"hybrid", with([](UringOptions& o) { o.wait = WaitMode::Hybrid; o.hybrid_spin_ns = 20'000; }), false},
                      ModeCase{"no_defer_no_coop", with([](UringOptions& o) {
                                 o.defer_taskrun = FlagWish::Off;
                                 o.coop_taskrun = FlagWish::Off;
                               })},
                      ModeCase{"force_async", with([](UringOptions& o) { o.force_async = true; }), false},
                      ModeCase{"no_iowait", with([](UringOptions& o) { o.no_iowait = true; })}),
    [](const ::testing::TestParamInfo<ModeCase>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace ioacct
