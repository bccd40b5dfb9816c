#pragma once
// io_uring constants newer than Debian 12's liburing 2.3 headers, with the
// values from the kernel's include/uapi/linux/io_uring.h. Support for each is
// decided at run time by asking the kernel, never at compile time.
#include <liburing.h>

#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)  // 6.6
#endif
#ifndef IORING_SETUP_SQE128
#define IORING_SETUP_SQE128 (1U << 10)
#endif
#ifndef IORING_ENTER_NO_IOWAIT
#define IORING_ENTER_NO_IOWAIT (1U << 7)  // 6.15: waiting does not count as iowait
#endif
#ifndef IORING_FEAT_NO_IOWAIT
#define IORING_FEAT_NO_IOWAIT (1U << 17)  // 6.15
#endif
#ifndef IORING_FEAT_NODROP
#define IORING_FEAT_NODROP (1U << 1)  // 5.5: a full CQ never drops completions
#endif
#ifndef BLOCK_URING_CMD_DISCARD
#define BLOCK_URING_CMD_DISCARD _IO(0x12, 0)  // 6.12: IORING_OP_URING_CMD on a block device (linux/blkdev.h)
#endif
