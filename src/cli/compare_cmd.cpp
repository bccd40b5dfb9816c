#include "cli/compare_cmd.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <set>

#include "acct/cpu_power.hpp"
#include "acct/run_context.hpp"
#include "cli/bench_cmd.hpp"
#include "cli/bench_options.hpp"
#include "cli/cli.hpp"
#include "cli/inputs.hpp"
#include "cli/option_rows.hpp"
#include "cli/signals.hpp"
#include "cli/usage_errors.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/output.hpp"
#include "common/units.hpp"
#include "compare/matrix.hpp"
#include "compare/presets.hpp"
#include "compare/saved.hpp"
#include "compare/session.hpp"
#include "compare/summary.hpp"
#include "report/compare_report.hpp"
#include "report/html_report.hpp"
#include "report/report.hpp"

namespace ioacct {
namespace {

// Bench's own parser and validation, one variant at a time: the same words
// give the same JobSpec (and the same messages) as `ioacct bench WORDS`.
JobSpec parse_variant(const Variant& v) {
  CLI::App root;
  BenchArgs args;
  CLI::App* b = add_bench_command(root, args);
  // Later words win, so a --config (or preset) value overrides a common one.
  for (CLI::Option* o : b->get_options()) o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::vector<std::string> words = {"bench"};
  words.insert(words.end(), v.args.begin(), v.args.end());
  std::reverse(words.begin(), words.end());  // CLI11 takes them last-first
  try {
    root.parse(words);
  } catch (const CLI::ParseError& e) {
    throw UsageError(fmt::format("variant '{}': {}", v.name, usage_error_message(e, root, b, "ioacct compare")));
  }
  args.iodepth_given = b->count("--iodepth") > 0;
  // The fleet's options make one bench run a part of several hosts' run.
  for (const BenchOption& r : bench_fleet_rows())
    if (b->count(std::string(long_name(r.names))))
      throw UsageError(fmt::format("variant '{}': {}: an option of one bench run (ioacct merge's inputs); compare runs "
                                   "its variants one after another", v.name, long_name(r.names)));
  try {
    return to_job(args);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("variant '{}': {}", v.name, e.what()));
  }
}

OptionKinds bench_option_kinds() {
  auto app = std::make_shared<CLI::App>();
  auto args = std::make_shared<BenchArgs>();
  CLI::App* b = add_bench_command(*app, *args);
  auto find = [app, args, b](const std::string& name) -> const CLI::Option* {
    for (const CLI::Option* o : b->get_options())
      if (o->check_name(name)) return o;
    return nullptr;
  };
  return {[find](const std::string& n) { return find(n) != nullptr; },
          [find](const std::string& n) { const auto* o = find(n); return o && o->get_type_size() == 0; },
          [](const std::string& n) { return n == "--cpus"; }};
}

std::vector<std::pair<std::string, std::vector<std::string>>> parse_configs(const std::vector<std::string>& given) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  std::set<std::string> names;
  for (const auto& c : given) {
    const size_t eq = c.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(fmt::format("--config: '{}' is not NAME=OPTIONS (e.g. --config 'spin=--wait spin')", c));
    std::string name = c.substr(0, eq);
    if (!names.insert(name).second) throw UsageError(fmt::format("--config: the name '{}' is given twice", name));
    out.emplace_back(std::move(name), split_words(c.substr(eq + 1)));
  }
  return out;
}

constexpr unsigned kDefaultRepeat = 5;

std::string read_saved(const std::string& path) {
  std::string error;
  auto text = read_user_file(path, 1u << 30, error);
  if (!text) throw UsageError(fmt::format("{}: cannot read: {}", path, error));
  return *std::move(text);
}

// The table, the JSON and the report, for a live or a saved comparison.
void write_results(const CompareArgs& a, Format format, const CompareResult& c, const nlohmann::json& context) {
  write_output(render_compare(format, c, context), a.output);
  if (!a.report.empty()) write_atomically(a.report, html_report(c, compare_json(c, context)), "--report");
}

