// Mapping a fio job file's options to `ioacct bench` words (fio_file.hpp).
// Every option is either mapped, or known to change nothing ioacct measures
// (and docs/fio.md says so), or one error line naming it; never dropped.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string_view>

#include "common/distribution.hpp"
#include "common/errors.hpp"
#include "workload/fio_file.hpp"

namespace ioacct {
namespace {

// fio's names for one option, the first being the one this file uses.
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> m = {
      {"readwrite", "rw"},
      {"blocksize", "bs"},
      {"blocksize_range", "bsrange"},
      {"iodepth_batch", "iodepth_batch_submit"},
      {"iodepth_batch_complete", "iodepth_batch_complete_min"},
      {"timeout", "runtime"},
      {"seed", "randseed"},
      {"wait_for_previous", "stonewall"},
      {"rwmixwrite", "rwmixread"},  // read as 100 - value
      {"buffered", "direct"},       // read as !value
  };
  return m;
}

// Options that change nothing ioacct measures: accepted, and docs/fio.md
// says why.
const std::set<std::string>& no_effect() {
  static const std::set<std::string> s = {"description", "thread", "group_reporting", "new_group", "kb_base", "name"};
  return s;
}

const std::set<std::string>& mapped() {
  static const std::set<std::string> s = {
      "rw", "rwmixread", "bs", "bsrange", "bssplit", "iodepth", "iodepth_batch_submit", "iodepth_batch_complete_min",
      "iodepth_batch_complete_max", "numjobs", "ioengine", "direct", "size", "offset", "filename", "directory",
      "runtime", "time_based", "ramp_time", "rate_iops", "rate", "random_distribution", "fsync", "fdatasync",
      "sqthread_poll", "sqthread_poll_cpu", "hipri", "fixedbufs", "registerfiles", "nonvectored", "norandommap",
      "randrepeat", "randseed", "startdelay", "stonewall", "gtod_reduce"};
  return s;
}

// One line of the error message, sorted by where it points.
struct Problem {
  std::string file;
  unsigned line = 0;
  std::string text;
  bool operator==(const Problem&) const = default;
};

// The job's options: the [global]s above it, then its own; the last setting
// of an option (under any of its names) wins.
struct Setting {
  const FioOption* opt = nullptr;
  bool inverted = false;  // given as rwmixwrite or buffered
};

class JobMapper {
 public:
  JobMapper(std::string name, std::vector<Problem>& errors) : name_(std::move(name)), errors_(errors) {}

  void add(const FioOption& o) {
    std::string key = o.key;
    bool inverted = false;
    if (auto it = aliases().find(key); it != aliases().end()) {
      inverted = key == "rwmixwrite" || key == "buffered";
      key = it->second;
    }
    if (!no_effect().count(key) && !mapped().count(key)) {
      bad(o, "not an option ioacct maps (docs/fio.md lists those it does); remove it, or run this job with fio");
      return;
    }
    set_[key] = {&o, inverted};
  }

