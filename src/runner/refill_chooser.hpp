#pragma once
// How the fused path submits its refills, chosen by measuring (issue 35).
//
// Two ways to hand a pass's refills to the kernel, each best in one regime:
// - Pass: written during the pass and submitted with the next wait (the
//   first of an O_DIRECT pass at once): one enter per pass, the cheapest in
//   CPU, and the faster while the CPU is the limit (a spinner beside it, a
//   slow host: 100-116k against 87-95k IOPS at depth 32 on vda, 2026-12-05);
// - Each: submitted as it is written, one enter per I/O, as fio's defaults
//   do: a syscall more per I/O, and up to a quarter more IOPS when the host
//   behind the device is fast and the CPU has time to spare (141-158k
//   against 113-121k, 2026-12-04), because the device starts each request
//   the moment its slot is free instead of when the pass ends.
// Which regime a run is in changes by the hour and within a run, and no
// cheap signal inside the loop tells them apart reliably (a wait that
// returns at once means the CPU is behind in one and the host's interrupt
// batching in the other). So the worker measures: a probe runs the two in
// slices (pass, each, each, pass, ... so that a drift in the device's speed
// cancels), compares each pair's completion rates, and holds the choice for
// a time that doubles while the probes agree. Each costs a syscall per I/O
// whatever it buys, so it has to be shown to pay: it is kept when three
// pairs in four say it is faster by more than `margin`. With two compilers
// beside it (load 8), a median of the pairs chose Each on noise: 0.85x sol's
// IOPS at 1.38x its CPU per I/O on vda at depth 32, where sol (always Pass)
// was the best in all five rounds. But a 25 ms slice on a fast host is noisy
// too (pairs of one probe read 0.80-1.54 where whole runs had Each ahead
// 10 times in 10, 2026-12-07), and three in four alone kept Pass in a fifth
// of the probes where Each was a seventh faster: those runs lost 15-25%. So
// a probe the first pairs leave unsure (their median above 1.0) runs as many
// pairs again and keeps Each when the median of all is above `margin_again`
// and three pairs in four have Each faster at all; one whose median is at or
// under 1.0 goes to the cheaper Pass at once. A probe spends half its slices
// in the mode it will not keep: with the defaults at most ~4% of the run
// (~8% where every probe asks again), i.e. ~1% of IOPS when the two differ by a
// quarter. Where each enter costs the host a lot (a slow hour: Each at
// 0.3-0.6x of Pass on vda at depths 32 and 128, 2026-12-07 08:15), that
// half cost 3% of the run's IOPS, so a probe whose first two pairs both
// read under `clear_loss` stops there with Pass: a pair that far under
// when Each is really faster is rare (pairs read 0.80-1.54 where Each was
// a seventh faster), two in a row rarer still.
//
// A probe that finds Each faster while Pass is held is not enough to switch:
// another probe runs at once, and Each is kept only when it agrees. Beside
// a spinner, and quiet, on vda at depth 32 (2026-12-07 14:45), one probe in
// twelve to fifteen read Each 1.6-1.8x ahead between probes that read it
// 0.5-0.9x: transients, not a regime, and each cost the run a hold of Each
// at 1.5x the CPU per I/O for no IOPS. A regime where Each is really faster
// passes both, a probe later. A second probe half a second later held off
// longer transients too, but cost quiet 3 s runs where Each was ahead 8% of
// their IOPS (0.921x, 8 pairs), where at once cost none (0.988x, 10 pairs).
// Switching back to the cheaper Pass takes one probe.
//
// A pure core over plain numbers: the worker calls next() once per pass,
// which compares one clock value unless a slice ends. One per worker; not
// thread-safe.
#include <cstdint>
#include <vector>

#include "acct/clock.hpp"

