#pragma once
// `ioacct probe`: what this kernel's io_uring offers, found by asking it.
// Collecting only: the result is plain data, printed by report/probe_report.
//
// Every capability is established by trying it (io_uring_setup with the
// flag, IORING_REGISTER_PROBE for opcodes), never inferred from the kernel
// version: distribution kernels backport, and sysctls and seccomp forbid.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ioacct {

// One IORING_SETUP_* flag, tried in a fresh io_uring_setup (plus whatever it
// cannot be set without) and closed at once. The rings are never mmapped.
struct SetupFlagProbe {
  std::string name;   // without the IORING_SETUP_ prefix, e.g. "SQPOLL"
  uint32_t flag = 0;  // its bit
  uint32_t tried = 0;  // every flag passed: `flag` and its companions
  std::string with;   // what else the try set up, e.g. "SQPOLL" or "cq_entries"; "" if nothing
  std::string since;  // the kernel release that added it, e.g. "6.1"
  int error = 0;      // 0: accepted; else the errno io_uring_setup returned (positive)
};

// A setup bit ioacct has no name for, tried alone. The kernel rejects bits
// it does not know with EINVAL, so an accepted one means a newer kernel.
struct UnknownBitProbe {
  unsigned bit = 0;
  int error = 0;  // 0: accepted
};

struct OpcodeProbe {
  unsigned op = 0;
  std::string name;  // without IORING_OP_, e.g. "READ"; "" for a number ioacct has no name for
  bool supported = false;
};

// /proc/self/fdinfo of an SQPOLL ring: which of the SQ thread's lines the
// kernel prints (SqTotalTime/SqWorkTime are what ioacct needs to account the
// SQ thread's busy time).
struct SqpollFdinfo {
  int error = 0;            // the SQPOLL ring could not be created: errno; nothing else is set
  std::string read_error;   // fdinfo could not be read: why; "" when it was
  struct Field {
    std::string key;                   // "SqThread", "SqThreadCpu", "SqTotalTime", "SqWorkTime"
    std::optional<std::string> value;  // as printed; nullopt: the line is absent
  };
  std::vector<Field> fields;
};

// One block device of /sys/block. RAM-backed ones (ram*, zram*) and loop
// devices with nothing attached are left out: nobody benchmarks those.
struct BlockDeviceProbe {
  std::string name;                                // "nvme0n1"
  std::optional<bool> io_poll;                     // queue/io_poll: polled I/O (IOPOLL) possible
  std::optional<uint32_t> logical_block_size;      // queue/logical_block_size, bytes
  std::optional<std::string> scheduler;            // the active one of queue/scheduler ("none", "mq-deadline")
};

struct ProbeResult {
  std::string sysname, release;  // uname
  std::optional<int> io_uring_disabled;  // kernel.io_uring_disabled; nullopt: the sysctl is not there (before 6.6)
  // RLIMIT_MEMLOCK in bytes; kUnlimited for RLIM_INFINITY. Rings count
  // against it before 5.12, registered buffers always.
  static constexpr uint64_t kUnlimited = UINT64_MAX;
  uint64_t memlock_soft = 0, memlock_hard = 0;

  // A plain ring (no flags): does io_uring work at all, and with which features.
  int setup_error = 0;     // 0: a plain ring was created; else errno (ENOSYS: no io_uring; EPERM: forbidden)
  uint32_t features = 0;   // io_uring_params.features of that ring
  std::vector<std::string> feature_names;  // known bits, without IORING_FEAT_, in bit order
  std::vector<unsigned> unknown_feature_bits;

  std::vector<SetupFlagProbe> setup_flags;  // every flag ioacct knows, in bit order
  std::vector<UnknownBitProbe> unknown_setup_bits;  // the bits above the known ones

  int opcodes_error = 0;  // IORING_REGISTER_PROBE failed: errno; `opcodes` is then empty
  unsigned last_op = 0;   // the kernel's last opcode (IORING_OP_LAST - 1)
  std::vector<OpcodeProbe> opcodes;  // 0..last_op

  SqpollFdinfo sqpoll;
  std::vector<BlockDeviceProbe> block_devices;  // by name
};

// Runs every probe. Never throws for what the kernel refuses (that is the
// answer); each part that cannot be read is reported as such.
ProbeResult probe_io_uring();

}  // namespace ioacct
