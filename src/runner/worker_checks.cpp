// The worker's rarer paths, out of the batch loop's file: --verify's
// requests (no two I/Os to one block in flight) and its bookkeeping, and
// completions short of their transfer: retried, or I/O errors, counted and
// the first one worded for a person.
#include <fmt/format.h>

#include <cerrno>
#include <mutex>

#include "common/errors.hpp"
#include "common/units.hpp"
#include "runner/worker.hpp"

namespace ioacct {

// The --verify path: no two I/Os to one block in flight, every write
// formatted as a checkable block.
unsigned Worker::prepare_verified(unsigned n, Nanos t) noexcept {
  const uint32_t bs = static_cast<uint32_t>(job_.bs);
  for (unsigned i = 0; i < n; ++i) {
    if (sync_due_) {
      sync_due_ = false;
      const uint32_t idx = free_[--nfree_];
      Slot& s = slots_[idx];
      s = Slot{slots_[idx].buf, 0, 0, 0, last_write_file_, sync_op_, 0, t, 0, 0, 0};
      reqs_[nreq_++] = request(s, idx);
      continue;
    }
    size_t k = 0;
    uint64_t off = 0, block = 0;
    bool found = false;
    for (int attempt = 0; attempt < 8 && !found; ++attempt) {
      k = pick_file();
      off = gens_[k].next();
      block = (off - targets_.list[plan_.files[k]].base) / bs;
      found = !(*tables_)[plan_.files[k]].busy[block];
    }
    if (!found) return i;  // everything we tried is in flight; try again next batch
    IoOp op{};
    if (!take_op(op, t)) return i;  // paced by direction: none is due
    (*tables_)[plan_.files[k]].busy[block] = 1;
    const uint32_t idx = free_[--nfree_];
    Slot& s = slots_[idx];
    s.start = s.offset = off;
    s.left = s.len = bs;
    s.eagains = 0;
    s.file = plan_.files[k];
    s.op = op;
    s.t_submit = t;
    s.t_issued = 0;
    if (s.op == IoOp::Write) {
      s.gen = ++generation_;
      format_block(s.buf, bs, off, s.gen, job_.seed, plan_.index);
      if (sync_every_) count_write(s.file);
    }
    reqs_[nreq_++] = request(s, idx);
  }
  return n;
}

// --verify bookkeeping when a request is done (ok = transferred whole).
void Worker::finish_verified(const Slot& s, bool ok) {
  if (!io_moves_data(s.op)) return;  // a sync touches no block
  VerifyTable& vt = (*tables_)[s.file];
  const uint64_t block = (s.start - targets_.list[s.file].base) / job_.bs;
  vt.busy[block] = 0;
  if (s.op == IoOp::Write) {
    // A failed write leaves the block's content unknown: stop checking it.
    vt.tag[block] = ok ? generation_tag(s.gen) : 0;
  } else if (ok && job_.verify_during && vt.tag[block]) {
    VerifyFinding f;
    ++verify_.checked_during;
    if (!check_block(s.buf, s.len, s.start, job_.seed, vt.tag[block], f)) verify_.add(std::move(f));
  }
}

// A completion short of its request's whole transfer (reap's rare case):
// tried again (false: the request stays in flight), or an error, counted
// (true: its slot is free).
bool Worker::reap_failed(Slot& s, const IoCompletion& c) {
  if (take_retry(s, c.res)) {
    // Under --nowait the retry of an EAGAIN may block: EAGAIN there means
    // "not possible inline", and the I/O still has to be done (what an
    // application does); eagain_retries then counts the I/Os that could
    // not complete inline.
    reqs_[nreq_++] = request(s, c.tag, c.res == -EAGAIN);
    return false;
  }
  if (c.res == -EOPNOTSUPP && job_.uring.iopoll) {
    // Polled I/O on a device without poll queues: every I/O will fail the
    // same way. Stop now rather than count them.
    const Target& t = targets_.list[s.file];
    fatal(fmt::format("--iopoll: {} has no poll queues (the kernel answered EOPNOTSUPP); leave out --iopoll",
                      t.device.empty() ? t.path : t.device));
    return true;
  }
  record_error(s, c.res == 0 ? kErrEof : -c.res);
  if (tables_) finish_verified(s, false);
  return true;
}

void Worker::record_error(const Slot& s, int key) {
  ++out_.errors[key];
  if (ctl_.errors.fetch_add(1) + 1 > ctl_.max_errors) {
    int expected = kRunning;
    ctl_.stop.compare_exchange_strong(expected, kErrors);
  }
  std::lock_guard lk(ctl_.first_error_mu);
  if (ctl_.first_error.empty())
    ctl_.first_error = fmt::format("{} {} {}{}{}", key == kErrEof ? "unexpected end of file" : errno_text(key),
                                   s.op == IoOp::Read ? "reading" : s.op == IoOp::Write ? "writing"
                                   : s.op == IoOp::Trim ? "trimming" : "syncing",
                                   targets_.list[s.file].path,
                                   io_moves_data(s.op) || s.op == IoOp::Trim ? fmt::format(" at offset {}", s.start) : "",
                                   error_hint(key, s.op));
}

// What a person can do about the common errors.
const char* Worker::error_hint(int key, IoOp op) {
  if (op == IoOp::Trim && (key == EOPNOTSUPP || key == EINVAL))
    return " (the target cannot discard: a device without discard support, or a filesystem that cannot punch holes)";
  switch (key) {
    case kErrEof: return " (the target is shorter than when the run started: was it truncated?)";
    case ENOSPC: return " (the filesystem is full: use a smaller --size, or free space)";
    case EIO: return " (the device reported an I/O error: check 'dmesg')";
    case EBADF: return " (the target's descriptor is no longer valid)";
    default: return "";
  }
}

// --rate-min / --rate-iops-min: a cycle that fell under a floor ends this
// thread, as fio ends the job, with the shortfall worded for a person (the
// run then exits 1 after its results).
bool Worker::floor_missed(Nanos now) {
  const auto miss = floor_->check(now, {out_.reads, out_.writes, out_.trims},
                                  {out_.bytes_read, out_.bytes_written, out_.bytes_trimmed});
  if (!miss) return false;
  constexpr const char* kDirs[] = {"reads", "writes", "trims"};
  const double secs = static_cast<double>(miss->spent_ns) / 1e9;
  out_.floor_missed =
      miss->ios ? fmt::format("{} ran at {:.0f} I/Os per second over {:.2f} s, under --rate-iops-min {:.0f} "
                              "(fio's rate_iops_min)",
                              kDirs[miss->dir], miss->got, secs, miss->floor)
                : fmt::format("{} moved {}/s over {:.2f} s, under --rate-min {}/s (fio's rate_min)", kDirs[miss->dir],
                              format_size(static_cast<uint64_t>(miss->got)), secs,
                              format_size(static_cast<uint64_t>(miss->floor)));
  return true;
}

}  // namespace ioacct
