#pragma once
// An mmap of a BPF_F_MMAPABLE array map: the programs and the reader share
// its pages, so reading a log or a slot is a load, never a syscall.
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string_view>

#include "common/errors.hpp"

namespace ioacct {

class MapView {
 public:
  MapView() = default;
  MapView(const MapView&) = delete;
  MapView& operator=(const MapView&) = delete;
  ~MapView() {
    if (p_) munmap(p_, len_);
  }
  // `what` names the map in the error: "the busy tracker's log map".
  void map(bpf_map* m, std::string_view what) {
    const size_t bytes = static_cast<size_t>(bpf_map__value_size(m)) * bpf_map__max_entries(m);
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    len_ = (bytes + page - 1) / page * page;
    p_ = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
    if (p_ == MAP_FAILED) {
      p_ = nullptr;
      throw NotAvailable(fmt::format("cannot map {}: {}", what, errno_text(errno)));
    }
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }

 private:
  void* p_ = nullptr;
  size_t len_ = 0;
};

}  // namespace ioacct
