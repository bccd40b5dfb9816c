// sol: the speed of light for a user-space io_uring read loop on this machine.
//
// The smallest loop that keeps `depth` reads in flight: one ring with the
// flags that make the submitter cheapest (SINGLE_ISSUER, DEFER_TASKRUN,
// COOP_TASKRUN), registered file, registered buffers and a registered ring
// fd, and refill-as-you-reap: wait for at least one completion, reap every
// one that is there, put a new read into each freed slot, submit them with
// the next wait. With O_DIRECT the first refill of a pass of two or more is
// submitted at once, so that a device the last batch drained starts again
// while the pass goes on (as ioacct's FusedRing::reap;
// bench/history/2026-12.md, "Kicking the device early"). No accounting beyond a count. bench/sol.sh runs it beside
// `ioacct bench` and fio; what ioacct costs above it is what its own
// accounting and structure cost: this loop is the CPU floor ("sol-cpu").
//
// With --each it is the IOPS ceiling ("sol-iops"): every refill is submitted
// as it is written, one io_uring_enter per I/O, as fio's defaults submit
// (iodepth_batch_submit=1). A device whose queue a batch drains gets each
// request the moment its slot is free; that costs a syscall per I/O, and on
// a fast virtio host it is worth up to a quarter more IOPS (issue 35's
// table; bench/README.md, "bench/sol.sh"). Built as build/<preset>/ioacct_sol
// (CMake option IOACCT_BENCH, on by default).
//
//   sol [--nop] [--buffered] [--each] [--depth N] [--bs BYTES] [--runtime DURATION] [FILE]
//
// DURATION is a whole number of seconds or milliseconds with its unit (5s,
// 500ms; default 5s). Prints one JSON line on stdout:
// {"ios":N,"seconds":S,"iops":X,"depth":D,"bs":B,"each":E}, where ios counts every
// completion and seconds runs from the first submission to the last
// completion. Exits 2 on bad arguments, 1 on a failure, with one line on stderr.
#include <fcntl.h>
#include <linux/fs.h>
#include <liburing.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef IORING_SETUP_DEFER_TASKRUN
#define IORING_SETUP_DEFER_TASKRUN (1U << 13)
#endif

namespace {

[[noreturn]] void die(int code, const char* what, int err) {
  std::fprintf(stderr, "error: sol: %s%s%s\n", what, err ? ": " : "", err ? std::strerror(err) : "");
  std::exit(code);
}

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// A positive decimal integer, optionally followed by `suffix` (nullptr: none).
uint64_t parse_u64(const char* flag, const char* v, const char* suffix = nullptr, const char* what = "a positive integer") {
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = v[0] >= '0' && v[0] <= '9' ? std::strtoull(v, &end, 10) : 0;
  if (errno || end == nullptr || end == v || x == 0 || std::strcmp(end, suffix ? suffix : "") != 0) {
    std::fprintf(stderr, "error: sol: %s: '%s' is not %s\n", flag, v, what);
    std::exit(2);
  }
  return x;
}

uint64_t parse_duration_ns(const char* flag, const char* v) {
  const size_t n = std::strlen(v);
  const char* what = "a duration such as 5s or 500ms";
  if (n > 2 && !std::strcmp(v + n - 2, "ms")) return parse_u64(flag, v, "ms", what) * 1'000'000ull;
  return parse_u64(flag, v, "s", what) * 1'000'000'000ull;
}

// xorshift64*: the next block, uniformly over the file.
struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
};

}  // namespace

