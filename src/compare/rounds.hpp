#pragma once
// `--until-resolved [MAX]` and `--budget DURATION`: whether to run another
// interleaved round of every variant. Pure: the session asks after each
// round, with the verdicts so far and the time taken.
#include <optional>
#include <string>

#include "compare/summary.hpp"

namespace ioacct {

struct RoundPolicy {
  bool until_resolved = false;
  unsigned max_rounds = 0;          // measured rounds in all, --repeat's included
  std::optional<double> budget_s;   // the whole comparison, warm-ups included
  std::string budget_text;          // as typed, for messages ("2m")
};
inline constexpr unsigned kDefaultMaxRounds = 30;

// Verdicts against the baseline still open: not resolved (with every
// repetition). Not-measured ones cannot be resolved by more rounds.
size_t open_verdicts(const CompareResult& c);

enum class RoundStop { Resolved, MaxRounds, Budget };
// After `rounds` measured rounds, `elapsed_s` since the start, of which the
// measured rounds took `rounds_s`: none to run another round, else why not.
// A round is not started when the mean round so far would end it past the
// budget.
std::optional<RoundStop> next_round(const CompareResult& c, unsigned rounds, double elapsed_s, double rounds_s,
                                    const RoundPolicy& p);

// "every verdict resolved after 9 rounds", "MAX rounds reached with 1 verdict
// open", "--budget 2m reached with 2 verdicts open": for stderr and the notes.
std::string round_stop_text(RoundStop why, const CompareResult& c, unsigned rounds, const std::string& budget);

}  // namespace ioacct
