#pragma once
// fio job files (`ioacct bench --fio FILE`): the INI text read as fio reads
// it, then its options mapped to ioacct's. Two pure steps over plain data,
// needing nothing but common/, so that the libFuzzer target (tests/fuzz)
// builds them alone:
//
//   read_fio_file  the INI format: [global] and job sections, ';' and '#'
//                  comments, `include FILE` (nested, loops refused),
//                  ${VAR} from the environment, $pagesize/$mb_memory/$ncpus
//   map_fio        each job's options (the [global]s above it, then its
//                  own) to the words of `ioacct bench`, with fio's units
//                  (kb_base), fio's defaults, and one error line per option
//                  it cannot map, naming the option, its file and line
//
// docs/fio.md has the table of what maps to what, and the differences.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ioacct {

// One option as written: `bs=4k` at jobs.fio:7.
struct FioOption {
  std::string key, value;
  bool has_value = false;  // "key=value", not a bare "key"
  std::string file;
  unsigned line = 0;
};

struct FioSection {
  std::string name;  // "global" for a [global] section
  std::string file;
  unsigned line = 0;
  std::vector<FioOption> options;  // in order, includes expanded
};

// What the reader asks of the world; the real one reads files and getenv.
struct FioEnv {
  // The text of `path`, or nullopt with `error` set ("No such file or directory").
  std::function<std::optional<std::string>(const std::string& path, std::string& error)> read;
  // An environment variable, or nullopt when unset.
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  uint64_t pagesize = 4096, mb_memory = 0, ncpus = 1;  // fio's reserved keywords
};

// The real world: files from disk, variables from the environment, the
// keywords from sysconf.
FioEnv system_fio_env();

// Reads `path` (and what it includes: relative to the including file's
// folder). Throws UsageError "FILE:LINE: ..." on the first thing it cannot
// read: a line outside any section, an include inside an include's section,
// an include loop, an unreadable include, an unset ${VAR}, an empty file.
std::vector<FioSection> read_fio_file(const std::string& path, const FioEnv& env);

// One job of the file, as `ioacct bench` words.
// write_bw_log, write_iops_log, write_lat_log: each a file prefix ("" for
// none). The run writes them in fio's log format (report/fio_logs.hpp).
struct FioLogs {
  std::string bw, iops, lat;
  bool averaged = false;  // log_avg_msec was given (else fio logs every I/O)
  bool any() const { return !bw.empty() || !iops.empty() || !lat.empty(); }
};

struct FioJob {
  std::string name;
  std::string file;  // where its section starts
  unsigned line = 0;
  std::vector<std::string> words;  // "--rw", "randread", "--iodepth", "1", ..., then its targets
  FioLogs logs;
};

struct FioRun {
  std::vector<std::string> run_words;  // the run's own options (--ramp, --acct), the same for every job
  std::vector<FioJob> jobs;
};

// Maps every job section. `fresh_seed` is the seed of jobs with
// randrepeat=0 (a new one each run). Throws UsageError with one line per
// problem ("FILE:LINE: OPTION: ..."), lines joined by "\nerror: ", when any
// option cannot be mapped or any value cannot be read; and when there is no job.
FioRun map_fio(const std::vector<FioSection>& sections, uint64_t fresh_seed);

// fio's number formats, for the tests: sizes with kb_base 1024 (4k = 4096,
// 4KiB = 4000, as fio's compatibility mode reads them) or 1000, and times
// whose unit defaults to seconds. Both take a parenthesised arithmetic
// expression (+ - * / % ^). nullopt when the text is not one.
std::optional<uint64_t> fio_size(const std::string& text, unsigned kb_base);
std::optional<uint64_t> fio_time_ns(const std::string& text);

}  // namespace ioacct
