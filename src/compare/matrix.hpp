#pragma once
// The comparison matrix: which variants to run, and in which order. Pure:
// works on the command line's words, knows bench's options only through the
// OptionKinds it is given, opens nothing.
#include <functional>
#include <string>
#include <vector>

namespace ioacct {

// One variant: a name for the table and the bench words that make it.
struct Variant {
  std::string name;
  std::vector<std::string> args;  // bench options and targets, as typed
};

// One comma-list option: `--engine psync,uring` or, for a flag, `--sqpoll off,on`.
struct Axis {
  std::string option;               // "--engine"
  bool flag = false;                // values are on/off
  std::vector<std::string> values;  // "psync", "uring" / "off", "on"
};

struct Matrix {
  std::vector<std::string> fixed;  // words every variant gets
  std::vector<Axis> axes;
};

// What the matrix must know about bench's options.
struct OptionKinds {
  std::function<bool(const std::string&)> known;     // "--engine": a bench option
  std::function<bool(const std::string&)> is_flag;   // takes no value
  std::function<bool(const std::string&)> is_list;   // its value is itself a comma list (--cpus)
};

// Splits the words into fixed words and axes. A value with a comma is an
// axis (unless is_list); a flag followed by on/off words is an axis ("on"
// alone: the flag; "off": left out). Throws UsageError naming the option for
// an axis given twice, an empty list item, or an on/off list with repeats.
Matrix parse_matrix(const std::vector<std::string>& words, const OptionKinds& kinds);

// The cartesian product of the axes, the first axis varying slowest, each
// variant named "option=value ..." (leading dashes dropped); one unnamed
// variant with the fixed words when there are no axes. `configs` (NAME,
// words), when given, multiply with the axes: config first.
std::vector<Variant> expand(const Matrix& m, const std::vector<std::pair<std::string, std::vector<std::string>>>& configs);

// One scheduled run.
struct RunSlot {
  size_t variant = 0;
  unsigned repetition = 0;  // 0-based within warm-up or measured runs
  bool warmup = false;
};

// One round: a run of every variant, round k starting at variant k mod n
// (ABC, BCA, CAB), so that what comes with a place in the round (first after
// a pause, last before one) falls on every variant alike. `k` counts warm-up
// and measured rounds together; `repetition` is the slots' own index.
std::vector<RunSlot> round_slots(size_t variants, unsigned k, unsigned repetition, bool warmup);

// The order of runs: `warmup` rounds then `repeat` rounds (round_slots), never
// AAABBB, so drift in the machine hits every variant alike.
std::vector<RunSlot> interleave(size_t variants, unsigned repeat, unsigned warmup);

// Splits "--iodepth 1 --wait spin" at spaces (no quoting: bench values never
// contain spaces).
std::vector<std::string> split_words(const std::string& s);

}  // namespace ioacct
