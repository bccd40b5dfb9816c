// Mapping a fio job file's options to `ioacct bench` words (fio_file.hpp).
// Every option is either one of fio_options()' rows, mapped or known to
// change nothing ioacct measures (docs/fio.md's table is made from the same
// rows), or one error line naming it; never dropped.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/errors.hpp"
#include "workload/fio_file.hpp"
#include "workload/fio_options.hpp"

namespace ioacct {
namespace {

// One job: the [global]s above it, then its own options; the last setting of
// an option (under any of its names) wins.
class JobMapper {
 public:
  JobMapper(std::string name, std::vector<FioProblem>& errors) : name_(std::move(name)), values_(errors) {}

  void add(const FioOption& o) {
    bool inverted = false;
    const FioOptionRow* row = fio_option(o.key, inverted);
    if (!row) {
      values_.bad(o,
                  "not an option ioacct maps (docs/fio.md lists those it does); remove it, or run this job with fio");
      return;
    }
    set_[row] = {&o, inverted};
  }

  // The words, or nothing when an option was bad (the errors say which).
  // Options are decoded in the table's order (kb_base first), each alone;
  // fio_words() then checks what depends on several.
  std::optional<FioJob> map(const std::string& file, unsigned line, uint64_t fresh_seed) {
    const size_t problems_before = values_.problems();
    FioSpec spec;
    spec.file = file;
    spec.line = line;
    spec.name = name_;
    values_.kb_base = 1024;
    for (const FioOptionRow& row : fio_options())
      if (auto it = set_.find(&row); it != set_.end() && row.decode) row.decode(values_, it->second, spec);
    FioJob job;
    job.file = file;
    job.line = line;
    job.name = spec.name;
    job.words = fio_words(spec, values_, fresh_seed);
    job.logs = spec.logs;
    job.logs.averaged = spec.log_avg_ms.has_value();
    if (spec.log_at) {
      log_at_ = spec.log_at;
      if (spec.rw == "rw" || spec.rw == "randrw")
        values_.bad(*spec.log_at, fmt::format("rw={}: ioacct's time series does not keep reads and writes apart; "
                                              "log a job that does one of them", spec.rw));
    }
    // Options of the whole run: map_fio checks that every job has the same.
    if (spec.ramp_ns) run_opts_["--ramp"] = {fmt::format("{}ns", *spec.ramp_ns), spec.ramp_at};
    if (spec.log_avg_ms) run_opts_["--log-interval"] = {fmt::format("{}ms", *spec.log_avg_ms), spec.log_avg_at};
    if (spec.gtod_reduce_at) run_opts_["--acct"] = {"basic", spec.gtod_reduce_at};
    if (spec.do_verify) verify_at_ = spec.verify_at;
    if (values_.problems() != problems_before) return std::nullopt;
    return job;
  }

  struct RunOpt {
    std::string value;
    const FioOption* where;
  };
  const std::map<std::string, RunOpt>& run_opts() const { return run_opts_; }
  const FioOption* verify_at() const { return verify_at_; }
  const FioOption* log_at() const { return log_at_; }

 private:
  std::string name_;
  FioValues values_;
  std::map<const FioOptionRow*, FioSetting> set_;
  std::map<std::string, RunOpt> run_opts_;
  const FioOption* verify_at_ = nullptr;
  const FioOption* log_at_ = nullptr;
};

}  // namespace

FioRun map_fio(const std::vector<FioSection>& sections, uint64_t fresh_seed) {
  FioRun run;
  std::vector<FioProblem> errors;
  std::vector<const FioOption*> globals;
  std::map<std::string, const FioSection*> names;
  std::optional<std::map<std::string, JobMapper::RunOpt>> first_run;  // the first job's run-wide options
  std::string first_name;
  size_t jobs = 0;
  std::vector<std::pair<std::string, const FioOption*>> verified;  // jobs with a check, and where it is set
  std::vector<std::pair<std::string, const FioOption*>> logged;    // jobs with a write_*_log, and where
  for (const FioSection& sec : sections) {
    if (sec.name == "global") {
      for (const auto& o : sec.options) globals.push_back(&o);
      continue;
    }
    ++jobs;
    if (auto it = names.find(sec.name); it != names.end()) {
      errors.push_back({sec.file, sec.line,
                        fmt::format("{}:{}: [{}]: a job of this name is at {}:{}; give each job its own name", sec.file,
                                    sec.line, sec.name, it->second->file, it->second->line)});
      continue;
    }
    names[sec.name] = &sec;
    JobMapper m(sec.name, errors);
    for (const FioOption* o : globals) m.add(*o);
    for (const auto& o : sec.options) m.add(o);
    std::optional<FioJob> job = m.map(sec.file, sec.line, fresh_seed);
    // Options of the whole run (ramp_time, gtod_reduce): every job the same.
    const auto& mine = m.run_opts();
    if (!first_run) {
      first_run = mine;
      first_name = sec.name;
      for (const auto& [flag, o] : mine) {
        run.run_words.push_back(flag);
        run.run_words.push_back(o.value);
      }
    } else {
      std::set<std::string> flags;
      for (const auto& [flag, o] : mine) flags.insert(flag);
      for (const auto& [flag, o] : *first_run) flags.insert(flag);
      for (const auto& flag : flags) {
        auto a = first_run->find(flag);
        auto b = mine.find(flag);
        if (a != first_run->end() && b != mine.end() && a->second.value == b->second.value) continue;
        const FioOption& where = b != mine.end() ? *b->second.where : *a->second.where;
        errors.push_back({where.file, where.line,
                          fmt::format("{}:{}: {}: differs between [{}] and [{}]; ioacct's {} is one for the whole run "
                                      "(put it in [global])", where.file, where.line, where.key, first_name, sec.name,
                                      flag)});
      }
    }
    if (m.verify_at()) verified.emplace_back(sec.name, m.verify_at());
    if (m.log_at()) logged.emplace_back(sec.name, m.log_at());
    if (job) run.jobs.push_back(std::move(*job));
  }
  // ioacct's check covers one job's writes (bench refuses --verify beside
  // another job): said here, where the file and line are known.
  if (jobs > 1)
    for (const auto& [name, where] : verified)
      errors.push_back({where->file, where->line,
                        fmt::format("{}:{}: verify: [{}] is one of {} jobs; ioacct checks one job's writes: run it "
                                    "in a file of its own", where->file, where->line, name, jobs)});
  // The logs come from the run's one time series.
  if (jobs > 1)
    for (const auto& [name, where] : logged)
      errors.push_back({where->file, where->line,
                        fmt::format("{}:{}: {}: [{}] is one of {} jobs; ioacct's time series is the run's, so it logs "
                                    "a file of one job: run it in a file of its own", where->file, where->line,
                                    where->key, name, jobs)});
  if (jobs == 0 && !sections.empty())
    errors.push_back({sections.front().file, 0,
                      fmt::format("{}: holds only [global] sections: a job file needs at least one job",
                                  sections.front().file)});
  // One line per problem, in the order of the file (includes by name); a
  // [global] line that every job inherits, once.
  std::stable_sort(errors.begin(), errors.end(), [](const FioProblem& a, const FioProblem& b) {
    return a.file != b.file ? a.file < b.file : a.line < b.line;
  });
  std::vector<std::string> unique;
  for (const auto& e : errors)
    if (std::find(unique.begin(), unique.end(), e.text) == unique.end()) unique.push_back(e.text);
  if (!unique.empty()) throw UsageError(fmt::format("{}", fmt::join(unique, "\nerror: ")));
  return run;
}

}  // namespace ioacct
