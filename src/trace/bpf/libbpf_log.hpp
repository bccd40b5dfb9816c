#pragma once
// What libbpf may print. Nothing by default: a failed load or attach becomes
// one error line of ours. IOACCT_BPF_LOG in the environment lets its warnings
// through (the verifier's log included), IOACCT_BPF_LOG=debug everything.
#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace ioacct {

inline bool libbpf_log_wanted() {
  return std::getenv("IOACCT_BPF_LOG") != nullptr;  // NOLINT(concurrency-mt-unsafe)
}

inline int libbpf_quiet(enum libbpf_print_level /*level*/, const char* /*fmt*/, va_list /*args*/) { return 0; }

// Read once, at the first message: the environment is not written meanwhile.
inline int libbpf_loud(enum libbpf_print_level level, const char* fmt, va_list args) {
  static const bool debug = [] {
    const char* v = std::getenv("IOACCT_BPF_LOG");  // NOLINT(concurrency-mt-unsafe)
    return v && std::string_view(v) == "debug";
  }();
  return level == LIBBPF_WARN || debug ? std::vfprintf(stderr, fmt, args) : 0;
}

// Sets libbpf's printer from the environment.
inline void set_libbpf_log() { libbpf_set_print(libbpf_log_wanted() ? libbpf_loud : libbpf_quiet); }

}  // namespace ioacct
