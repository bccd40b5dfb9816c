// Every job file of the corpus (tests/fio) runs in fio and in ioacct, on the
// same target with the same variables: both run the same jobs, and each job
// moves data in the same directions in both. The features each file is about
// are checked further by the tests named in tests/fio/README.md; this one
// keeps the corpus honest as a whole: a file that fio refuses, or that
// ioacct runs as another workload, fails here.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

const std::string kCorpus = std::string(IOACCT_SOURCE_DIR) + "/tests/fio";

using Directions = std::map<std::string, std::set<std::string>>;

// What each job of fio's JSON did, by its name: whether it read, wrote and
// trimmed. fio reports each clone of numjobs apart: clones fold into their
// job, as ioacct reports them.
Directions fio_directions(const json& report) {
  Directions out;
  for (const json& j : report["jobs"]) {
    auto& d = out[j["jobname"].get<std::string>()];
    for (const char* dir : {"read", "write", "trim"})
      if (j[dir]["total_ios"].get<uint64_t>() > 0) d.insert(dir);
  }
  return out;
}

// The same from ioacct's own JSON.
Directions ioacct_directions(const json& report) {
  Directions out;
  for (const json& j : report["jobs"]) {
    auto& d = out[j["name"].get<std::string>()];
    const json& r = j["results"];
    for (const auto& [dir, key] : {std::pair{"read", "reads"}, {"write", "writes"}, {"trim", "trims"}})
      if (r[key].get<uint64_t>() > 0) d.insert(dir);
  }
  return out;
}

TEST(FioCorpusRuns, EveryFileRunsInFioAndInIoacctAsTheSameJobs) {
  TempDir dir;
  const std::string data = dir.path() + "/data", logs = dir.path() + "/logs";
  sh("dd if=/dev/urandom of=" + data + " bs=1M count=64 status=none && mkdir -p " + logs);
  // fio trims a block device only (on a file its io_uring trim is ENOTTY;
  // ioacct punches a hole): trim.fio runs on a loop device of its own.
  LoopDevice loop(dir.path());
  size_t ran = 0;
  std::istringstream names(sh("cd " + kCorpus + " && ls *.fio"));
  for (std::string name; std::getline(names, name);) {
    if (name.starts_with("include-")) continue;  // pieces of include.fio
    if (name == "logs.fio") continue;  // 2 s in each tool: BenchJobs.LogsAreWrittenAsFioWritesThem runs it in both
    SCOPED_TRACE(name);
    const std::string file = kCorpus + "/" + name;
    const bool device = name == "trim.fio";
    const std::vector<std::string> env = {"IOACCT_TARGET=" + (device ? loop.path() : data), "RUNTIME=100ms",
                                          "LOGDIR=" + logs, "TMPDIR=" + dir.path()};
    // fio lays out the files of a job without filename= in its working directory.
    const json fio = run_fio(file, env, dir.path());
    ASSERT_FALSE(fio.is_null());
    std::vector<std::string> args = {"bench", "--fio", file, "--format", "json"};
    if (device) args.emplace_back("--destroy-data");
    const auto o = run_ioacct(args, {.env = env});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const json ours = stdout_json(o);
    auto theirs = fio_directions(fio);
    const json& v = ours["results"]["verify"];  // the run's: one job's writes (verify-loops.fio)
    // fio counts its verify pass's reads as the job's reads; ioacct's check
    // after the run is its own count (checked_after), not the job's I/O.
    if (!v.is_null())
      for (auto& [job, moved] : theirs) moved.erase("read");
    EXPECT_EQ(ioacct_directions(ours), theirs) << "the jobs and what each moved";
    if (!v.is_null()) {
      EXPECT_EQ(v["mismatches"], 0) << v.dump();
      EXPECT_GT(v["checked_after"].get<uint64_t>(), 0u) << "every written block read back: " << v.dump();
    }
    ++ran;
  }
  EXPECT_GE(ran, 24u) << "the corpus of tests/fio";
}

}  // namespace
}  // namespace ioacct::test
