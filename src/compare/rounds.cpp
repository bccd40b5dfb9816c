#include "compare/rounds.hpp"

#include <fmt/format.h>

namespace ioacct {

size_t open_verdicts(const CompareResult& c) {
  size_t n = 0;
  for (const auto& v : c.variants) n += v.verdict.kind == VerdictKind::Unresolved;
  return n;
}

std::optional<RoundStop> next_round(const CompareResult& c, unsigned rounds, double elapsed_s, double rounds_s,
                                    const RoundPolicy& p) {
  if (!open_verdicts(c)) return RoundStop::Resolved;
  if (rounds >= p.max_rounds) return RoundStop::MaxRounds;
  if (p.budget_s && rounds && elapsed_s + rounds_s / rounds > *p.budget_s) return RoundStop::Budget;
  return std::nullopt;
}

std::string round_stop_text(RoundStop why, const CompareResult& c, unsigned rounds, const std::string& budget) {
  const size_t open = open_verdicts(c);
  const std::string left = fmt::format("{} verdict{} not resolved", open, open == 1 ? "" : "s");
  switch (why) {
    case RoundStop::Resolved: return fmt::format("every verdict resolved after {} round{}", rounds, rounds == 1 ? "" : "s");
    case RoundStop::MaxRounds: return fmt::format("{} rounds, the most --until-resolved allows, with {}", rounds, left);
    case RoundStop::Budget: return fmt::format("--budget {} reached after {} rounds, with {}", budget, rounds, left);
  }
  return "";
}

}  // namespace ioacct
