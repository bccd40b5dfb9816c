#pragma once
// compare --anatomy: which stage's time per I/O differs between a variant and
// the baseline by more than the stages' own run-to-run spread. Pure, over the
// repetitions' figures. A stage is named only when the interval of its shift
// excludes 0: the largest median difference alone is always some stage, even
// when every stage moves that much from one repetition to the next.
#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include "trace/anatomy_split.hpp"

namespace ioacct {

// One repetition's time per I/O in each stage, ns (none where it had none).
using StageTimes = std::array<std::optional<double>, kAnatomyStages>;

struct StageDiff {
  AnatomyStage stage = AnatomyStage::Submit;
  double by_ns = 0;                       // this variant's median minus the baseline's
  std::optional<double> low_ns, high_ns;  // the shift's interval; none when the repetitions are too few
  bool stands_out = false;                // the interval excludes 0
  size_t n = 0, m = 0;                    // the variant's and the baseline's repetitions (x and y)
};

// x: the variant's repetitions, y: the baseline's, each a run that measured
// the anatomy. Per stage, the difference of the medians of the repetitions
// that measured it (a side that never did counts 0: psync and io_uring
// stages bound the same points, so they line up by position), and the
// distribution-free interval of the shift between the two sides (the k-th
// smallest and largest of the n*m pairwise differences, k from shift_rank,
// the verdict's rule turned to differences). Returns the stage with the
// largest difference among those that stand out, or, when none does, the
// largest of all with stands_out false. None when neither side measured a stage.
std::optional<StageDiff> stage_that_differs(const std::vector<StageTimes>& x, const std::vector<StageTimes>& y,
                                            double level);

// The fewest repetitions on each side that give a shift interval at `level`
// (4 at 95%).
unsigned repetitions_for_interval(double level);

}  // namespace ioacct
