#include "compare/session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "common/errors.hpp"
#include "common/units.hpp"
#include "engine/engine.hpp"
#include "runner/runner.hpp"

namespace ioacct {

std::string describe_job(const JobSpec& j) {
  const std::string sizes = j.bs_split.empty() ? format_size(j.bs) : "sizes " + bssplit_text(j.bs_split);
  std::string d = fmt::format("{} {} {}, {}, depth {}", rw_name(j.rw), sizes, j.direct ? "O_DIRECT" : "buffered",
                              engine_name(j.engine, j.sync.call), j.depth_per_thread() * j.threads);
  if (j.dsync) d += ", O_DSYNC";
  if (j.uring.sqpoll && j.engine != EngineKind::Psync) d += ", SQPOLL";
  if (j.rate_per_thread() > 0) d += fmt::format(", paced at {} IOPS", format_count(j.rate_per_thread() * j.threads));
  return d;
}

namespace {

size_t find_baseline(const std::string& given, const std::vector<PreparedVariant>& p) {
  if (given.empty()) return 0;
  std::string names;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i].variant.name == given) return i;
    names += fmt::format("{}'{}'", i ? ", " : "", p[i].variant.name);
  }
  throw UsageError(fmt::format("--baseline: '{}' is not a variant; the variants are {}", given, names));
}

}  // namespace

CompareSession::CompareSession(std::vector<PreparedVariant> variants, const std::string& baseline)
    : variants_(std::move(variants)) {
  for (const auto& p : variants_) {
    if (p.job.targets != variants_[0].job.targets)
      throw UsageError(fmt::format("variant '{}': names other targets; every variant runs on the same targets",
                                   p.variant.name));
    if (p.job.targets.empty() && p.job.temp_size != variants_[0].job.temp_size)
      throw UsageError(fmt::format("--size: variant '{}' asks for another size of the temporary file; every "
                                   "variant shares one, so give --size once", p.variant.name));
    if (!p.job.dump_intervals.empty()) throw UsageError("--dump-intervals: not available with compare");
  }
  baseline_ = find_baseline(baseline, variants_);
  for (const auto& p : variants_) check_engine_available(p.job.engine, p.job.uring, p.job.depth_per_thread());
  temp_ = variants_[0].job.targets.empty();
}

void CompareSession::open(const std::function<bool()>& should_stop) {
  targets_.clear();
  targets_.resize(variants_.size());
  if (temp_) {
    const auto mover = std::find_if(variants_.begin(), variants_.end(),
                                    [](const PreparedVariant& p) { return p.job.engine != EngineKind::Nop; });
    shared_ = open_targets(mover == variants_.end() ? variants_[0].job : mover->job, should_stop);
  }
  // Named targets are checked here for every variant, one at a time (a
  // device a variant writes to is held O_EXCL while open), and opened again
  // for each run.
  for (size_t i = 0; i < variants_.size(); ++i) {
    targets_[i] = temp_ ? reopen_targets(shared_, variants_[i].job) : open_targets(variants_[i].job, should_stop);
    check_targets(variants_[i].job, targets_[i]);
    if (i == 0) info_ = target_infos(targets_[0]);
    const bool full = std::any_of(variants_.begin(), variants_.end(),
                                  [](const PreparedVariant& p) { return p.job.acct == AcctLevel::Full; });
    if (i == 0 && full) tracker_ = attach_run_tracker(targets_[0]);
    if (!temp_) targets_[i] = Targets();
  }
}

void CompareSession::run(CompareResult& c, const CompareHooks& hooks, const RoundPolicy& rounds) {
  c.baseline = baseline_;
  c.targets = info_;
  for (const auto& p : variants_) {
    VariantSummary s;
    s.name = p.variant.name;
    s.args = p.variant.args;
    s.description = describe_job(p.job);
    s.job = std::make_shared<const JobSpec>(p.job);
    if (p.job.rate_per_thread() > 0) s.rate_iops = p.job.rate_per_thread() * p.job.threads;
    c.variants.push_back(std::move(s));
  }

  auto schedule = interleave(variants_.size(), c.repeat, c.warmup);
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  auto look = [&] { return hooks.wait_stop_signal && hooks.wait_stop_signal(0); };
  RunHooks run_hooks;
  run_hooks.wait_stop_signal = hooks.wait_stop_signal;
  run_hooks.anatomy_slices = false;  // a variant's IOPS are all with its programs, or all without
  unsigned measured_rounds = c.repeat;
  double measured_s = 0;  // time in measured runs: the next round's estimate
  size_t measured_runs = 0;
  // The advice for an unresolved verdict says how long its repetitions take.
  auto note_round_time = [&] {
    if (measured_runs)
      c.rule.more.round_s = measured_s / static_cast<double>(measured_runs) * static_cast<double>(variants_.size());
  };
  for (size_t k = 0; k < schedule.size(); ++k) {
    const RunSlot& slot = schedule[k];
    const PreparedVariant& p = variants_[slot.variant];
    if (hooks.on_run)
      hooks.on_run(k, schedule.size(), slot, p,
                   k ? elapsed() / static_cast<double>(k) * static_cast<double>(schedule.size() - k) : -1.0);
    const double run_start = elapsed();
    Targets named;
    if (!temp_) named = open_targets(p.job, look);
    RunResult r = run_bench(p.job, temp_ ? targets_[slot.variant] : named, run_hooks, tracker_ ? &*tracker_ : nullptr);
    if (r.interrupted || (hooks.stop_received && hooks.stop_received())) {
      c.interrupted = true;
      break;
    }
    if (r.stop_reason == StopReason::Errors || r.stop_reason == StopReason::Fatal)
      throw RuntimeError(fmt::format("variant '{}': the run stopped: {}", p.variant.name, r.first_error));
    if (slot.warmup) continue;
    measured_s += elapsed() - run_start;
    ++measured_runs;
    c.variants[slot.variant].engine_desc = r.engine_desc;
    c.variants[slot.variant].runs.push_back(measure(r));
    if (!rounds.until_resolved || k + 1 != schedule.size()) continue;
    // The schedule is done: with --until-resolved, one more round of every
    // variant while a verdict is open and no bound is reached.
    note_round_time();
    summarize(c);
    if (const auto stop = next_round(c, measured_rounds, elapsed(), measured_s, rounds)) {
      c.rounds_note = round_stop_text(*stop, c, measured_rounds, rounds.budget_text);
      break;
    }
    if (hooks.on_round) hooks.on_round(measured_rounds + 1, open_verdicts(c));
    const auto round = round_slots(variants_.size(), c.warmup + measured_rounds, measured_rounds, false);
    schedule.insert(schedule.end(), round.begin(), round.end());
    ++measured_rounds;
  }
  c.repeat = measured_rounds;
  c.wall_s = elapsed();
  note_round_time();
  summarize(c);
}

}  // namespace ioacct