  // The words, or nothing when an option was bad (the errors say which).
  std::optional<FioJob> map(const std::string& file, unsigned line, uint64_t fresh_seed) {
    const size_t errors_before = errors_.size();
    FioJob job;
    job.file = file;
    job.line = line;
    job.name = name_;
    if (const auto* s = get("name"); s && s->opt->has_value) job.name = s->opt->value;
    kb_base_ = 1024;
    if (const auto* s = get("kb_base")) {
      const auto v = integer(*s->opt);
      if (v && (*v == 1000 || *v == 1024)) kb_base_ = static_cast<unsigned>(*v);
      else if (v) bad(*s->opt, fmt::format("'{}' is not 1000 or 1024", s->opt->value));
    }
    std::vector<std::string>& w = job.words;
    auto put = [&w](std::string flag, std::string value = {}) {
      w.push_back(std::move(flag));
      if (!value.empty()) w.push_back(std::move(value));
    };

    // What the job does. fio's defaults are spelled out, so that ioacct's own
    // (randread, depth 32, O_DIRECT) never leak into a fio job.
    std::string rw = "read";
    if (const auto* s = get("rw")) {
      const std::string v = s->opt->value;
      static const std::set<std::string> kRw = {"read", "write", "randread", "randwrite", "rw", "randrw", "trim",
                                                "randtrim"};
      if (v.find(':') != std::string::npos)
        bad(*s->opt, fmt::format("'{}': the offset modifier (':N') is not supported", v));
      else if (v == "readwrite") rw = "rw";
      else if (kRw.count(v)) rw = v;
      else if (v == "trimwrite" || v == "randtrimwrite")
        bad(*s->opt, fmt::format("'{}' is not supported; rw=randrw with --rwmix-trim mixes trims with reads and writes", v));
      else bad(*s->opt, fmt::format("'{}' is not one of read, write, randread, randwrite, rw, randrw, trim, randtrim", v));
    }
    put("--rw", rw);
    const bool mixed = rw == "rw" || rw == "randrw";
    if (const auto* s = get("rwmixread")) {
      if (const auto v = integer(*s->opt, 0, 100)) put("--rwmix-read", std::to_string(s->inverted ? 100 - *v : *v));
    }

    uint64_t bs = 4096;  // fio's default
    const auto set_bs = [&](const FioOption& o, uint64_t v) {
      if (v == 0) bad(o, fmt::format("'{}': a block size of 0 is not one fio or ioacct can run", o.value));
      else bs = v;
    };
    if (const auto* s = get("bs")) {
      if (const auto v = size_list(*s->opt, "block sizes")) set_bs(*s->opt, *v);
    }
    if (const auto* s = get("bsrange")) {
      const std::string& v = s->opt->value;
      const size_t dash = v.find_first_of("-:");
      const auto lo = dash == std::string::npos ? std::nullopt : fio_size(v.substr(0, dash), kb_base_);
      const auto hi = dash == std::string::npos ? std::nullopt : fio_size(v.substr(dash + 1), kb_base_);
      if (!lo || !hi) bad(*s->opt, fmt::format("cannot read '{}' as MIN-MAX", v));
      else if (*lo != *hi) bad(*s->opt, fmt::format("'{}': mixed block sizes are not supported; give one size", v));
      else set_bs(*s->opt, *lo);
    }
    if (const auto* s = get("bssplit")) {
      const std::string& v = s->opt->value;
      const size_t slash = v.find('/');
      const auto size = fio_size(v.substr(0, slash), kb_base_);
      if (v.find_first_of(":,") != std::string::npos || !size ||
          (slash != std::string::npos && v.substr(slash + 1) != "100"))
        bad(*s->opt, fmt::format("'{}': mixed block sizes are not supported; give one size (bs=)", v));
      else set_bs(*s->opt, *size);
    }
    put("--bs", std::to_string(bs));

    uint64_t numjobs = 1;
    if (const auto* s = get("numjobs")) {
      if (const auto v = integer(*s->opt, 1, 1024)) numjobs = *v;
    }
    put("--threads", std::to_string(numjobs));

    std::string engine = "psync";
    if (const auto* s = get("ioengine")) {
      const std::string& v = s->opt->value;
      if (v == "io_uring") engine = "uring";
      else if (v == "psync" || v == "sync" || v == "pvsync" || v == "pvsync2") engine = "psync";
      else if (v == "libaio") engine = "libaio";
      else bad(*s->opt, fmt::format("'{}' is not an engine ioacct has (io_uring, libaio, psync, pvsync2, sync)", v));
    }
    put("--engine", engine);
    if (const auto* s = get("iodepth")) {
      const auto v = integer(*s->opt, 1, 65536);
      if (v && engine != "psync") put("--iodepth", std::to_string(*v * numjobs));
    } else if (engine != "psync") {
      put("--iodepth", std::to_string(numjobs));  // fio's iodepth=1, per job
    }
    // fio submits each I/O as soon as it has it (iodepth_batch_submit=1,
    // its default) and reaps from one completion up to every one there is:
    // ioacct's refill as reaped with --submit-policy each. Other batch sizes
    // are lockstep batches.
    // iodepth_batch_submit=0 (fio: "the iodepth") submits what a pass has
    // refilled together: --submit-policy pass.
    bool lockstep = false;
    const char* policy = "each";
    if (const auto* s = get("iodepth_batch_submit")) {
      if (const auto v = integer(*s->opt, 0, 65536); v && *v == 0) {
        policy = "pass";
      } else if (v && *v != 1) {
        lockstep = true;
        put("--submit-batch", std::to_string(*v));
      }
    }
    if (const auto* s = get("iodepth_batch_complete_min")) {
      const auto v = integer(*s->opt, 0, 65536);
      if (v && *v == 0) bad(*s->opt, "0 (reap without waiting) is not supported; give 1 or more");
      else if (v && *v != 1) {
        lockstep = true;
        put("--complete-batch", std::to_string(*v));
      }
    }
    // libaio has no fused path to submit each refill at once: fio's one
    // io_submit per I/O, reaping all there are, is lockstep batches of 1.
    if (!lockstep && engine == "uring") put("--submit-policy", policy);
    else if (!lockstep && engine == "libaio" && std::string_view(policy) == "each") put("--submit-batch", "1");
    if (const auto* s = get("iodepth_batch_complete_max")) {
      // ioacct reaps every completion there is, up to the depth: fio's
      // complete_max=iodepth. Any other cap is not supported.
      const auto v = integer(*s->opt, 1, 65536);
      const auto* d = get("iodepth");
      const uint64_t depth = d ? integer(*d->opt, 1, 65536).value_or(1) : 1;
      if (v && *v < depth)
        bad(*s->opt, fmt::format("{} caps the completions reaped at once below the iodepth ({}); ioacct reaps all "
                                 "there are, as fio does with iodepth_batch_complete_max=iodepth", *v, depth));
    }

    bool direct = false;  // fio's default: buffered
    if (const auto* s = get("direct")) {
      if (const auto v = boolean(*s->opt)) direct = s->inverted ? !*v : *v;
    }
    put(direct ? "--direct" : "--buffered");

    // Where: filename (':' separates files, '\:' is a colon), directory.
    std::string directory;
    if (const auto* s = get("directory")) {
      directory = s->opt->value;
      if (directory.find(':') != std::string::npos) bad(*s->opt, "several directories are not supported; give one");
    }
    std::vector<std::string> files;
    if (const auto* s = get("filename")) {
      std::string cur;
      const std::string& v = s->opt->value;
      for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == '\\' && i + 1 < v.size() && v[i + 1] == ':') {
          cur += ':';
          ++i;
        } else if (v[i] == ':') {
          if (!cur.empty()) files.push_back(cur);
          cur.clear();
        } else {
          cur += v[i];
        }
      }
      if (!cur.empty()) files.push_back(cur);
      if (files.empty()) bad(*s->opt, "names no file");
      for (auto& f : files)
        if (!directory.empty() && f[0] != '/') f.insert(0, "/").insert(0, directory);
    } else if (!directory.empty()) {
      put("--dir", directory);
    }

