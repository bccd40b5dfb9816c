#include "workload/verify.hpp"

#include <fmt/format.h>
// The state on the stack, not the heap: this runs once per write with --verify.
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "common/errors.hpp"

#include "common/offsets.hpp"

namespace ioacct {
namespace {

struct Header {
  uint64_t magic, offset, generation, seed;
  uint32_t len, thread;
  uint64_t checksum;
};
static_assert(sizeof(Header) == kVerifyHeader);

uint64_t data_seed(uint64_t seed, uint64_t offset, uint64_t generation) {
  return seed ^ (offset * 0x9e3779b97f4a7c15ull) ^ (generation * 0xc2b2ae3d27d4eb4full);
}

void fill_data(char* buf, uint32_t len, uint64_t seed, uint64_t offset, uint64_t generation) {
  Rng rng(data_seed(seed, offset, generation));
  for (uint32_t i = kVerifyHeader; i + 8 <= len; i += 8) {
    const uint64_t v = rng.next();
    std::memcpy(buf + i, &v, 8);
  }
}

uint64_t block_checksum(const char* buf, uint32_t len) {
  // XXH64 over the block as if the checksum field were zero, without a copy:
  // hash the parts before and after it, chained.
  XXH64_state_t st;
  XXH64_reset(&st, 0);
  XXH64_update(&st, buf, offsetof(Header, checksum));
  static constexpr uint64_t kZero = 0;
  XXH64_update(&st, &kZero, 8);
  XXH64_update(&st, buf + kVerifyHeader, len - kVerifyHeader);
  return XXH64_digest(&st);
}

std::string hex(uint64_t v) { return fmt::format("{:#018x}", v); }

}  // namespace

void format_block(char* buf, uint32_t len, uint64_t offset, uint64_t generation, uint64_t seed,
                  uint32_t thread) noexcept {
  fill_data(buf, len, seed, offset, generation);
  Header h{kVerifyMagic, offset, generation, seed, len, thread, 0};
  std::memcpy(buf, &h, sizeof h);
  h.checksum = block_checksum(buf, len);
  std::memcpy(buf, &h, sizeof h);
}

bool check_block(const char* buf, uint32_t len, uint64_t offset, uint64_t seed, uint8_t tag,
                 VerifyFinding& out) {
  Header h;
  std::memcpy(&h, buf, sizeof h);
  out = {};
  out.offset = offset;
  if (h.magic != kVerifyMagic) {
    out.kind = "no-header";
    out.expected = fmt::format("a block written by this run (magic {})", hex(kVerifyMagic));
    out.found = fmt::format("magic {}: not an ioacct block (overwritten, or the write was lost)", hex(h.magic));
    return false;
  }
  if (h.offset != offset || h.len != len) {
    out.kind = "misplaced";
    out.expected = fmt::format("the block for offset {} ({} bytes)", offset, len);
    out.found = fmt::format("the block written for offset {} ({} bytes): a misdirected write", h.offset, h.len);
    return false;
  }
  if (h.seed != seed) {
    out.kind = "other-run";
    out.expected = fmt::format("seed {}", seed);
    out.found = fmt::format("seed {}: a block from another run (the write was lost)", h.seed);
    return false;
  }
  const uint64_t sum = block_checksum(buf, len);
  if (sum != h.checksum) {
    // Rebuild what this header's write put there and compare sector by sector.
    std::unique_ptr<char[]> want(new char[len]);
    format_block(want.get(), len, offset, h.generation, seed, h.thread);
    const uint32_t sectors = len / kVerifySector;
    uint32_t first_bad = sectors;
    uint32_t bad = 0;
    for (uint32_t s = 0; s < sectors; ++s) {
      if (std::memcmp(buf + s * kVerifySector, want.get() + s * kVerifySector, kVerifySector) != 0) {
        if (first_bad == sectors) first_bad = s;
        ++bad;
      }
    }
    out.expected = fmt::format("write #{} of thread {} whole (checksum {})", h.generation, h.thread, hex(h.checksum));
    if (bad && first_bad > 0 && bad == sectors - first_bad) {
      out.kind = "torn";
      out.found = fmt::format("a torn write: bytes 0-{} as written, bytes {}-{} not ({} of {} sectors)",
                              first_bad * kVerifySector - 1, first_bad * kVerifySector, len - 1,
                              sectors - first_bad, sectors);
    } else {
      size_t byte = 0;
      while (byte < len && buf[byte] == want[byte]) ++byte;
      out.kind = "corrupt";
      out.found = fmt::format("checksum {}; {} of {} sectors differ, the first at byte {}", hex(sum), bad,
                              sectors, byte);
    }
    return false;
  }
  if (tag && generation_tag(h.generation) != tag) {
    out.kind = "stale";
    out.expected = fmt::format("the last write to this block (generation tag {})", tag);
    out.found = fmt::format("an older write, #{} of thread {}: the last write was lost", h.generation, h.thread);
    return false;
  }
  return true;
}

void verify_written(const Targets& targets, const std::vector<VerifyTable>& tables, uint64_t bs,
                    uint64_t seed, VerifyResult& result, const std::function<bool()>& should_stop) {
  const uint64_t chunk_blocks = std::max<uint64_t>(1, (1u << 20) / bs);
  const size_t chunk = static_cast<size_t>(chunk_blocks * bs);
  struct Free { void operator()(char* p) const { std::free(p); } };
  std::unique_ptr<char, Free> buf(static_cast<char*>(std::aligned_alloc(4096, (chunk + 4095) / 4096 * 4096)));
  const uint32_t len = static_cast<uint32_t>(bs);
  for (size_t ti = 0; ti < targets.list.size() && ti < tables.size(); ++ti) {
    const Target& t = targets.list[ti];
    const auto& tag = tables[ti].tag;
    for (uint64_t b0 = 0; b0 < tag.size(); b0 += chunk_blocks) {
      const uint64_t n = std::min<uint64_t>(chunk_blocks, tag.size() - b0);
      bool any = false;
      for (uint64_t b = b0; b < b0 + n && !any; ++b) any = tag[b] != 0;
      if (!any) continue;
      if (should_stop()) return;
      const uint64_t off = t.base + b0 * bs;
      const size_t want = static_cast<size_t>(n * bs);
      size_t got = 0;
      while (got < want) {
        const ssize_t r = ::pread(t.fd, buf.get() + got, want - got, static_cast<off_t>(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0)
          throw RuntimeError(fmt::format("--verify: reading {} at offset {}: {}", t.path, off + got, errno_text(errno)));
        if (r == 0) break;
        got += static_cast<size_t>(r);
      }
      for (uint64_t b = b0; b < b0 + n; ++b) {
        if (!tag[b]) continue;
        const uint64_t boff = t.base + b * bs;
        const size_t at = static_cast<size_t>((b - b0) * bs);
        VerifyFinding f;
        if (at + len > got) {
          result.add({boff, "missing", fmt::format("{} bytes written by this run", len),
                      fmt::format("the file ends at {}: the data is gone (truncated?)", off + got)});
        } else if (!check_block(buf.get() + at, len, boff, seed, tag[b], f)) {
          result.add(std::move(f));
        }
        ++result.checked_after;
      }
    }
  }
}

}  // namespace ioacct
