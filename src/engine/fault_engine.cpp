#include "engine/fault_engine.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>

#include "acct/clock.hpp"
#include "common/errors.hpp"
#include "common/units.hpp"

namespace ioacct {

FaultSpec parse_fault_spec(std::string_view flag, std::string_view text) {
  FaultSpec s;
  auto bad = [&](std::string_view why) {
    throw UsageError(fmt::format("{}: cannot read '{}' ({}); e.g. eio=0.01,short=0.05,eagain=0.02,delay=0.01:5ms",
                                 flag, text, why));
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = text.substr(pos, comma - pos);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) bad("each item is name=value");
    const std::string_view key = item.substr(0, eq);
    std::string_view val = item.substr(eq + 1);
    if (key == "seed") {
      s.seed = parse_count(flag, val);
    } else {
      if (key == "delay") {
        const size_t colon = val.find(':');
        if (colon != std::string_view::npos) {
          s.delay_ns = static_cast<uint64_t>(parse_duration(flag, val.substr(colon + 1)).count());
          val = val.substr(0, colon);
        }
      }
      double p = -1;
      auto [ptr, ec] = std::from_chars(val.data(), val.data() + val.size(), p);
      if (ec != std::errc{} || ptr != val.data() + val.size() || !(p >= 0 && p <= 1))  // NaN too
        bad("a rate is a number from 0 to 1");
      if (key == "eio") s.eio = p;
      else if (key == "short") s.short_io = p;
      else if (key == "eagain") s.eagain = p;
      else if (key == "delay") s.delay = p;
      else bad("names are eio, short, eagain, delay, seed");
    }
    pos = comma + 1;
  }
  return s;
}

FaultEngine::FaultEngine(std::unique_ptr<Engine> inner, const FaultSpec& spec, unsigned depth)
    : inner_(std::move(inner)), spec_(spec), rng_(spec.seed), scratch_(std::max(depth, 1u)) {}

unsigned FaultEngine::queue(std::span<const IoRequest> reqs) noexcept {
  const unsigned n = inner_->queue(reqs);
  inner_inflight_ += n;
  return n;
}

int FaultEngine::enter(unsigned wait_nr, std::span<IoCompletion> out, uint64_t timeout_ns) noexcept {
  // Same contract as any engine: return once wait_nr completions are here,
  // or the timeout passed. Completions held back (delay) count only once
  // they are released, so this may take several rounds.
  const uint64_t deadline = timeout_ns ? now_ns() + timeout_ns : UINT64_MAX;
  size_t n = 0;
  bool entered = false;
  for (;;) {
    while (n < out.size() && !held_.empty() && held_.front().release_ns <= now_ns()) {
      out[n++] = held_.front().c;
      held_.pop_front();
    }
    const unsigned need = n >= wait_nr ? 0 : wait_nr - static_cast<unsigned>(n);
    if (entered && (need == 0 || n == out.size())) break;
    const unsigned want = std::min(need, inner_inflight_);
    if (entered && want == 0) {
      // All that is outstanding is held here: sleep until the next is due.
      if (held_.empty() || now_ns() >= deadline) break;
      sleep_until_ns(std::min(held_.front().release_ns, deadline));
      continue;
    }
    const uint64_t now = now_ns();
    if (entered && now >= deadline) break;
    const uint64_t left = deadline == UINT64_MAX ? 0 : std::max<uint64_t>(deadline - now, 1);
    const int got = inner_->enter(want, {scratch_.data(), std::min(scratch_.size(), out.size() - n)}, left);
    entered = true;
    if (got < 0) return n ? static_cast<int>(n) : got;
    const uint64_t t = now_ns();
    for (int i = 0; i < got; ++i) {
      IoCompletion c = scratch_[i];
      --inner_inflight_;
      if (c.res >= 0 && roll(spec_.eio)) {
        c.res = -EIO;
        ++injected_.eio;
      } else if (c.res >= 1024 && roll(spec_.short_io)) {
        c.res = (c.res / 2) & ~511;  // a sector-aligned prefix, as a device would return
        ++injected_.short_io;
      } else if (c.res >= 0 && roll(spec_.eagain)) {
        c.res = -EAGAIN;
        ++injected_.eagain;
      }
      if (roll(spec_.delay)) {
        ++injected_.delayed;
        held_.push_back({c, t + spec_.delay_ns});  // same delay for all: stays in release order
        continue;
      }
      out[n++] = c;
    }
    if (timeout_ns && now_ns() >= deadline) break;
    // Nothing came back from a wait: it timed out or a signal interrupted
    // it (the runner's kick), and the caller has to look up.
    if (got == 0 && want > 0) break;
  }
  return static_cast<int>(n);
}

std::string FaultEngine::describe() const {
  return fmt::format("{} with injected faults (eio {}, short {}, eagain {}, delay {} for {})", inner_->describe(),
                     spec_.eio, spec_.short_io, spec_.eagain, spec_.delay,
                     format_duration_ns(static_cast<double>(spec_.delay_ns)));
}

}  // namespace ioacct