    std::optional<uint64_t> size;
    if (const auto* s = get("size")) {
      if (s->opt->value.find('%') != std::string::npos) bad(*s->opt, "a percentage of the file is not supported; give bytes");
      else if (const auto v = sized(*s->opt)) size = *v;
    }
    if (size) put("--size", std::to_string(*size));
    else if (files.empty()) {
      const FioOption where{"size", "", false, file, line};
      bad(where, "needed for a job without filename (fio lays out a file of that size; ioacct makes a temporary one)");
    }
    if (const auto* s = get("offset")) {
      if (s->opt->value.find('%') != std::string::npos) bad(*s->opt, "a percentage of the file is not supported; give bytes");
      else if (const auto v = sized(*s->opt); v && *v) put("--offset", std::to_string(*v));
    }

    // When: time_based runs for runtime; otherwise one pass of `size` per
    // job (numjobs passes), cut short by runtime if given.
    bool time_based = false;
    if (const auto* s = get("time_based")) time_based = boolean(*s->opt).value_or(false);
    std::optional<uint64_t> runtime;
    if (const auto* s = get("runtime")) {
      const auto v = time_of(*s->opt);
      if (v && *v) runtime = *v;
    }
    if (time_based && !runtime) bad(*get("time_based")->opt, "needs runtime= (fio would run until stopped)");
    if (runtime) put("--runtime", fmt::format("{}ns", *runtime));
    if (!time_based) {
      if (size && bs) put("--ios", std::to_string(numjobs * std::max<uint64_t>(1, *size / bs)));
      else if (!files.empty()) put("--one-pass");
    }
    if (const auto* s = get("ramp_time")) {
      if (const auto v = time_of(*s->opt)) run_word(*s->opt, "--ramp", fmt::format("{}ns", *v));
    }
    if (const auto* s = get("startdelay")) {
      if (s->opt->value.find_first_of("-:") != std::string::npos)
        bad(*s->opt, "a range of start delays is not supported; give one");
      else if (const auto v = time_of(*s->opt); v && *v) put("--startdelay", fmt::format("{}ns", *v));
    }
    if (const auto* s = get("stonewall")) {
      if (boolean(*s->opt).value_or(false)) put("--stonewall");
    }

