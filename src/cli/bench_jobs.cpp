#include "cli/bench_jobs.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <set>

#include "cli/usage_errors.hpp"
#include "common/errors.hpp"
#include "workload/fio_file.hpp"

namespace ioacct {
namespace {

std::string option_name(const CLI::Option* o) {
  return o->get_lnames().empty() ? o->get_single_name() : "--" + o->get_lnames().front();
}

// Options that come in on/off pairs: the one given last in a job's words
// clears the other, which the run's words may have set.
void settle_pairs(BenchArgs& a, const std::vector<std::string>& given) {
  auto has = [&](const char* n) { return std::find(given.begin(), given.end(), n) != given.end(); };
  if (has("--direct")) a.buffered = false;
  if (has("--buffered")) a.direct = false;
  if (has("--single-issuer")) a.no_single_issuer = false;
  if (has("--no-single-issuer")) a.single_issuer = false;
  if (has("--defer-taskrun")) a.no_defer_taskrun = false;
  if (has("--no-defer-taskrun")) a.defer_taskrun = false;
  if (has("--coop-taskrun")) a.no_coop_taskrun = false;
  if (has("--no-coop-taskrun")) a.coop_taskrun = false;
  if (has("--rate")) a.rate_iops.clear();
  if (has("--rate-iops")) a.rate.clear();
  if (has("--fsync")) a.fdatasync.clear();
  if (has("--fdatasync")) a.fsync.clear();
}

// A job's name: it names the job in every report.
void check_name(const std::string& name, const std::string& where) {
  if (name.empty() || name.size() > 64 || name == "global" ||
      !std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '+';
      }))
    throw UsageError(fmt::format("{}: '{}' is not a job name: letters, digits, '_', '-', '.' or '+', at most 64, "
                                 "and not 'global'", where, name));
}

// Options that --fio leaves to the command line: the run's own, the write
// consent, and where the temporary file goes.
bool fio_cli_option(const std::string& name) {
  return is_run_option(name) || name == "--destroy-data" || name == "--dir" || name == "--fio";
}

JobSpec job_from(const BenchArgs& base, const std::vector<std::string>& words, const std::string& name,
                 const std::string& where) {
  const BenchArgs a = parse_bench_words(base, words, where);
  for (const std::string& g : a.given)
    if (is_run_option(g))
      throw UsageError(fmt::format("{}: {} is an option of the whole run, not of one job; give it outside the jobs",
                                   where, g));
  try {
    JobSpec j = to_job(a);
    j.name = name;
    return j;
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", where, e.what()));
  }
}

}  // namespace

bool is_run_option(const std::string& name) {
  static const std::set<std::string> kRun = {"--ramp",  "--acct",   "--log-interval", "--max-errors",
                                             "--format", "--output", "--report",       "--progress",
                                             "--dump-intervals", "--job", "--fio", "--start-at", "--tag"};
  return kRun.count(name) > 0;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
      else cur += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (quote) throw UsageError(fmt::format("--job: '{}': a quote ({}) is not closed", text, quote));
  if (in_word) out.push_back(std::move(cur));
  return out;
}

BenchArgs parse_bench_words(const BenchArgs& base, const std::vector<std::string>& words, const std::string& where) {
  BenchArgs a = base;
  a.given.clear();
  CLI::App root;
  CLI::App* b = add_bench_command(root, a);
  // Later words win, as they do for compare's variants.
  for (CLI::Option* o : b->get_options())
    if (option_name(o) != "--job") o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::vector<std::string> argv = {"bench"};
  argv.insert(argv.end(), words.begin(), words.end());
  std::reverse(argv.begin(), argv.end());  // CLI11 takes them last-first
  try {
    root.parse(argv);
  } catch (const CLI::ParseError& e) {
    throw UsageError(fmt::format("{}: {}", where, usage_error_message(e, root, b, "ioacct bench")));
  }
  for (const CLI::Option* o : b->get_options())
    if (o->count()) a.given.push_back(option_name(o));
  settle_pairs(a, a.given);
  a.iodepth_given = base.iodepth_given || b->count("--iodepth") > 0;
  return a;
}

std::vector<JobSpec> to_jobs(const BenchArgs& a, std::vector<FioLogs>* logs) {
  if (a.jobs.empty() && a.fio.empty()) return {to_job(a)};
  if (!a.jobs.empty() && !a.fio.empty()) throw UsageError("--job: give --job or --fio, not both");
  std::vector<JobSpec> jobs;
  BenchArgs base = a;
  base.jobs.clear();
  base.fio.clear();
  if (!a.jobs.empty()) {
    for (const std::string& spec : a.jobs) {
      const size_t colon = spec.find(':');
      if (colon == std::string::npos)
        throw UsageError(fmt::format("--job: '{}' is not NAME:OPTIONS (e.g. 'reader:--rw randread --iodepth 1')", spec));
      const std::string name = spec.substr(0, colon);
      check_name(name, "--job");
      jobs.push_back(job_from(base, split_words(std::string_view(spec).substr(colon + 1)), name,
                              fmt::format("--job {}", name)));
    }
  } else {
    for (const std::string& g : a.given)
      if (!fio_cli_option(g))
        throw UsageError(fmt::format("{}: with --fio the job file says what each job does; the command line takes "
                                     "the run's options (--ramp, --acct, --format, -o, --report, ...), --destroy-data "
                                     "and --dir", g == "targets" ? "TARGET" : g));
    const std::vector<FioSection> sections = read_fio_file(a.fio, system_fio_env());
    const uint64_t fresh = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    const FioRun run = map_fio(sections, fresh);
    // The file's run options, unless the command line gave them.
    std::vector<std::string> run_words;
    for (size_t i = 0; i + 1 < run.run_words.size(); i += 2)
      if (std::find(a.given.begin(), a.given.end(), run.run_words[i]) == a.given.end()) {
        run_words.push_back(run.run_words[i]);
        run_words.push_back(run.run_words[i + 1]);
      }
    if (!run_words.empty()) {
      std::vector<std::string> given = base.given;
      base = parse_bench_words(base, run_words, a.fio);
      base.given = given;
    }
    for (const FioJob& fj : run.jobs) {
      jobs.push_back(job_from(base, fj.words, fj.name, fmt::format("{}:{}: [{}]", fj.file, fj.line, fj.name)));
      if (logs) logs->push_back(fj.logs);
    }
  }
  std::set<std::string> names;
  for (const JobSpec& j : jobs)
    if (!names.insert(j.name).second)
      throw UsageError(fmt::format("--job: two jobs are named '{}'; give each its own name", j.name));
  for (const JobSpec& j : jobs) {
    if (jobs.size() > 1 && j.verify)
      throw UsageError(fmt::format("--verify: checks one job's writes; job {} is one of {} (run it alone)", j.name,
                                   jobs.size()));
  }
  return jobs;  // a stonewall on the first job waits for nothing, as in fio
}

}  // namespace ioacct