// `ioacct compare A.json B.json ...`: saved bench and compare documents, with
// the same statistics, table and report as a live comparison.
int run_saved_compare(const CompareArgs& a, Format format, const std::vector<std::string>& argv, double margin) {
  for (const auto& [flag, given] : {std::pair<const char*, bool>{"--preset", !a.preset.empty()},
                                    {"--config", !a.configs.empty()}, {"--repeat", !a.repeat.empty()},
                                    {"--warmup", !a.warmup.empty()}, {"--until-resolved", a.until_resolved != "-"},
                                    {"--budget", !a.budget.empty()}})
    if (given)
      throw UsageError(fmt::format("{}: applies to runs made now, not to saved files; give it with bench options, "
                                   "or leave it out to compare the files", flag));
  const auto words = parse_saved_words(a.words);
  std::vector<std::vector<SavedDoc>> docs;
  for (const auto& w : words) {
    docs.emplace_back();
    for (const auto& word : w.files)
      for (const auto& f : expand_input(word, false)) docs.back().push_back(parse_saved(f, read_saved(f)));
  }
  SavedCompare s = saved_compare(words, docs);
  CompareResult& c = s.result;
  c.argv = argv;
  c.warnings = s.warnings;
  if (!a.margin.empty()) c.rule.margin = margin;
  if (!a.baseline.empty()) {
    const auto it = std::find_if(c.variants.begin(), c.variants.end(), [&](const VariantSummary& v) { return v.name == a.baseline; });
    if (it == c.variants.end()) {
      std::string names;
      for (const auto& v : c.variants) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", v.name);
      throw UsageError(fmt::format("--baseline: '{}' is not a variant; the variants are {}", a.baseline, names));
    }
    c.baseline = static_cast<size_t>(it - c.variants.begin());
  }
  if (c.variants.size() == 1)
    fmt::print(stderr, "warning: only one variant, so nothing to compare it with; give two or more files\n");
  for (const auto& w : s.warnings) fmt::print(stderr, "{}\n", w);
  summarize(c);
  nlohmann::json context = s.context ? *s.context : nlohmann::json::object();
  context["command_line"] = argv;
  write_results(a, format, c, context);
  return 0;
}

// --config NAME=OPTIONS: one word each time, its options quoted in it.
void one_config_each(CLI::Option* o) { o->allow_extra_args(false); }
// --until-resolved [MAX]: MAX may be left out.
void value_optional(CLI::Option* o) { o->expected(0, 1); }

// compare's own options (cli/option_rows.hpp); every other word is bench's.
constexpr OptionRow<CompareArgs> kCompareRows[] = {
  {"--preset", "NAME", "A named matrix: qd1, sqpoll, libaio or util", &CompareArgs::preset},
  {"--config", "NAME=OPTIONS", "A variant: NAME=OPTIONS (bench options), given once per variant",
   &CompareArgs::configs, nullptr, one_config_each},
  {"--repeat", "N", "Measured runs of each variant, interleaved ABC BCA CAB (default 5)", &CompareArgs::repeat},
  {"--until-resolved", "[MAX]",
   "After --repeat, add interleaved rounds until every verdict is resolved, up to MAX rounds in all (default 30)",
   &CompareArgs::until_resolved, nullptr, value_optional},
  {"--budget", "DURATION", "With --until-resolved (implied): start no round that would end past DURATION",
   &CompareArgs::budget},
  {"--margin", "PCT", "'no difference' is an IOPS ratio interval inside ±PCT (default 5%)", &CompareArgs::margin},
  {"--warmup", "N", "Rounds of every variant run first and discarded (default 0)", &CompareArgs::warmup},
  {"--baseline", "VARIANT", "The variant the ratio column is against (default the first)", &CompareArgs::baseline},
  format_row<CompareArgs>("console, json, csv or markdown (default console)"),
  output_row<CompareArgs>("Write the table to FILE instead of stdout"),
  report_row<CompareArgs>("Also write a self-contained HTML report to FILE"),
  progress_row<CompareArgs>("Print which run of how many, and the ETA, even when stderr is not a terminal"),
};

}  // namespace

CLI::App* add_compare_command(CLI::App& app, CompareArgs& a) {
  CLI::App* c = add_command(
      app, "compare",
      "Run variants of a bench workload interleaved, repeated, and compare them side by side.",
      "Every 'ioacct bench' option may be given (see 'ioacct bench --help'); a comma list makes an axis of the\n"
      "matrix and every combination is a variant: --engine psync,uring --iodepth 1,32 --sqpoll off,on.\n"
      "Targets are shared by every variant; the default temporary file is created once.\n"
      "Presets: qd1 (psync vs io_uring waits at depth 1), sqpoll (SQPOLL at depth 1 and 32, accounting cost),\n"
      "libaio (io_uring vs libaio at depth 1 and 32), util (%util vs busy% at paced depth-1 reads and O_DSYNC writes).\n"
      "Saved runs: 'ioacct compare A.json B.json' compares bench or compare JSON files; NAME=A1.json,A2.json makes\n"
      "bench runs the repetitions of one variant. See docs/cli.md.",
      a, kCompareRows);
  c->allow_extras();
  return c;
}

