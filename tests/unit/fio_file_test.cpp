// fio job files (src/workload/fio_file.*): the INI reader (sections,
// comments, includes, substitutions), fio's units, the mapping to ioacct's
// words, one error line per option it cannot map; and every file of the
// job-file corpus (tests/fio) maps, every one under tests/fio/bad does not.
#include "workload/fio_file.hpp"

#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/errors.hpp"
#include "workload/fio_options.hpp"

namespace ioacct {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Files from a map, variables from another: the reader never touches the disk.
struct FakeWorld {
  std::map<std::string, std::string> files;
  std::map<std::string, std::string> vars;
  FioEnv env() const {
    FioEnv e;
    e.read = [this](const std::string& p, std::string& err) -> std::optional<std::string> {
      auto it = files.find(p);
      if (it == files.end()) {
        err = "No such file or directory (ENOENT)";
        return std::nullopt;
      }
      return it->second;
    };
    e.getenv = [this](const std::string& n) -> std::optional<std::string> {
      auto it = vars.find(n);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
    e.pagesize = 4096;
    e.mb_memory = 1000;
    e.ncpus = 2;
    return e;
  }
};

FioRun map_text(const std::string& text, std::map<std::string, std::string> vars = {}) {
  FakeWorld w;
  w.files["j.fio"] = text;
  w.vars = std::move(vars);
  return map_fio(read_fio_file("j.fio", w.env()), 77);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

// The value after `flag` in `words`, or "" if the flag is not there.
std::string word_after(const std::vector<std::string>& words, const std::string& flag) {
  auto it = std::find(words.begin(), words.end(), flag);
  if (it == words.end()) return "";
  return ++it == words.end() ? "(flag)" : *it;
}
bool has(const std::vector<std::string>& words, const std::string& w) {
  return std::find(words.begin(), words.end(), w) != words.end();
}

TEST(FioUnits, SizesAsFioReadsThem) {
  EXPECT_EQ(fio_size("4096", 1024), 4096u);
  EXPECT_EQ(fio_size("4k", 1024), 4096u);
  EXPECT_EQ(fio_size("4K", 1024), 4096u);
  EXPECT_EQ(fio_size("4kB", 1024), 4096u);
  EXPECT_EQ(fio_size("4KiB", 1024), 4000u);  // fio's compatibility mode: the opposite of the standard
  EXPECT_EQ(fio_size("1m", 1024), 1048576u);
  EXPECT_EQ(fio_size("1mi", 1024), 1000000u);
  EXPECT_EQ(fio_size("4k", 1000), 4000u);
  EXPECT_EQ(fio_size("4KiB", 1000), 4096u);
  EXPECT_EQ(fio_size("1t", 1024), 1ull << 40);
  EXPECT_EQ(fio_size("0x1000", 1024), 4096u);
  EXPECT_EQ(fio_size("1.5k", 1024), 1536u);
  EXPECT_EQ(fio_size("4096b", 1024), 4096u);
  EXPECT_EQ(fio_size("(4*1024)", 1024), 4096u);
  EXPECT_EQ(fio_size("(2^10)k", 1024), 1048576u);
  EXPECT_EQ(fio_size("((1+2)*3-1)", 1024), 8u);
  for (const char* bad : {"", "k", "4q", "-4k", "4kk", "(1+)", "(1/0)", "(2^99)", "1.0001k", "4 k", "0x", "(", "99999999999999999999"})
    EXPECT_FALSE(fio_size(bad, 1024).has_value()) << "'" << bad << "'";
}

TEST(FioUnits, TimesAsFioReadsThem) {
  EXPECT_EQ(fio_time_ns("30"), 30'000'000'000u);  // seconds without a unit
  EXPECT_EQ(fio_time_ns("500ms"), 500'000'000u);
  EXPECT_EQ(fio_time_ns("500msec"), 500'000'000u);
  EXPECT_EQ(fio_time_ns("250us"), 250'000u);
  EXPECT_EQ(fio_time_ns("2m"), 120'000'000'000u);  // minutes, not milli
  EXPECT_EQ(fio_time_ns("1h"), 3'600'000'000'000u);
  EXPECT_EQ(fio_time_ns("1d"), 86'400'000'000'000u);
  EXPECT_EQ(fio_time_ns("(1000*500)"), 500'000'000u);  // microseconds inside an expression
  for (const char* bad : {"", "s", "10x", "-1", "10 s"}) EXPECT_FALSE(fio_time_ns(bad).has_value()) << bad;
}

TEST(FioReader, SectionsCommentsIncludesAndVariables) {
  FakeWorld w;
  w.files["dir/main.fio"] =
      "; comment\n# another\n\n[global]\n  bs = 4k  \ninclude common.fio\n[job1]\nsize=${SIZE}\nnumjobs=$ncpus\n"
      "direct\n";
  w.files["dir/common.fio"] = "ioengine=io_uring\n; included\n";
  w.vars["SIZE"] = "64m";
  const auto secs = read_fio_file("dir/main.fio", w.env());
  ASSERT_EQ(secs.size(), 2u);
  EXPECT_EQ(secs[0].name, "global");
  ASSERT_EQ(secs[0].options.size(), 2u);
  EXPECT_EQ(secs[0].options[0].key, "bs");
  EXPECT_EQ(secs[0].options[0].value, "4k");
  EXPECT_EQ(secs[0].options[0].line, 5u);
  EXPECT_EQ(secs[0].options[1].key, "ioengine");
  EXPECT_EQ(secs[0].options[1].file, "dir/common.fio");  // relative to the including file
  EXPECT_EQ(secs[0].options[1].line, 1u);
  EXPECT_EQ(secs[1].name, "job1");
  EXPECT_EQ(secs[1].options[0].value, "64m");
  EXPECT_EQ(secs[1].options[1].value, "2");
  EXPECT_FALSE(secs[1].options[2].has_value);
}

TEST(FioReader, RefusesWhatItCannotRead) {
  FakeWorld w;
  w.files["a.fio"] = "rw=read\n[j]\n";
  EXPECT_THAT(error_of([&] { read_fio_file("a.fio", w.env()); }), HasSubstr("a.fio:1: rw: an option outside any [section]"));
  w.files["a.fio"] = "[j]\ninclude b.fio\n";
  w.files["b.fio"] = "include c.fio\n";
  w.files["c.fio"] = "include a.fio\n";
  EXPECT_THAT(error_of([&] { read_fio_file("a.fio", w.env()); }),
              HasSubstr("c.fio:1: include a.fio: it includes itself, through a.fio -> b.fio -> c.fio"));
  w.files["a.fio"] = "[j]\ninclude ./x/../missing.fio\n";
  EXPECT_THAT(error_of([&] { read_fio_file("a.fio", w.env()); }), HasSubstr("a.fio:2: include ./x/../missing.fio: cannot read it"));
  w.files["a.fio"] = "[j]\ninclude b.fio\n";
  w.files["b.fio"] = "[inner]\n";
  EXPECT_THAT(error_of([&] { read_fio_file("a.fio", w.env()); }), HasSubstr("b.fio:1: [inner]: an included file may not hold"));
  w.files["a.fio"] = "[j]\nsize=${NOPE}\n";
  EXPECT_THAT(error_of([&] { read_fio_file("a.fio", w.env()); }), HasSubstr("a.fio:2: size: ${NOPE} is not set"));
  w.files["a.fio"] = "[j\n";
  EXPECT_THAT(error_of([&] { read_fio_file("a.fio", w.env()); }), HasSubstr("a.fio:1: '[j' is not a [section] header"));
  w.files["a.fio"] = "; nothing\n";
  EXPECT_THAT(error_of([&] { read_fio_file("a.fio", w.env()); }), HasSubstr("holds no [section]"));
  EXPECT_THAT(error_of([&] { read_fio_file("none.fio", w.env()); }), HasSubstr("--fio: none.fio: No such file"));
}

TEST(FioMap, SpellsOutFiosDefaults) {
  // A bare job is fio's: sequential reads, psync, buffered, depth 1.
  const auto run = map_text("[j]\nfilename=/dev/x\n");
  ASSERT_EQ(run.jobs.size(), 1u);
  const auto& w = run.jobs[0].words;
  EXPECT_EQ(word_after(w, "--rw"), "read");
  EXPECT_EQ(word_after(w, "--bs"), "4096");
  EXPECT_EQ(word_after(w, "--engine"), "psync");
  EXPECT_EQ(word_after(w, "--threads"), "1");
  EXPECT_TRUE(has(w, "--buffered"));
  EXPECT_EQ(word_after(w, "--passes"), "1");  // no size, no time_based: one pass over the target
  EXPECT_EQ(w.back(), "/dev/x");
}

// fio submits each I/O as soon as it has it (iodepth_batch_submit=1, its
// default): the mapped job refills as reaped and submits each refill at
// once; 0 submits a pass's refills together; other sizes are lockstep.
TEST(FioMap, BatchingIsFiosOwn) {
  const auto words = [](const std::string& extra) {
    const auto run = map_text("[j]\nioengine=io_uring\ndirect=1\niodepth=32\nsize=16m\nfilename=/dev/x\n" + extra);
    EXPECT_EQ(run.jobs.size(), 1u);
    return run.jobs.empty() ? std::vector<std::string>{} : run.jobs[0].words;
  };
  for (const char* given : {"", "iodepth_batch_submit=1\n", "iodepth_batch=1\niodepth_batch_complete_min=1\n"}) {
    const auto w = words(given);
    EXPECT_EQ(word_after(w, "--submit-policy"), "each") << given;
    EXPECT_FALSE(has(w, "--submit-batch")) << given;
    EXPECT_FALSE(has(w, "--complete-batch")) << given;
  }
  EXPECT_EQ(word_after(words("iodepth_batch_submit=0\n"), "--submit-policy"), "pass");
  const auto lockstep = words("iodepth_batch_submit=8\niodepth_batch_complete_min=4\n");
  EXPECT_FALSE(has(lockstep, "--submit-policy"));
  EXPECT_EQ(word_after(lockstep, "--submit-batch"), "8");
  EXPECT_EQ(word_after(lockstep, "--complete-batch"), "4");
  EXPECT_FALSE(has(words("iodepth_batch_submit=0\niodepth_batch_complete_min=4\n"), "--submit-policy"));
  // psync has no refills to batch.
  const auto run = map_text("[j]\nioengine=psync\nsize=16m\nfilename=/dev/x\n");
  ASSERT_EQ(run.jobs.size(), 1u);
  EXPECT_FALSE(has(run.jobs[0].words, "--submit-policy"));
  // libaio: one io_submit per I/O and one completion per io_getevents, as
  // fio's iodepth_batch_complete_max defaults to _min (1): lockstep of 1,
  // taking at most 1.
  const auto aio = map_text("[j]\nioengine=libaio\ndirect=1\niodepth=32\nsize=16m\nfilename=/dev/x\n");
  ASSERT_EQ(aio.jobs.size(), 1u);
  EXPECT_FALSE(has(aio.jobs[0].words, "--submit-policy"));
  EXPECT_EQ(word_after(aio.jobs[0].words, "--submit-batch"), "1");
  EXPECT_EQ(word_after(aio.jobs[0].words, "--complete-max"), "1");
}

// iodepth_batch_complete_max: fio's default is _min; under the depth it caps
// each reap (--complete-max); at the depth or over, all there are. fio raises
// a cap under _min to it.
TEST(FioMap, CompletionsTakenAtOnceAreFiosOwn) {
  const auto words = [](const std::string& engine, const std::string& extra) {
    const auto run = map_text("[j]\nioengine=" + engine + "\ndirect=1\niodepth=16\nsize=16m\nfilename=/dev/x\n" + extra);
    EXPECT_EQ(run.jobs.size(), 1u);
    return run.jobs.empty() ? std::vector<std::string>{} : run.jobs[0].words;
  };
  // libaio
  EXPECT_EQ(word_after(words("libaio", "iodepth_batch_complete_max=4\n"), "--complete-max"), "4");
  EXPECT_FALSE(has(words("libaio", "iodepth_batch_complete_max=16\n"), "--complete-max"));
  EXPECT_FALSE(has(words("libaio", "iodepth_batch_complete_max=64\n"), "--complete-max"));
  const auto min4 = words("libaio", "iodepth_batch_complete_min=4\n");
  EXPECT_EQ(word_after(min4, "--complete-batch"), "4");
  EXPECT_EQ(word_after(min4, "--complete-max"), "4");
  EXPECT_EQ(word_after(words("libaio", "iodepth_batch_complete_min=4\niodepth_batch_complete_max=2\n"), "--complete-max"),
            "4");
  EXPECT_EQ(word_after(words("libaio", "iodepth_batch_complete_min=4\niodepth_batch_complete_max=8\n"), "--complete-max"),
            "8");
  // io_uring: submitting each refill as its CQE is taken is one at a time
  // already; another cap takes the batch path, each I/O in an enter of its own.
  const auto one = words("io_uring", "");
  EXPECT_EQ(word_after(one, "--submit-policy"), "each");
  EXPECT_FALSE(has(one, "--complete-max"));
  const auto four = words("io_uring", "iodepth_batch_complete_max=4\n");
  EXPECT_FALSE(has(four, "--submit-policy"));
  EXPECT_EQ(word_after(four, "--submit-batch"), "1");
  EXPECT_EQ(word_after(four, "--complete-max"), "4");
  EXPECT_EQ(word_after(words("io_uring", "iodepth_batch_complete_max=16\n"), "--submit-policy"), "each");
  const auto pass = words("io_uring", "iodepth_batch_submit=0\niodepth_batch_complete_max=4\n");
  EXPECT_FALSE(has(pass, "--submit-policy"));
  EXPECT_FALSE(has(pass, "--submit-batch"));
  EXPECT_EQ(word_after(pass, "--complete-max"), "4");
  // psync: nothing to batch.
  EXPECT_FALSE(has(words("psync", "iodepth_batch_complete_max=4\n"), "--complete-max"));
}

TEST(FioMap, MapsTheDocumentedSubset) {
  const auto run = map_text(
      "[global]\nioengine=io_uring\ndirect=1\nnumjobs=2\n[w]\nrw=randrw\nrwmixwrite=30\nbs=8k,8k\niodepth=16\n"
      "iodepth_batch_submit=4\niodepth_batch_complete_min=2\nsize=16m\noffset=1m\nfilename=/a:/b\\:c\n"
      "runtime=5\ntime_based\nramp_time=1\nrandom_distribution=pareto:0.2\nfsync=8\nsqthread_poll=1\n"
      "sqthread_poll_cpu=1\nhipri\nfixedbufs=1\nregisterfiles=1\nnorandommap\nrandseed=42\nstartdelay=2\n"
      "stonewall\nnew_group\nthread\ngroup_reporting\ndescription=x\nname=renamed\n");
  ASSERT_EQ(run.jobs.size(), 1u);
  const auto& j = run.jobs[0];
  EXPECT_EQ(j.name, "renamed");
  const auto& w = j.words;
  EXPECT_EQ(word_after(w, "--rw"), "randrw");
  EXPECT_EQ(word_after(w, "--rwmix-read"), "70");
  EXPECT_EQ(word_after(w, "--bs"), "8192");
  EXPECT_EQ(word_after(w, "--threads"), "2");
  EXPECT_EQ(word_after(w, "--iodepth"), "32");  // ioacct's depth is over all threads
  EXPECT_EQ(word_after(w, "--submit-batch"), "4");
  EXPECT_EQ(word_after(w, "--complete-batch"), "2");
  EXPECT_TRUE(has(w, "--direct"));
  EXPECT_EQ(word_after(w, "--size"), std::to_string(16 << 20));
  EXPECT_EQ(word_after(w, "--offset"), std::to_string(1 << 20));
  EXPECT_EQ(word_after(w, "--runtime"), "5000000000ns");
  EXPECT_FALSE(has(w, "--ios"));
  EXPECT_EQ(word_after(w, "--random-distribution"), "pareto:0.2");
  EXPECT_EQ(word_after(w, "--fsync"), "8");
  EXPECT_TRUE(has(w, "--sqpoll"));
  EXPECT_EQ(word_after(w, "--sq-cpu"), "1");
  EXPECT_TRUE(has(w, "--iopoll"));
  EXPECT_TRUE(has(w, "--fixed-bufs"));
  EXPECT_TRUE(has(w, "--fixed-files"));
  EXPECT_EQ(word_after(w, "--seed"), "42");
  EXPECT_EQ(word_after(w, "--startdelay"), "2000000000ns");
  EXPECT_TRUE(has(w, "--stonewall"));
  EXPECT_EQ(w[w.size() - 2], "/a");
  EXPECT_EQ(w.back(), "/b:c");
  EXPECT_THAT(run.run_words, ElementsAre("--ramp", "1000000000ns"));
}

// fio's most common engine: libaio, with its depth over all jobs as for
// io_uring; io_uring's own options stay errors with it.
TEST(FioMap, LibaioMapsWithItsDepth) {
  const auto w = map_text("[j]\nioengine=libaio\ndirect=1\nnumjobs=2\niodepth=16\niodepth_batch_submit=8\nsize=1m\n")
                     .jobs[0]
                     .words;
  EXPECT_EQ(word_after(w, "--engine"), "libaio");
  EXPECT_EQ(word_after(w, "--iodepth"), "32");
  EXPECT_EQ(word_after(w, "--submit-batch"), "8");
  EXPECT_EQ(word_after(map_text("[j]\nioengine=libaio\nsize=1m\n").jobs[0].words, "--iodepth"), "1")
      << "fio's iodepth=1";
  EXPECT_EQ(error_of([] { map_text("[j]\nioengine=libaio\nsize=1m\nsqthread_poll=1\n"); }),
            "j.fio:4: sqthread_poll: is an io_uring option; this job's ioengine is not io_uring");
  EXPECT_TRUE(has(map_text("[j]\nioengine=libaio\nsize=1m\nnowait=1\n").jobs[0].words, "--nowait"))
      << "fio's libaio nowait: RWF_NOWAIT on each iocb";
  EXPECT_THAT(error_of([] { map_text("[j]\nioengine=psync\nsize=1m\nnowait=1\n"); }),
              HasSubstr("nowait: is mapped for io_uring, libaio and pvsync2 only"));
}

// fio's mixed sizes: bssplit as given, a size without a percent sharing
// what is left; bsrange as every multiple of MIN up to MAX, equally likely.
// A pass is its bytes, at the mean size.
TEST(FioMap, MixedBlockSizesMapToBssplit) {
  const auto split = map_text("[j]\nrw=randread\nsize=1m\nbs=8k\nbssplit=4k/50:64k:16k\n").jobs[0].words;
  EXPECT_EQ(word_after(split, "--bssplit"), "4k/50:64k/25:16k/25");
  EXPECT_FALSE(has(split, "--bs")) << "bssplit takes the place of bs, as in fio";
  EXPECT_EQ(word_after(split, "--ios"), "46");  // 1 MiB / (0.5 x 4 KiB + 0.25 x 64 KiB + 0.25 x 16 KiB) = 46.5
  const auto range = map_text("[j]\nrw=read\nsize=1m\nbsrange=4k-16k\n").jobs[0].words;
  EXPECT_EQ(word_after(range, "--bssplit"), "4k/1:8k/1:12k/1:16k/1");
  EXPECT_EQ(word_after(map_text("[j]\nsize=1m\nbssplit=8k/100\n").jobs[0].words, "--bs"), "8192");
  EXPECT_EQ(word_after(map_text("[j]\nsize=1m\nbssplit=4k/50:8k/50\nnorandommap=0\n").jobs[0].words, "--bssplit"),
            "4k/50:8k/50")
      << "mixed sizes keep fio's random map: norandommap=0 says what ioacct does";
  EXPECT_EQ(word_after(map_text("[j]\nsize=1m\nbsrange=8k-8k\n").jobs[0].words, "--bs"), "8192");
}

// fio paces each direction on its own: "a" all three, "a,b" reads a and
// the rest b, "a," reads only, ",b" writes (and trims). A mixed job gets
// ioacct's pace per direction; a job of one direction its direction's value.
TEST(FioMap, RatesPerDirectionAsFiosOwn) {
  const auto rate = [](const std::string& rw, const std::string& opt) {
    const auto w = map_text("[j]\nsize=1m\nrw=" + rw + "\n" + opt + "\n").jobs.at(0).words;
    return word_after(w, "--rate-iops") + "|" + word_after(w, "--rate");
  };
  EXPECT_EQ(rate("randrw", "rate_iops=100"), "100,100,100|");
  EXPECT_EQ(rate("randrw", "rate_iops=400,200"), "400,200,200|");
  EXPECT_EQ(rate("rw", "rate_iops=400,"), "400,,|");
  EXPECT_EQ(rate("randrw", "rate_iops=,50"), ",50,50|");
  EXPECT_EQ(rate("randrw", "rate=1m,512k"), "|1048576,524288,524288");
  EXPECT_EQ(rate("randread", "rate_iops=400,200"), "400|");
  EXPECT_EQ(rate("randwrite", "rate_iops=400,200"), "200|");
  EXPECT_EQ(rate("randread", "rate_iops=,200"), "|") << "fio leaves the reads of rate=,N unpaced";
  EXPECT_EQ(rate("write", "rate=1m,"), "|");
  EXPECT_EQ(rate("randrw", "rate_iops=0"), "|") << "0 is no pace, in fio as here";
}

// rate_process goes with a pace only (fio ignores it without one); the
// floors per direction as the paces; rate_cycle in fio's milliseconds, with a floor.
TEST(FioMap, RateProcessAndFloorsAsFiosOwn) {
  const auto words = [](const std::string& rw, const std::string& opts) {
    const auto w = map_text("[j]\nsize=1m\nrw=" + rw + "\n" + opts + "\n").jobs.at(0).words;
    return word_after(w, "--rate-process") + "|" + word_after(w, "--rate-iops-min") + "|" + word_after(w, "--rate-min") +
           "|" + word_after(w, "--rate-cycle");
  };
  EXPECT_EQ(words("randread", "rate_iops=100\nrate_process=poisson"), "poisson|||");
  EXPECT_EQ(words("randread", "rate_process=poisson"), "|||") << "no pace: fio ignores it";
  EXPECT_EQ(words("randread", "rate_iops=100\nrate_process=linear"), "|||");
  EXPECT_EQ(words("randread", "rate_iops_min=50\nrate_cycle=500"), "|50||500ms");
  EXPECT_EQ(words("randrw", "rate_min=1m,512k"), "||1048576,524288,524288|");
  EXPECT_EQ(words("randwrite", "rate_iops_min=400,200"), "|200||");
  EXPECT_EQ(words("randread", "rate_cycle=500"), "|||") << "no floor: nothing to average";
  EXPECT_NE(error_of([] { map_text("[j]\nsize=1m\nrate_process=bursty\n"); })
                .find("rate_process: 'bursty' is not linear or poisson"),
            std::string::npos);
}

// bs=r,w,t: fio's comma rules, a field left unset fio's default 4k; a job of
// one direction takes its own.
TEST(FioMap, BlockSizesPerDirectionAsFiosOwn) {
  const auto bs = [](const std::string& rw, const std::string& opt) {
    return word_after(map_text("[j]\nsize=1m\nrw=" + rw + "\n" + opt + "\n").jobs.at(0).words, "--bs");
  };
  EXPECT_EQ(bs("randrw", "bs=8k,32k"), "8192,32768,32768");
  EXPECT_EQ(bs("randrw", "bs=8k,32k,"), "8192,32768,4096");
  EXPECT_EQ(bs("rw", "bs=,8k"), "4096,8192,8192");
  EXPECT_EQ(bs("randrw", "bs=16k,16k"), "16384") << "the same size: one --bs";
  EXPECT_EQ(bs("randread", "bs=8k,32k"), "8192");
  EXPECT_EQ(bs("randwrite", "bs=8k,32k"), "32768");
  EXPECT_EQ(bs("randrw", "bs=8k,32k\nbssplit=4k/100"), "4096") << "bssplit overrides bs, in fio too";
  EXPECT_THAT(error_of([] { map_text("[j]\nsize=1m\nbs=0\n"); }), HasSubstr("a block size of 0"));
  // bssplit=r,w,t the same way, each list as bssplit reads one.
  const auto split = [](const std::string& rw, const std::string& opt) {
    const auto w = map_text("[j]\nsize=1m\nrw=" + rw + "\n" + opt + "\n").jobs.at(0).words;
    return word_after(w, "--bssplit") + "|" + word_after(w, "--bs");
  };
  EXPECT_EQ(split("randrw", "bssplit=2k/50:4k/50,4k/90:8k/10"), "2k/50:4k/50,4k/90:8k/10,4k/90:8k/10|");
  EXPECT_EQ(split("randrw", "bssplit=2k/50:4k/50,"), "2k/50:4k/50,4k/100,4k/100|");
  EXPECT_EQ(split("randread", "bssplit=2k/50:4k/50,8k/100"), "2k/50:4k/50|");
  EXPECT_EQ(split("randwrite", "bssplit=2k/50:4k/50,8k/100"), "|8192");
  EXPECT_EQ(split("randrw", "bssplit=4k/50:8k/50,4k/50:8k/50"), "4k/50:8k/50|") << "the same list: one";
}

// blockalign (ba): one boundary, with one size only.
TEST(FioMap, BlockalignIsOneBoundaryForOneSize) {
  EXPECT_EQ(word_after(map_text("[j]\nsize=1m\nrw=randread\nba=64k\n").jobs.at(0).words, "--blockalign"), "65536");
  EXPECT_EQ(word_after(map_text("[j]\nsize=1m\nrw=randread\nblockalign=8k,8k\n").jobs.at(0).words, "--blockalign"),
            "8192");
  EXPECT_THAT(error_of([] { map_text("[j]\nsize=1m\nrw=randread\nblockalign=4k,8k\n"); }),
              HasSubstr("blockalign: '4k,8k': different alignments"));
  EXPECT_THAT(error_of([] { map_text("[j]\nsize=1m\nrw=randread\nbssplit=4k/50:8k/50\nba=4k\n"); }),
              HasSubstr("j.fio:5: ba: with mixed sizes"));
}

TEST(Bssplit, ReadsFiosListAndSharesWhatIsLeft) {
  EXPECT_EQ(parse_bssplit("--x", "4k/80:64k/20"), (std::vector<BsShare>{{4096, 80}, {65536, 20}}));
  EXPECT_EQ(parse_bssplit("--x", "4k/50:8k:16k/"), (std::vector<BsShare>{{4096, 50}, {8192, 25}, {16384, 25}}));
  EXPECT_EQ(parse_bssplit("--x", "4k:8k:16k"), (std::vector<BsShare>{{4096, 34}, {8192, 33}, {16384, 33}}));
  EXPECT_EQ(parse_bssplit("--x", "512/3:1m/1"), (std::vector<BsShare>{{512, 3}, {1 << 20, 1}})) << "weights";
  EXPECT_EQ(bssplit_text(parse_bssplit("--x", "4k/80:1536/20")), "4k/80:1536/20");
  EXPECT_DOUBLE_EQ(mean_bs(0, parse_bssplit("--x", "4k/75:16k/25")), 7168.0);
  for (const char* bad : {"", "4k/0", "4q/50", "0/100", "4k/50:", "4k/100:8k", "2g/100", "4k/x"}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(error_of([&] { parse_bssplit("--x", bad); }), HasSubstr("--x: "));
  }
}

TEST(FioMap, SizeWithoutTimeBasedIsOnePassPerJob) {
  const auto run = map_text("[j]\nrw=randread\nsize=1m\nbs=4k\nnumjobs=3\nruntime=10\n");
  EXPECT_EQ(word_after(run.jobs[0].words, "--ios"), "768");  // 3 x 1 MiB / 4 KiB
  EXPECT_EQ(word_after(run.jobs[0].words, "--runtime"), "10000000000ns");  // whichever comes first
}

// fio's counts: loops passes, a pass of io_size in place of size, and
// number_ios as a cap on each clone's I/Os, with time_based too.
TEST(FioMap, LoopsIoSizeAndNumberIosCountAsInFio) {
  const auto ios = [](const std::string& extra) {
    return word_after(map_text("[j]\nrw=randread\nbs=4k\nnumjobs=2\n" + extra).jobs.at(0).words, "--ios");
  };
  EXPECT_EQ(ios("size=1m\nloops=3\n"), "1536");                  // 2 clones x 3 x 256
  EXPECT_EQ(ios("size=1m\nnumber_ios=100\n"), "200");            // fewer than a pass
  EXPECT_EQ(ios("size=1m\nnumber_ios=1000\n"), "512");           // a pass is fewer
  EXPECT_EQ(ios("size=1m\nnumber_ios=0\n"), "512");              // fio's "no cap"
  EXPECT_EQ(ios("size=1m\nio_size=2m\nloops=2\n"), "2048");     // io_size, not size, makes the pass
  EXPECT_EQ(ios("filename=/dev/x\nio_limit=64k\n"), "32");
  EXPECT_EQ(ios("size=1m\ntime_based\nruntime=5\nloops=9\n"), "");  // the runtime ends it
  EXPECT_EQ(ios("size=1m\ntime_based\nruntime=5\nnumber_ios=50\n"), "100");
  const auto w = map_text("[j]\nfilename=/dev/x\nloops=2\nnumber_ios=10\n").jobs.at(0).words;
  EXPECT_EQ(word_after(w, "--passes"), "2") << "the target's size is known once it is open";
  EXPECT_EQ(word_after(w, "--ios"), "10");
  EXPECT_THAT(error_of([] { map_text("[j]\nsize=1m\nloops=0\n"); }), HasSubstr("j.fio:3: loops: 0 is out of range"));
  EXPECT_THAT(error_of([] { map_text("[j]\nsize=1m\nio_size=50%\n"); }), HasSubstr("j.fio:3: io_size: a percentage"));
}

// verify= checks what the job writes, whatever fio's check type: every
// written block read back after the run, and a mixed job's reads of written
// blocks as they complete.
TEST(FioMap, VerifyChecksWhatTheJobWrote) {
  const auto words = [](const std::string& extra) { return map_text("[j]\nsize=1m\n" + extra).jobs.at(0).words; };
  for (const char* type : {"crc32c", "md5", "xxhash", "sha256", "meta", "crc32c-intel"}) {
    const auto w = words(std::string("rw=randwrite\nverify=") + type + "\nverify_fatal=1\nverify_backlog=16\n");
    EXPECT_TRUE(has(w, "--verify")) << type;
    EXPECT_FALSE(has(w, "--verify-during")) << type;
  }
  EXPECT_TRUE(has(words("rw=randrw\nverify=md5\n"), "--verify-during"));
  for (const char* off : {"rw=write\nverify=null\n", "rw=write\nverify=0\n", "rw=write\nverify=md5\ndo_verify=0\n"}) {
    const auto w = words(off);
    EXPECT_FALSE(has(w, "--verify") || has(w, "--verify-during")) << off;
  }
  auto err = [](const std::string& text) { return error_of([&] { map_text("[j]\nsize=1m\n" + text); }); };
  EXPECT_THAT(err("rw=randread\nverify=md5\n"), HasSubstr("j.fio:4: verify: a job that only reads"));
  EXPECT_THAT(err("rw=trim\nverify=md5\n"), HasSubstr("j.fio:4: verify: a trimmed block"));
  EXPECT_THAT(err("rw=write\nverify=pattern\n"), HasSubstr("verify_pattern, which ioacct does not map"));
  EXPECT_THAT(err("rw=write\nverify=sha9\n"), HasSubstr("'sha9' is not one of fio's check types"));
  EXPECT_THAT(err("rw=write\nverify=md5\nverify_fatal=x\n"), HasSubstr("verify_fatal: 'x' is not 0 or 1"));
  EXPECT_EQ(error_of([] { map_text("[global]\nsize=1m\nrw=write\n[a]\nverify=md5\n[b]\n"); }),
            "j.fio:5: verify: [a] is one of 2 jobs; ioacct checks one job's writes: run it in a file of its own");
}

TEST(FioMap, RandrepeatZeroTakesAFreshSeed) {
  EXPECT_EQ(word_after(map_text("[j]\nsize=1m\nrandrepeat=0\n").jobs[0].words, "--seed"), "77");
  EXPECT_EQ(word_after(map_text("[j]\nsize=1m\nrandrepeat=1\n").jobs[0].words, "--seed"), "");
}

TEST(FioMap, GlobalsApplyOnlyBelowThem) {
  const auto run = map_text("[a]\nsize=1m\n[global]\nbs=8k\n[b]\nsize=1m\n");
  ASSERT_EQ(run.jobs.size(), 2u);
  EXPECT_EQ(word_after(run.jobs[0].words, "--bs"), "4096");
  EXPECT_EQ(word_after(run.jobs[1].words, "--bs"), "8192");
}

TEST(FioMap, EveryUnsupportedOptionIsOneLine) {
  const std::string e = error_of([] {
    map_text("[global]\nverify_pattern=0xff\n[a]\nsize=1m\nioengine=posixaio\n[b]\nsize=1m\nbs=4x\nnrfiles=2\n");
  });
  // Sorted by line; the [global] line once although two jobs inherit it.
  EXPECT_EQ(e,
            "j.fio:2: verify_pattern: not an option ioacct maps (docs/fio.md lists those it does); remove it, or run this job "
            "with fio\nerror: j.fio:5: ioengine: 'posixaio' is not an engine ioacct has (io_uring, libaio, psync, "
            "sync, pvsync, pvsync2)\nerror: j.fio:8: bs: cannot read '4x' as a size (fio's units: 4k, 1m, 2g; "
            "kb_base=1024)\nerror: j.fio:9: nrfiles: not an option ioacct maps (docs/fio.md lists those it does); "
            "remove it, or run this job with fio");
}

TEST(FioMap, RefusesWhatItCannotMean) {
  auto err = [](const std::string& text) { return error_of([&] { map_text(text); }); };
  EXPECT_THAT(err("[j]\nrw=randread\n"), HasSubstr("j.fio:1: size: needed for a job without filename"));
  EXPECT_THAT(err("[j]\nsize=1m\nbsrange=4k-64k,8k-16k\n"), HasSubstr("j.fio:3: bsrange: '4k-64k,8k-16k': ranges per direction"));
  EXPECT_THAT(err("[j]\nsize=1m\nbssplit=4k/50:8k/40\n"), HasSubstr("the percentages add up to 90, not 100"));
  EXPECT_THAT(err("[j]\nsize=1m\nbssplit=4k/60:8k/40:16k\n"), HasSubstr("leaving nothing of 100"));
  EXPECT_THAT(err("[j]\nsize=1m\nrw=randread\nbssplit=4k/60:8k/40\nnorandommap\n"),
              HasSubstr("j.fio:5: norandommap: 1 with mixed sizes"));
  EXPECT_THAT(err("[j]\nsize=1m\nrw=randread:8\n"), HasSubstr("offset modifier"));
  EXPECT_THAT(err("[j]\nsize=1m\ntime_based\n"), HasSubstr("j.fio:3: time_based: needs runtime="));
  EXPECT_THAT(err("[j]\nsize=1m\nrandom_distribution=zoned:50/50\n"), HasSubstr("j.fio:3: random_distribution:"));
  EXPECT_THAT(err("[j]\nsize=1m\nnorandommap=0\n"), HasSubstr("keeps no random map"));
  EXPECT_THAT(err("[j]\nsize=1m\nsqthread_poll=1\n"), HasSubstr("is an io_uring option"));
  EXPECT_THAT(err("[j]\nsize=1m\nrw=randrw\nrate_iops=1,2,3,4\n"), HasSubstr("more than three values"));
  EXPECT_THAT(err("[a]\nsize=1m\nramp_time=1\n[b]\nsize=1m\nramp_time=2\n"),
              HasSubstr("j.fio:6: ramp_time: differs between [a] and [b]"));
  EXPECT_THAT(err("[a]\nsize=1m\n[a]\nsize=1m\n"), HasSubstr("j.fio:3: [a]: a job of this name is at j.fio:1"));
  EXPECT_THAT(err("[global]\nsize=1m\n"), HasSubstr("holds only [global] sections"));
  EXPECT_THAT(err("[j]\nsize=1m\niodepth=0\n"), HasSubstr("j.fio:3: iodepth: 0 is out of range"));
  EXPECT_THAT(err("[j]\nsize=1m\nkb_base=512\n"), HasSubstr("kb_base: '512' is not 1000 or 1024"));
  // A zero block size was once taken as fio's default 4 KiB, silently.
  for (const char* zero : {"bs=0", "bs=0k", "blocksize=0,0", "bsrange=0-0", "bssplit=0/100"}) {
    SCOPED_TRACE(zero);
    EXPECT_THAT(err(std::string("[j]\nsize=1m\n") + zero + "\n"), HasSubstr("a block size of 0 is not one"));
  }
}

// The option table drives the mapping and docs/fio.md's table: the doc holds
// the table as the rows print it, and no name belongs to two rows.
TEST(FioOptions, TheDocsTableIsTheOptionTable) {
  std::ifstream in(std::string(IOACCT_SOURCE_DIR) + "/docs/fio.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string table = fio_options_markdown();
  EXPECT_NE(doc.str().find(table), std::string::npos)
      << "docs/fio.md's table of options is not the one fio_options() makes; replace it with:\n" << table;
  std::set<std::string_view> names;
  for (const FioOptionRow& row : fio_options()) {
    ASSERT_FALSE(row.names.empty());
    for (const FioName& n : row.names) {
      EXPECT_TRUE(names.insert(n.name).second) << n.name << " names two rows";
      EXPECT_TRUE(std::none_of(n.name.begin(), n.name.end(), [](char c) { return std::isupper(c); })) << n.name;
      bool inverted = !n.inverted;
      EXPECT_EQ(fio_option(n.name, inverted), &row) << n.name;
      EXPECT_EQ(inverted, n.inverted) << n.name;
    }
  }
  bool inverted = false;
  EXPECT_EQ(fio_option("verify_pattern", inverted), nullptr);
}

// ----------------------------------------------------------------- corpus

std::vector<std::string> fio_files(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 4 && n.substr(n.size() - 4) == ".fio") out.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

FioEnv corpus_env() {
  FioEnv env = system_fio_env();
  env.getenv = [](const std::string& n) -> std::optional<std::string> {
    if (n == "IOACCT_TARGET") return "/dev/null";
    if (n == "RUNTIME") return "1";
    if (n == "LOGDIR") return "/tmp";
    return std::nullopt;
  };
  return env;
}

TEST(FioCorpus, EveryJobFileMaps) {
  const auto files = fio_files(std::string(IOACCT_SOURCE_DIR) + "/tests/fio");
  ASSERT_GE(files.size(), 12u);
  for (const auto& f : files) {
    if (f.find("include-") != std::string::npos) continue;  // pieces of include.fio
    SCOPED_TRACE(f);
    try {
      const FioRun run = map_fio(read_fio_file(f, corpus_env()), 1);
      EXPECT_FALSE(run.jobs.empty());
    } catch (const UsageError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(FioCorpus, EveryBadFileIsOneClearError) {
  const auto files = fio_files(std::string(IOACCT_SOURCE_DIR) + "/tests/fio/bad");
  ASSERT_GE(files.size(), 5u);
  for (const auto& f : files) {
    if (f.find("include-loop-b") != std::string::npos) continue;  // the other half of the loop
    SCOPED_TRACE(f);
    const std::string e = error_of([&] { map_fio(read_fio_file(f, corpus_env()), 1); });
    EXPECT_EQ(e.find('\n'), std::string::npos) << "one line: " << e;
    EXPECT_THAT(e, HasSubstr(".fio:")) << "names the file and line";
  }
}

}  // namespace
}  // namespace ioacct