int main(int argc, char** argv) {
  bool nop = false, buffered = false, each = false;
  unsigned depth = 32;
  uint64_t bs = 4096, runtime_ns = 5'000'000'000ull;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    auto value = [&](const char* flag) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: sol: %s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(a, "--nop")) nop = true;
    else if (!std::strcmp(a, "--buffered")) buffered = true;
    else if (!std::strcmp(a, "--each")) each = true;
    else if (!std::strcmp(a, "--depth")) depth = static_cast<unsigned>(parse_u64(a, value(a)));
    else if (!std::strcmp(a, "--bs")) bs = parse_u64(a, value(a));
    else if (!std::strcmp(a, "--runtime")) runtime_ns = parse_duration_ns(a, value(a));
    else if (a[0] == '-') {
      std::fprintf(stderr, "error: sol: unknown option %s\n", a);
      return 2;
    } else if (path) {
      die(2, "give one FILE", 0);
    } else {
      path = a;
    }
  }
  if (!path && !nop) die(2, "give a FILE to read (or --nop)", 0);
  if (depth > 4096) die(2, "--depth: at most 4096", 0);
  if (bs > (1u << 30)) die(2, "--bs: at most 1 GiB", 0);
  if (!buffered && !nop && bs % 512) die(2, "--bs: O_DIRECT needs a multiple of 512 (or --buffered)", 0);

  const bool direct = !nop && !buffered;
  int fd = -1;
  uint64_t blocks = 1;
  if (!nop) {
    fd = open(path, O_RDONLY | (buffered ? 0 : O_DIRECT));
    if (fd < 0) die(1, path, errno);
    struct stat st {};
    if (fstat(fd, &st) != 0) die(1, path, errno);
    uint64_t bytes = static_cast<uint64_t>(st.st_size);
    // A block device's size is not in st_size (a loop device in bench/sol.sh).
    if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, &bytes) != 0) die(1, path, errno);
    blocks = bytes / bs;
    if (blocks == 0) die(2, "the file is smaller than one block", 0);
  }

  io_uring ring{};
  io_uring_params p{};
  p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_COOP_TASKRUN;
  if (int r = io_uring_queue_init_params(depth, &ring, &p); r < 0) die(1, "io_uring_queue_init_params", -r);
  if (int r = io_uring_register_ring_fd(&ring); r < 0) die(1, "io_uring_register_ring_fd", -r);

  // One aligned allocation, one registered buffer per slot.
  char* mem = static_cast<char*>(std::aligned_alloc(4096, (bs * depth + 4095) / 4096 * 4096));
  if (!mem) die(1, "cannot allocate the buffers", ENOMEM);
  std::vector<iovec> iov(depth);
  for (unsigned i = 0; i < depth; ++i) iov[i] = {mem + i * bs, bs};
  if (!nop) {
    if (int r = io_uring_register_files(&ring, &fd, 1); r < 0) die(1, "io_uring_register_files", -r);
    if (int r = io_uring_register_buffers(&ring, iov.data(), depth); r < 0) die(1, "io_uring_register_buffers", -r);
  }

  Rng rng{0x9E3779B97F4A7C15ull};
  auto prep = [&](unsigned slot) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);  // never null: at most depth in flight
    if (nop) {
      io_uring_prep_nop(sqe);
    } else {
      io_uring_prep_read_fixed(sqe, 0, iov[slot].iov_base, static_cast<unsigned>(bs), (rng.next() % blocks) * bs,
                               static_cast<int>(slot));
      sqe->flags |= IOSQE_FIXED_FILE;
    }
    sqe->user_data = slot;
  };

  for (unsigned i = 0; i < depth; ++i) prep(i);
  const uint64_t start = now_ns(), end = start + runtime_ns;
  uint64_t ios = 0, t = start;
  unsigned inflight = depth;
  bool stopping = false;
  while (inflight) {
    // Submits the refills and waits for at least one completion.
    if (int r = io_uring_submit_and_wait(&ring, 1); r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
      die(1, "io_uring_enter", -r);
    unsigned head, n = 0;
    io_uring_cqe* cqe;
    const bool early = direct && io_uring_cq_ready(&ring) > 1;
    io_uring_for_each_cqe(&ring, head, cqe) {
      if (cqe->res < 0 || (!nop && static_cast<uint64_t>(cqe->res) != bs)) {
        std::fprintf(stderr, "error: sol: a read returned %d\n", cqe->res);
        return 1;
      }
      ++n;
      if (!stopping) prep(static_cast<unsigned>(cqe->user_data));
      else --inflight;
      if ((each || (early && n == 1)) && !stopping)
        if (int r = io_uring_submit(&ring); r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
          die(1, "io_uring_enter", -r);
    }
    io_uring_cq_advance(&ring, n);
    ios += n;
    // One clock read per 64 completions is plenty for a deadline.
    if (!stopping && (ios & ~63ull) != ((ios - n) & ~63ull)) {
      t = now_ns();
      stopping = t >= end;
    }
  }
  t = now_ns();
  const double secs = static_cast<double>(t - start) / 1e9;
  std::printf("{\"ios\":%llu,\"seconds\":%.6f,\"iops\":%.1f,\"depth\":%u,\"bs\":%llu,\"each\":%s}\n",
              static_cast<unsigned long long>(ios), secs, static_cast<double>(ios) / secs, depth,
              static_cast<unsigned long long>(bs), each ? "true" : "false");
  io_uring_queue_exit(&ring);
  std::free(mem);
  return 0;
}
