#pragma once
// io_uring constants that `ioacct probe` names or tries and that Debian 12's
// liburing 2.3 headers lack. Values from the kernel's
// include/uapi/linux/io_uring.h; the comment gives the release that added
// each. Nothing here is assumed to work: the probe asks the kernel.
// (engine/uapi.hpp holds the ones the engine itself uses; both guard with
// #ifndef, so either order of inclusion is fine.)
#include <liburing.h>

#include "engine/uapi.hpp"

// io_uring_setup() flags.
#ifndef IORING_SETUP_NO_MMAP
#define IORING_SETUP_NO_MMAP (1U << 14)  // 6.5: rings live in memory the caller provides
#endif
#ifndef IORING_SETUP_REGISTERED_FD_ONLY
#define IORING_SETUP_REGISTERED_FD_ONLY (1U << 15)  // 6.5: setup returns a registered-ring index, not an fd
#endif
#ifndef IORING_SETUP_HYBRID_IOPOLL
#define IORING_SETUP_HYBRID_IOPOLL (1U << 17)  // 6.13: sleep, then poll (needs IOPOLL)
#endif
#ifndef IORING_SETUP_CQE_MIXED
#define IORING_SETUP_CQE_MIXED (1U << 18)  // 6.18: 16- and 32-byte CQEs in one ring
#endif
#ifndef IORING_SETUP_SQE_MIXED
#define IORING_SETUP_SQE_MIXED (1U << 19)  // 6.19: 64- and 128-byte SQEs in one ring
#endif

// io_uring_params.features bits.
#ifndef IORING_FEAT_REG_REG_RING
#define IORING_FEAT_REG_REG_RING (1U << 13)  // 6.3
#endif
#ifndef IORING_FEAT_RECVSEND_BUNDLE
#define IORING_FEAT_RECVSEND_BUNDLE (1U << 14)  // 6.10
#endif
#ifndef IORING_FEAT_MIN_TIMEOUT
#define IORING_FEAT_MIN_TIMEOUT (1U << 15)  // 6.12
#endif
#ifndef IORING_FEAT_RW_ATTR
#define IORING_FEAT_RW_ATTR (1U << 16)  // 6.14
#endif
#ifndef IORING_FEAT_NO_IOWAIT
#define IORING_FEAT_NO_IOWAIT (1U << 17)  // 6.15
#endif

// io_uring_register(): the `fd` argument is a registered-ring index, not a
// file descriptor (6.3). The only way to reach a REGISTERED_FD_ONLY ring.
#ifndef IORING_REGISTER_USE_REGISTERED_RING
#define IORING_REGISTER_USE_REGISTERED_RING (1U << 31)
#endif
