/* The kernel structs anatomy.bpf.c reads besides the block layer's
 * (kernel_types.h): only the fields used, relocated by CO-RE at load. */
#ifndef IOACCT_ANATOMY_TYPES_H
#define IOACCT_ANATOMY_TYPES_H

#include "kernel_types.h"

struct io_ring_ctx;

struct io_cqe {
  __u64 user_data;
} __attribute__((preserve_access_index));

struct io_kiocb {
  struct io_cqe cqe;
  struct io_ring_ctx *ctx;
} __attribute__((preserve_access_index));

struct pt_regs;

#endif