    // How fast, where on the target.
    if (const auto* s = get("rate_iops")) {
      if (const auto v = pair_of(*s->opt, "rates", [this](const FioOption& o, const std::string& x) {
            return integer(o, x, 1, 1'000'000'000);
          })) {
        if (mixed) bad(*s->opt, "with a mixed rw, fio paces reads and writes each; ioacct paces the job as a whole");
        else put("--rate-iops", std::to_string(*v));
      }
    }
    if (const auto* s = get("rate")) {
      if (const auto v = pair_of(*s->opt, "rates", [this](const FioOption& o, const std::string& x) {
            return sized(o, x);
          })) {
        if (mixed) bad(*s->opt, "with a mixed rw, fio paces reads and writes each; ioacct paces the job as a whole");
        else if (*v) put("--rate", std::to_string(*v));
      }
    }
    if (const auto* s = get("random_distribution")) {
      try {
        const Distribution d = parse_distribution("random_distribution", s->opt->value);
        if (d.kind != DistKind::Uniform) put("--random-distribution", distribution_name(d));
      } catch (const UsageError& e) {
        const std::string msg = e.what();
        bad(*s->opt, msg.substr(std::string("random_distribution: ").size()));
      }
    }
    if (const auto* s = get("norandommap")) {
      if (!boolean(*s->opt).value_or(true))
        bad(*s->opt, "0: ioacct keeps no random map (it draws every offset afresh, as fio does with norandommap=1)");
    }
    if (const auto* s = get("randrepeat")) {
      const auto v = boolean(*s->opt);
      if (v && !*v && !get("randseed")) put("--seed", std::to_string(fresh_seed));
    }
    if (const auto* s = get("randseed")) {
      if (const auto v = integer(*s->opt)) put("--seed", std::to_string(*v));
    }
    if (const auto* s = get("fsync")) {
      if (const auto v = integer(*s->opt); v && *v) put("--fsync", std::to_string(*v));
    }
    if (const auto* s = get("fdatasync")) {
      if (const auto v = integer(*s->opt); v && *v) put("--fdatasync", std::to_string(*v));
    }

    // io_uring's modes.
    auto uring_flag = [&](const char* key, const char* flag) {
      const auto* s = get(key);
      if (!s || !boolean(*s->opt).value_or(false)) return;
      if (engine != "uring") bad(*s->opt, "is an io_uring option; this job's ioengine is not io_uring");
      else put(flag);
    };
    uring_flag("sqthread_poll", "--sqpoll");
    uring_flag("hipri", "--iopoll");
    uring_flag("fixedbufs", "--fixed-bufs");
    uring_flag("registerfiles", "--fixed-files");
    if (const auto* s = get("sqthread_poll_cpu")) {
      const auto* poll = get("sqthread_poll");
      if (!poll || !boolean(*poll->opt).value_or(false)) bad(*s->opt, "only applies with sqthread_poll=1");
      else if (const auto v = integer(*s->opt, 0, 65535)) put("--sq-cpu", std::to_string(*v));
    }
    if (const auto* s = get("nonvectored")) {
      const auto v = integer_signed(*s->opt);
      if (v && *v == 0 && engine == "uring") put("--vectored");
    }
    if (const auto* s = get("gtod_reduce")) {
      if (boolean(*s->opt).value_or(false)) run_word(*s->opt, "--acct", "basic");
    }

    for (const auto& f : files) w.push_back(f);
    if (errors_.size() != errors_before) return std::nullopt;
    return job;
  }

 private:
  const Setting* get(const std::string& key) const {
    auto it = set_.find(key);
    return it == set_.end() ? nullptr : &it->second;
  }

  void bad(const FioOption& o, const std::string& msg) {
    errors_.push_back({o.file, o.line, fmt::format("{}:{}: {}: {}", o.file, o.line, o.key, msg)});
  }

