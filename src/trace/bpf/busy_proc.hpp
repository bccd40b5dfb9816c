#pragma once
// By process: which PROC record (busy_shared.h) is a request's. The start
// program logs no clock read of its own (40-130 ns a run, by the hour): it logs
// the start stamp its struct holds as the request starts, and the reader
// pairs by that stamp. On this machine's 6.18 the kernel stamps the request
// just after block_io_start, so the stamp logged is the struct's previous
// request's, strictly earlier than the request's own (measured: 962 of 962
// starts on a reused struct). A kernel that stamps first leaves the
// request's own stamp there, and the record says so (`own`). Pure, so that
// both readings are tested here. docs/design.md, "Who is using the disk".
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace ioacct::busy {

// The PROC records on one struct not matched to a completion yet: its
// request's and, since the reader feeds them by stamp (earlier than their
// requests' completions), its next request's; the rest are requests whose
// completion no program logged or that ended unaccounted.
struct Procs {
  static constexpr size_t kMax = 4;
  struct Entry {
    uint64_t s = 0;  // the struct's stamp as its request started
    uint32_t tgid = 0;
    bool own = false;  // `s` is the request's own stamp
  };
  std::array<Entry, kMax> e{};
  uint8_t n = 0;
};

// Adds a record, after those already there; a full set first drops its
// earliest stamp.
void add_proc(Procs& p, uint64_t s, uint32_t tgid, bool own);

// The tgid of the request with start stamp `start` on this struct: its
// record has the latest stamp before `start` (at `start` where the record is
// `own`), the later one added where stamps tie. None when no record fits.
// With `take`, that record and every one not later than it leave the set:
// theirs are requests that ended before this one started.
std::optional<uint32_t> match_proc(Procs& p, uint64_t start, bool take);

}  // namespace ioacct::busy
