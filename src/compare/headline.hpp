#pragma once
// The one-sentence answer at the top of every compare report: for a preset,
// the answer to its question from the verdicts and the measured figures; for
// any other matrix, each variant against the baseline. Pure; an unresolved
// verdict is said to be unresolved, never rounded into an answer.
#include <string>

#include "compare/summary.hpp"

namespace ioacct {

// Needs summarize()'s figures and outliers (it calls decide() itself for
// pairs that are not against the baseline).
std::string headline(const CompareResult& c);

// "SUBJECT completes 0.70x the I/Os of OBJECT (95% CI 0.64-0.77x)", or as
// many, or "SUBJECT against OBJECT is not resolved ...": the verdict as a
// clause of a sentence; with the verdict without outliers appended when that
// one differs.
std::string claim(const std::string& subject, const std::string& object, const Verdict& v, const VerdictRule& rule,
                  const Verdict* without_outliers = nullptr);

}  // namespace ioacct
