#pragma once
// --verify: every written block says what it is, so that a read can tell
// whether it got back exactly what was written.
//
// Block layout (all fields little-endian, as x86 stores them):
//   0  magic       "IOACCTv1"
//   8  offset      byte offset the block was written at
//   16 generation  the writing thread's write counter
//   24 seed        the run's seed
//   32 len         block length; 36: thread index
//   40 checksum    XXH64 of the whole block with this field zero
//   48 data        derived from (seed, offset, generation): a reader can
//                  rebuild what the block should hold, and so tell a torn
//                  write (a prefix as written, the rest not) from corruption
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "workload/target.hpp"

namespace ioacct {

inline constexpr uint64_t kVerifyMagic = 0x3176544343414f49ull;  // "IOACCTv1" as stored
inline constexpr uint32_t kVerifyHeader = 48;
inline constexpr uint32_t kVerifySector = 512;

// Fills `buf` (len >= kVerifyHeader, a multiple of 8) as the block written at
// `offset` by write number `generation` of a run seeded `seed`.
void format_block(char* buf, uint32_t len, uint64_t offset, uint64_t generation, uint64_t seed,
                  uint32_t thread) noexcept;

// The 1-byte generation tag kept per block: 0 means "not written in this run".
inline uint8_t generation_tag(uint64_t generation) noexcept { return static_cast<uint8_t>(generation % 255 + 1); }

struct VerifyFinding {
  uint64_t offset = 0;
  std::string kind;      // "no-header", "misplaced", "other-run", "torn", "corrupt", "stale"
  std::string expected;  // what should be there
  std::string found;     // what is there
};

// Checks a block read back from `offset`. `tag` is the generation tag of the
// last completed write to it (0: only self-consistency is checked). Returns
// false and fills `out` on a mismatch.
bool check_block(const char* buf, uint32_t len, uint64_t offset, uint64_t seed, uint8_t tag,
                 VerifyFinding& out);

// What --verify found, merged over threads and the final pass.
struct VerifyResult {
  uint64_t checked_during = 0;  // reads checked on the fly (--verify-during)
  uint64_t checked_after = 0;   // blocks re-read after the run
  uint64_t written = 0;         // blocks the run wrote: what the final pass re-reads when not stopped
  uint64_t mismatches = 0;
  std::vector<VerifyFinding> findings;  // the first kMaxFindings, in the order found
  static constexpr size_t kMaxFindings = 100;
  void add(VerifyFinding f) {
    ++mismatches;
    if (findings.size() < kMaxFindings) findings.push_back(std::move(f));
  }
};

// Per target, one byte each per block (so 2 bytes per block of memory, only
// with --verify): the generation tag of the last completed write, and whether
// an I/O to the block is in flight (no two I/Os to one block overlap, or what
// a read sees would be a race, not a fault). Threads sharing a target own
// disjoint blocks, so they never touch the same byte.
struct VerifyTable {
  std::vector<uint8_t> tag;
  std::vector<uint8_t> busy;
};

// The final pass: re-reads every block with a tag (in large reads, through
// the target's own descriptor) and checks it. Throws RuntimeError if a read
// fails; `should_stop` is polled between reads.
void verify_written(const Targets& targets, const std::vector<VerifyTable>& tables, uint64_t bs,
                    uint64_t seed, VerifyResult& result, const std::function<bool()>& should_stop);

}  // namespace ioacct