  std::optional<uint64_t> integer(const FioOption& o, uint64_t lo = 0, uint64_t hi = UINT64_MAX) {
    return integer(o, o.value, lo, hi);
  }
  std::optional<uint64_t> integer(const FioOption& o, const std::string& text, uint64_t lo, uint64_t hi) {
    const auto v = fio_size(text, kb_base_);  // fio's integers take the same suffixes
    if (!v || text.empty()) {
      bad(o, fmt::format("cannot read '{}' as a whole number", text));
      return std::nullopt;
    }
    if (*v < lo || *v > hi) {
      bad(o, fmt::format("{} is out of range ({} to {})", *v, lo, hi));
      return std::nullopt;
    }
    return v;
  }
  std::optional<int64_t> integer_signed(const FioOption& o) {
    if (o.value == "-1") return -1;
    const auto v = integer(o, 0, 1);
    if (!v) return std::nullopt;
    return static_cast<int64_t>(*v);
  }
  std::optional<uint64_t> sized(const FioOption& o) { return sized(o, o.value); }
  std::optional<uint64_t> sized(const FioOption& o, const std::string& text) {
    const auto v = fio_size(text, kb_base_);
    if (!v) bad(o, fmt::format("cannot read '{}' as a size (fio's units: 4k, 1m, 2g; kb_base={})", text, kb_base_));
    return v;
  }
  std::optional<uint64_t> time_of(const FioOption& o) {
    const auto v = fio_time_ns(o.value);
    if (!v) bad(o, fmt::format("cannot read '{}' as a time (seconds, or with a unit: 500ms, 2m, 1h)", o.value));
    return v;
  }
  std::optional<bool> boolean(const FioOption& o) {
    if (!o.has_value) return true;  // a bare "direct" is direct=1
    std::string v = o.value;
    for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
    if (v == "0" || v == "false" || v == "no" || v == "off") return false;
    bad(o, fmt::format("'{}' is not 0 or 1", o.value));
    return std::nullopt;
  }
  // "4k" or fio's per-direction list "4k,4k,4k": one value, or all equal.
  std::optional<uint64_t> size_list(const FioOption& o, const char* what) {
    return pair_of(o, what, [this](const FioOption& x, const std::string& t) { return sized(x, t); });
  }
  template <typename F>
  std::optional<uint64_t> pair_of(const FioOption& o, const char* what, F&& read) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t i = 0; i <= o.value.size(); ++i)
      if (i == o.value.size() || o.value[i] == ',') {
        parts.push_back(o.value.substr(start, i - start));
        start = i + 1;
      }
    std::optional<uint64_t> first;
    for (const auto& p : parts) {
      if (p.empty()) continue;  // "4k," keeps the first for the rest
      const auto v = read(o, p);
      if (!v) return std::nullopt;
      if (first && *first != *v) {
        bad(o, fmt::format("'{}': different {} for reads, writes and trims are not supported; give one", o.value, what));
        return std::nullopt;
      }
      first = v;
    }
    if (!first) bad(o, "needs a value");
    return first;
  }
  // A run-wide option (--ramp, --acct): map_fio checks that every job has
  // the same.
  void run_word(const FioOption& o, const std::string& flag, const std::string& value) {
    run_opts_[flag] = {value, &o};
  }

 public:
  struct RunOpt {
    std::string value;
    const FioOption* where;
  };
  const std::map<std::string, RunOpt>& run_opts() const { return run_opts_; }

 private:
  std::string name_;
  std::vector<Problem>& errors_;
  std::map<std::string, Setting> set_;
  unsigned kb_base_ = 1024;
  std::map<std::string, RunOpt> run_opts_;
};

}  // namespace

FioRun map_fio(const std::vector<FioSection>& sections, uint64_t fresh_seed) {
  FioRun run;
  std::vector<Problem> errors;
  std::vector<const FioOption*> globals;
  std::map<std::string, const FioSection*> names;
  std::optional<std::map<std::string, JobMapper::RunOpt>> first_run;  // the first job's run-wide options
  std::string first_name;
  size_t jobs = 0;
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
    if (job) run.jobs.push_back(std::move(*job));
  }
  if (jobs == 0 && !sections.empty())
    errors.push_back({sections.front().file, 0,
                      fmt::format("{}: holds only [global] sections: a job file needs at least one job",
                                  sections.front().file)});
  // One line per problem, in the order of the file (includes by name); a
  // [global] line that every job inherits, once.
  std::stable_sort(errors.begin(), errors.end(), [](const Problem& a, const Problem& b) {
    return a.file != b.file ? a.file < b.file : a.line < b.line;
  });
  std::vector<std::string> unique;
  for (const auto& e : errors)
    if (std::find(unique.begin(), unique.end(), e.text) == unique.end()) unique.push_back(e.text);
  if (!unique.empty()) throw UsageError(fmt::format("{}", fmt::join(unique, "\nerror: ")));
  return run;
}

}  // namespace ioacct