int run_compare_command(const CompareArgs& a, const std::vector<std::string>& argv) {
  const Format format = parse_format("--format", a.format, formats_of(compare_sinks()));
  if (!a.output.empty()) check_output_writable("--output", a.output);
  if (!a.report.empty()) check_output_writable("--report", a.report);
  const double margin = a.margin.empty() ? VerdictRule{}.margin : parse_percent("--margin", a.margin);
  if (are_saved_words(a.words)) return run_saved_compare(a, format, argv, margin);

  const unsigned repeat = a.repeat.empty() ? kDefaultRepeat : static_cast<unsigned>(parse_count("--repeat", a.repeat));
  if (repeat < 1 || repeat > kMaxRepeat)
    throw UsageError(fmt::format("--repeat: {} is out of range (1 to {})", a.repeat, kMaxRepeat));
  const unsigned warmup = a.warmup.empty() ? 0 : static_cast<unsigned>(parse_count("--warmup", a.warmup));
  if (warmup > 100) throw UsageError(fmt::format("--warmup: {} is out of range (0 to 100)", a.warmup));
  RoundPolicy rounds;
  rounds.until_resolved = a.until_resolved != "-" || !a.budget.empty();
  rounds.max_rounds = std::max(repeat, kDefaultMaxRounds);
  if (a.until_resolved != "-" && !a.until_resolved.empty()) {
    const uint64_t max = parse_count("--until-resolved", a.until_resolved);
    if (max < repeat || max > kMaxRepeat)
      throw UsageError(fmt::format("--until-resolved: {} is out of range ({} to {}: at least --repeat, {})", a.until_resolved,
                                   repeat, kMaxRepeat, repeat));
    rounds.max_rounds = static_cast<unsigned>(max);
  }
  if (!a.budget.empty()) {
    const auto b = parse_duration("--budget", a.budget);
    if (b.count() <= 0) throw UsageError(fmt::format("--budget: {} is no time at all", a.budget));
    rounds.budget_s = static_cast<double>(b.count()) / 1e9;
    rounds.budget_text = a.budget;
  }

  CompareResult c;
  c.repeat = repeat;
  c.repeat_asked = repeat;
  c.warmup = warmup;
  c.argv = argv;
  c.rule.margin = margin;
  c.rule.more.budget_s = rounds.budget_s;
  c.cpu_power = read_cpu_power();
  std::vector<std::string> words = a.words;
  auto configs = parse_configs(a.configs);
  if (!a.preset.empty()) {
    const Preset* p = find_preset(a.preset);
    if (!p) throw UsageError(fmt::format("--preset: '{}' is not one of {}", a.preset, preset_names()));
    if (!configs.empty()) throw UsageError("--config: cannot be combined with --preset (a preset is a set of configs)");
    c.preset = p->name;
    c.question = p->question;
    c.explanation = p->explanation;
    words.insert(words.begin(), p->fixed.begin(), p->fixed.end());
    configs = p->configs;
  }
  const Matrix m = parse_matrix(words, bench_option_kinds());
  std::vector<PreparedVariant> prepared;
  for (auto& v : expand(m, configs)) {
    // Output belongs to the comparison; bench would take it and ignore it.
    for (const auto& w : v.args)
      if (w == "--format" || w.rfind("--format=", 0) == 0 || w == "-o" || w == "--output" || w.rfind("--output=", 0) == 0 ||
          w == "--report" || w.rfind("--report=", 0) == 0)
        throw UsageError(fmt::format("{}: give it once, for the comparison, not inside a variant", w.substr(0, w.find('='))));
    JobSpec j = parse_variant(v);
    prepared.push_back({std::move(v), std::move(j)});
  }
  if (prepared.size() == 1)
    fmt::print(stderr, "warning: only one variant, so nothing to compare it with; give a comma list "
               "(--iodepth 1,32), --config NAME=OPTIONS twice, or --preset\n");
  CompareSession session(std::move(prepared), a.baseline);

  StopSignals signals;  // before any thread exists
  try {
    session.open([&] { return signals.wait(0); });
  } catch (const RuntimeError&) {
    if (!signals.received()) throw;
    fmt::print(stderr, "ioacct: interrupted before the first run\n");
    return 128 + signals.received();
  }

  const bool show_progress = a.progress || isatty(STDERR_FILENO);
  CompareHooks hooks;
  hooks.wait_stop_signal = [&](int ms) { return signals.wait(ms); };
  hooks.stop_received = [&] { return signals.received() != 0; };
  if (show_progress)
    hooks.on_run = [&](size_t k, size_t runs, const RunSlot& slot, const PreparedVariant& p, double eta_s) {
      fmt::print(stderr, "ioacct compare: run {}/{}: '{}' ({} {}/{}){}\n", k + 1, runs, p.variant.name,
                 slot.warmup ? "warm-up" : "repetition", slot.repetition + 1,
                 slot.warmup ? warmup : std::max(repeat, slot.repetition + 1),
                 eta_s >= 0 ? fmt::format(", ETA {:.0f}s", eta_s) : "");
    };
  // Always said: it changes how long the comparison takes.
  hooks.on_round = [&](unsigned round, size_t open) {
    fmt::print(stderr, "ioacct compare: round {} added: {} verdict{} not resolved yet (--until-resolved)\n", round, open,
               open == 1 ? "" : "s");
  };
  session.run(c, hooks, rounds);
  if (!c.rounds_note.empty()) fmt::print(stderr, "ioacct compare: {}\n", c.rounds_note);

  write_results(a, format, c, run_context_json(gather_run_context(), argv));
  if (c.interrupted) {
    fmt::print(stderr, "ioacct: interrupted; the table covers the runs that finished\n");
    return signals.received() ? 128 + signals.received() : 130;
  }
  return 0;
}

}  // namespace ioacct
