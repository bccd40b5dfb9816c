#pragma once
// Plain compare data for the compare cores' unit tests: a variant whose
// repetitions carry only the IOPS a test plants.
#include <string>
#include <utility>
#include <vector>

#include "compare/summary.hpp"

namespace ioacct::test {

inline VariantSummary variant(std::string name, const std::vector<double>& iops) {
  VariantSummary v;
  v.name = std::move(name);
  for (double x : iops) {
    RunMetrics m;
    m.iops = x;
    v.runs.push_back(m);
  }
  return v;
}

}  // namespace ioacct::test