namespace ioacct {

enum class Refill : uint8_t { Pass, Each };

class RefillChooser {
 public:
  struct Config {
    Nanos slice_ns = 25'000'000;        // one probe slice, at the least
    uint64_t slice_ios = 1000;          // ... and this many completions (counting noise ~3%
                                        // a slice), unless it has run 10 slice_ns
    unsigned pairs = 4;                 // slices of each mode in one probe
    Nanos hold_min_ns = 1'000'000'000;  // after a probe that changed the choice
    Nanos hold_max_ns = 8'000'000'000;  // after probes that agree, doubling up to this
    double margin = 1.03;               // Each must beat Pass by this ratio
    double margin_again = 1.07;         // ... at the median, where a probe runs a second set of pairs:
                                        // two looks at a tie find Each more often than one
    double clear_loss = 0.8;            // the first two pairs both under this: Pass, the probe cut short
  };
  // What the run did, for the reports.
  struct Stats {
    Nanos each_ns = 0, pass_ns = 0;  // time spent in each mode, probes included
    uint64_t probes = 0;             // probes finished
    uint64_t chose_each = 0;         // of which found Each faster (kept, or to be confirmed)
    uint64_t extended = 0;           // of which ran a second set of pairs (unsure after the first)
    uint64_t cut_short = 0;          // of which stopped after two pairs, Each far behind
    uint64_t unconfirmed = 0;        // of those that found Each while Pass was held, how many the
                                     // next probe did not confirm (Pass kept)
    double last_ratio = 0;           // the last probe's median Each/Pass rate ratio (0: none)
    std::vector<double> ratios;      // every finished probe's median ratio, in order (at most kMaxKept)
  };
  static constexpr size_t kMaxKept = 64;

  explicit RefillChooser(Config c) : c_(c) {}
  RefillChooser() : RefillChooser(Config{}) {}

  // Starts choosing at `now` with `ios` completed so far: a probe first.
  void start(Nanos now, uint64_t ios) noexcept;
  // The mode for the next pass, given the time and the I/Os completed so
  // far. Cheap unless a slice or a hold ends.
  Refill next(Nanos now, uint64_t ios) noexcept {
    if (now < next_event_) return mode_;
    return step(now, ios);
  }
  // Stops the clock at `now` (the window's end): the time since the last
  // event is counted in the mode it ran.
  void finish(Nanos now) noexcept;
  const Stats& stats() const noexcept { return stats_; }
  bool started() const noexcept { return started_; }
  Refill mode() const noexcept { return mode_; }

  // What one probe measured, from its slices' completion rates in the
  // order they ran (pass, each, each, pass, ...): the median of the pairs'
  // Each/Pass ratios (0 when a Pass slice completed nothing), reported.
  static double probe_ratio(const std::vector<double>& rates);
  // Its verdict under `c`. First pairs (`extended` false): Pass when two
  // or more pairs ran and the first two are both under `clear_loss`; Each
  // when at least three pairs in four (rounded up) have Each faster than
  // `margin`, Unsure when not but their median is above 1.0, else Pass. All pairs of
  // a probe run on (`extended`): Each when their median is above
  // `margin_again` and three in four have Each faster at all, else Pass.
  enum class Verdict : uint8_t { Pass, Each, Unsure };
  static Verdict probe_verdict(const std::vector<double>& rates, const Config& c, bool extended);

 private:
  Refill step(Nanos now, uint64_t ios) noexcept;
  Refill decide(Nanos now, uint64_t ios, Verdict v) noexcept;
  void begin_probe(Nanos now, uint64_t ios) noexcept;
  void account(Nanos now) noexcept;
  static Refill slice_mode(unsigned k) { return (k % 4 == 0 || k % 4 == 3) ? Refill::Pass : Refill::Each; }

  Config c_;
  Stats stats_;
  Refill mode_ = Refill::Pass;
  Refill chosen_ = Refill::Pass;
  bool started_ = false, probing_ = false, extended_ = false;
  bool confirming_ = false;         // the probe running now is to confirm the last one's Each
  unsigned slice_ = 0;              // the probe's slice running now
  Nanos next_event_ = UINT64_MAX;   // the end of the slice or hold running now
  Nanos slice_start_ = 0, last_ = 0;
  uint64_t slice_ios_ = 0;
  Nanos hold_ns_ = 0;
  std::vector<double> rates_;       // the probe's slices' rates so far
  std::vector<double> pairs_;       // their pairs' Each/Pass ratios, sorted, at the probe's end
};

}  // namespace ioacct
