#pragma once
// A fault-injecting wrapper around any engine, for tests: it turns real
// completions into EIO, short transfers or EAGAIN, or holds them back for a
// while, at configured rates. The I/O itself really happens; only what the
// caller is told changes. Selected with the hidden bench flag
// --inject-faults (see docs/cli.md); never on by default.
#include <deque>
#include <memory>
#include <string_view>
#include <vector>

#include "common/rng.hpp"
#include "engine/engine.hpp"

namespace ioacct {

struct FaultCounts {
  uint64_t eio = 0, short_io = 0, eagain = 0, delayed = 0;
};

class FaultEngine final : public Engine {
 public:
  FaultEngine(std::unique_ptr<Engine> inner, const FaultSpec& spec, unsigned depth);

  unsigned queue(std::span<const IoRequest> reqs) noexcept override;
  int enter(unsigned wait_nr, std::span<IoCompletion> out, uint64_t timeout_ns) noexcept override;
  const EngineCounters& counters() const noexcept override { return inner_->counters(); }
  std::string describe() const override;
  uint32_t setup_flags() const noexcept override { return inner_->setup_flags(); }
  const FaultCounts& injected() const noexcept { return injected_; }

 private:
  struct Held {
    IoCompletion c;
    uint64_t release_ns;
  };
  bool roll(double p) noexcept { return p > 0 && static_cast<double>(rng_.next() >> 11) * 0x1p-53 < p; }

  std::unique_ptr<Engine> inner_;
  FaultSpec spec_;
  Rng rng_;
  std::vector<IoCompletion> scratch_;
  std::deque<Held> held_;  // at most depth entries, in release order
  unsigned inner_inflight_ = 0;
  FaultCounts injected_;
};

}  // namespace ioacct
