#pragma once
// A hash map keyed by kernel addresses (never 0), for the busy tracker's
// reader: open addressing with linear probing and backward-shift deletion,
// so that a lookup is one or two cache lines and nothing is allocated per
// entry. std::unordered_map allocates a node per insert, which at a few
// hundred thousand requests a second was most of the reader's time.
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

namespace ioacct {

template <typename V>
class PointerMap {
 public:
  PointerMap() { slots_.resize(64); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  V* find(uint64_t key) {
    for (size_t i = home(key);; i = next(i)) {
      if (slots_[i].first == key) return &slots_[i].second;
      if (slots_[i].first == 0) return nullptr;
    }
  }

  // The value of `key`, inserted (value-initialised) if missing.
  V& operator[](uint64_t key) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    for (size_t i = home(key);; i = next(i)) {
      if (slots_[i].first == key) return slots_[i].second;
      if (slots_[i].first == 0) {
        slots_[i] = {key, V{}};
        ++size_;
        return slots_[i].second;
      }
    }
  }

  void erase(uint64_t key) {
    size_t i = home(key);
    for (;; i = next(i)) {
      if (slots_[i].first == 0) return;
      if (slots_[i].first == key) break;
    }
    // Backward shift: move later entries of the run into the hole when that
    // brings them no further from home, so that lookups never need tombstones.
    for (size_t j = next(i);; j = next(j)) {
      if (slots_[j].first == 0) break;
      const size_t h = home(slots_[j].first);
      if (((j - h) & mask()) >= ((j - i) & mask())) {
        slots_[i] = std::move(slots_[j]);
        i = j;
      }
    }
    slots_[i] = {0, V{}};
    --size_;
  }

  void clear() {
    if (size_ == 0) return;
    for (auto& s : slots_) s = {0, V{}};
    size_ = 0;
  }

  // Calls f(key, value&) for every entry; f must not insert or erase.
  template <typename F>
  void for_each(F&& f) {
    for (auto& s : slots_)
      if (s.first) f(s.first, s.second);
  }

 private:
  size_t mask() const { return slots_.size() - 1; }
  size_t home(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 20) & mask(); }
  size_t next(size_t i) const { return (i + 1) & mask(); }
  void grow() {
    std::vector<std::pair<uint64_t, V>> old(slots_.size() * 2);
    old.swap(slots_);
    size_ = 0;
    for (auto& s : old)
      if (s.first) (*this)[s.first] = std::move(s.second);
  }

  std::vector<std::pair<uint64_t, V>> slots_;
  size_t size_ = 0;
};

}  // namespace ioacct
