// By process: a completion finds its request's PROC record by stamp, on a
// kernel that stamps after block_io_start (the record holds the struct's
// previous stamp) and on one that stamps before (its own).
#include <gtest/gtest.h>

#include "trace/bpf/busy_proc.hpp"

namespace ioacct::busy {
namespace {

// 6.18: one struct reused by requests stamped 100, 200, 300 from tasks 1,
// 2, 3. Each record holds the stamp before it; the reader feeds the next
// request's record before this one's DONE (its stamp is this request's).
TEST(BusyProc, APreviousStampRecordPairsWithTheRequestAfterIt) {
  Procs p;
  add_proc(p, 0, 1, false);    // the struct's first request, stamped 100
  add_proc(p, 100, 2, false);  // fed early: the next request, stamped 200
  EXPECT_EQ(match_proc(p, 100, true), 1u);
  add_proc(p, 200, 3, false);
  EXPECT_EQ(match_proc(p, 200, true), 2u);
  EXPECT_EQ(match_proc(p, 300, true), 3u);
  EXPECT_EQ(p.n, 0);
  EXPECT_EQ(match_proc(p, 400, true), std::nullopt);
}

TEST(BusyProc, AnOwnStampRecordPairsAtItsStamp) {
  Procs p;
  add_proc(p, 100, 1, true);
  EXPECT_EQ(match_proc(p, 100, true), 1u);
  add_proc(p, 200, 2, true);
  add_proc(p, 300, 3, true);
  EXPECT_EQ(match_proc(p, 200, true), 2u);
  EXPECT_EQ(p.n, 1);
  EXPECT_EQ(match_proc(p, 300, true), 3u);
}

// A request with no DONE record (dropped, or ended unaccounted) leaves its
// record: the next completion takes the latest one before it and clears
// the older.
TEST(BusyProc, ARecordWhoseCompletionWasNotLoggedIsClearedByTheNext) {
  Procs p;
  add_proc(p, 0, 1, false);    // stamped 100, its DONE lost
  add_proc(p, 100, 2, false);  // stamped 200
  EXPECT_EQ(match_proc(p, 200, true), 2u);
  EXPECT_EQ(p.n, 0);
}

// The sweep looks a request up without taking its record, which its DONE
// takes later.
TEST(BusyProc, ALookUpWithoutTakeLeavesTheRecord) {
  Procs p;
  add_proc(p, 0, 7, false);
  EXPECT_EQ(match_proc(p, 100, false), 7u);
  EXPECT_EQ(p.n, 1);
  EXPECT_EQ(match_proc(p, 100, true), 7u);
}

// An unaccounted request keeps the struct's stamp, so the next record ties
// with it: the later one added is the next request's.
TEST(BusyProc, TiedStampsGoToTheLaterRecordAndBothLeave) {
  Procs p;
  add_proc(p, 100, 1, false);  // unaccounted: no stamp of its own
  add_proc(p, 100, 2, false);  // stamped 300
  EXPECT_EQ(match_proc(p, 300, true), 2u);
  EXPECT_EQ(p.n, 0);
}

// No record is before the request: none, and the set is left as it was.
TEST(BusyProc, NoRecordBeforeTheStampIsNone) {
  Procs p;
  add_proc(p, 500, 1, false);
  EXPECT_EQ(match_proc(p, 500, true), std::nullopt);
  EXPECT_EQ(match_proc(p, 400, true), std::nullopt);
  EXPECT_EQ(p.n, 1);
}

TEST(BusyProc, AFullSetDropsItsEarliestStamp) {
  Procs p;
  for (uint32_t i = 0; i < Procs::kMax; ++i) add_proc(p, 100 * (i + 1), i + 1, true);
  add_proc(p, 50, 99, true);
  EXPECT_EQ(p.n, Procs::kMax);
  EXPECT_EQ(match_proc(p, 199, false), 99u);  // stamp 100 (task 1) went
  EXPECT_EQ(match_proc(p, 200, false), 2u);
}

}  // namespace
}  // namespace ioacct::busy
