#pragma once
// Typed errors. Syscall-facing code returns -errno; the layer above turns that
// into one of these with context. Only cli/ maps them to exit codes:
//   UsageError   -> 2 (the command line is wrong; nothing was done)
//   RuntimeError -> 1 (the command line was fine; the system said no)
#include <stdexcept>
#include <string>

namespace ioacct {

// `what` is the whole one-line message without the "error: " prefix,
// e.g. "--bs: cannot read '4q' as a size (try 4k, 64KiB, 1m)".
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kernel facility ioacct wanted is not there (io_uring disabled, an opcode
// unsupported). Callers may fall back; the CLI reports it as a RuntimeError.
class NotAvailable : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

// "strerror" for -errno values, in one place: "EBADF (Bad file descriptor)".
std::string errno_name(int err);
std::string errno_text(int err);  // "Bad file descriptor (EBADF)"

}  // namespace ioacct
