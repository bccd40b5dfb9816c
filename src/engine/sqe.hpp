#pragma once
// The one writer of a request's SQE, and reader of a nop's CQE, for both
// paths of the io_uring engine: the batch path (UringEngine::queue and
// enter) and the fused one (FusedRing). Each encodes the same things the
// same way: a nop's length in user_data (IORING_OP_NOP completes with res 0),
// the fixed-file flag, the registered buffer's index. Inline: it runs per I/O.
#include <liburing.h>

#include <cstdint>

namespace ioacct {

// IORING_OP_NOP standing for a request of `len` bytes: the length rides in
// user_data's high half, the tag in its low half.
[[gnu::always_inline]] inline void sqe_nop(io_uring_sqe* sqe, uint32_t len, uint32_t tag) noexcept {
  io_uring_prep_nop(sqe);
  sqe->user_data = (static_cast<uint64_t>(len) << 32) | tag;
}

// A nop's completion as a read's would be: its length, or its error.
[[gnu::always_inline]] inline int32_t nop_result(uint64_t user_data, int32_t res) noexcept {
  return res < 0 ? res : static_cast<int32_t>(user_data >> 32);
}

// A read or write of `len` bytes at `offset`: `fd` is the file's index in
// the registered table when `fixed_file`, and the I/O goes through
// registered buffer `tag` when `fixed_buf`. user_data is the tag.
[[gnu::always_inline]] inline void sqe_rw(io_uring_sqe* sqe, bool read, int fd, bool fixed_file, bool fixed_buf,
                                          const void* buf, uint32_t len, uint64_t offset, uint32_t tag) noexcept {
  if (fixed_buf) {
    io_uring_prep_rw(read ? IORING_OP_READ_FIXED : IORING_OP_WRITE_FIXED, sqe, fd, buf, len, offset);
    sqe->buf_index = static_cast<uint16_t>(tag);
  } else {
    io_uring_prep_rw(read ? IORING_OP_READ : IORING_OP_WRITE, sqe, fd, buf, len, offset);
  }
  if (fixed_file) sqe->flags |= IOSQE_FIXED_FILE;
  sqe->user_data = tag;
}

}  // namespace ioacct
