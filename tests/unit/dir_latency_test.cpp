// A mixed job's latency by direction (runner/result.hpp's DirLatency) on
// made-up results: how threads merge it (merge_results), and what each
// reporter makes of it: ioacct's JSON, fio-json's read and write, the
// console's two lines. The live runs are tests/cli/bench_dir_latency_test.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report.hpp"
#include "runner/result.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

std::shared_ptr<Histogram> hist(uint64_t value, uint64_t n) {
  auto h = std::make_shared<Histogram>();
  if (n) h->record_n(value, n);
  return h;
}

// A thread of a mixed job: `reads` reads of 20 µs and `writes` writes of
// 3 ms, each with its slat (1 µs) and clat (the rest).
ThreadResult mixed_thread(uint64_t reads, uint64_t writes) {
  ThreadResult t;
  t.ios = reads + writes;
  t.reads = reads;
  t.writes = writes;
  t.bytes_read = reads * 4096;
  t.bytes_written = writes * 4096;
  t.window_start_ns = 1;
  t.window_ns = 1'000'000'000;
  t.latency->record_n(20'000, reads);
  t.latency->record_n(3'000'000, writes);
  t.slat = hist(1'000, reads + writes);
  t.clat = hist(19'000, reads);
  t.clat->record_n(2'999'000, writes);
  t.read_lat = {hist(20'000, reads), hist(1'000, reads), hist(19'000, reads)};
  t.write_lat = {hist(3'000'000, writes), hist(1'000, writes), hist(2'999'000, writes)};
  return t;
}

// A thread of a job of only reads (or writes): its one latency.
ThreadResult one_direction_thread(bool reads, uint64_t n, uint64_t ns) {
  ThreadResult t;
  t.ios = n;
  (reads ? t.reads : t.writes) = n;
  t.window_start_ns = 1;
  t.window_ns = 1'000'000'000;
  t.latency->record_n(ns, n);
  t.slat = hist(1'000, n);
  t.clat = hist(ns - 1'000, n);
  return t;
}

TEST(DirLatency, MixedThreadsMergeEachDirectionApart) {
  const std::vector<ThreadResult> threads = {mixed_thread(700, 300), mixed_thread(650, 350)};
  const ThreadResult m = merge_results(threads);
  ASSERT_TRUE(m.read_lat.lat && m.write_lat.lat);
  EXPECT_EQ(m.read_lat.lat->count(), 1350u);
  EXPECT_EQ(m.write_lat.lat->count(), 650u);
  EXPECT_EQ(m.read_lat.lat->count() + m.write_lat.lat->count(), m.latency->count());
  EXPECT_EQ(m.read_lat.lat->max(), 20'000u);
  EXPECT_EQ(m.write_lat.lat->min(), 3'000'000u);
  ASSERT_TRUE(m.read_lat.slat && m.write_lat.clat);
  EXPECT_EQ(m.read_lat.slat->count() + m.write_lat.slat->count(), m.slat->count());
  EXPECT_EQ(m.read_lat.clat->count() + m.write_lat.clat->count(), m.clat->count());
}

TEST(DirLatency, AThreadOfOneDirectionAddsItsLatencyToThatDirectionWhereAnotherKeptThemApart) {
  const std::vector<ThreadResult> threads = {mixed_thread(700, 300), one_direction_thread(true, 500, 90'000),
                                             one_direction_thread(false, 40, 7'000'000)};
  const ThreadResult m = merge_results(threads);
  ASSERT_TRUE(m.read_lat.lat && m.write_lat.lat);
  EXPECT_EQ(m.read_lat.lat->count(), 1200u);
  EXPECT_EQ(m.write_lat.lat->count(), 340u);
  EXPECT_EQ(m.read_lat.lat->max(), 90'000u) << "the reader's reads are reads";
  EXPECT_EQ(m.write_lat.lat->max(), 7'000'000u) << "the writer's writes are writes";
  EXPECT_EQ(m.read_lat.lat->count() + m.write_lat.lat->count(), m.latency->count());
  EXPECT_EQ(m.read_lat.clat->count(), 1200u);
}

TEST(DirLatency, ThreadsOfOneDirectionKeepNone) {
  const std::vector<ThreadResult> threads = {one_direction_thread(true, 500, 90'000),
                                             one_direction_thread(false, 40, 7'000'000)};
  const ThreadResult m = merge_results(threads);
  EXPECT_FALSE(m.read_lat.lat);
  EXPECT_FALSE(m.write_lat.lat);
  EXPECT_EQ(m.latency->count(), 540u);
}

// A run of one job, `spec`, whose one thread is `t`.
RunResult run_of(const ThreadResult& t) {
  RunResult r;
  r.threads = {t};
  r.jobs.resize(1);
  r.jobs[0].threads = 1;
  r.merge_threads();
  return r;
}

JobSpec job_of(RwMode rw) {
  JobSpec j;
  j.rw = rw;
  j.split_submit = true;  // as fio-json runs it
  return j;
}

TEST(DirLatency, JsonHasEachDirectionsLatencyForAMixedJobAndNullOtherwise) {
  const RunResult mixed = run_of(mixed_thread(700, 300));
  const json j = to_json(job_of(RwMode::RandRw), &mixed, RunContext{}, {});
  for (const json& res : {j["results"], j["jobs"][0]["results"], j["threads"][0]}) {
    EXPECT_EQ(res["read_latency_ns"]["count"], 700);
    EXPECT_EQ(res["read_latency_ns"]["p50"], 20'000);
    EXPECT_EQ(res["write_latency_ns"]["count"], 300);
    EXPECT_EQ(res["write_latency_ns"]["max"], 3'000'000);
    EXPECT_EQ(res["read_slat_ns"]["count"], 700);
    EXPECT_EQ(res["write_clat_ns"]["p99"], 2'999'000);
    EXPECT_EQ(res["latency_ns"]["count"], 1000) << "the job's own, as before";
  }
  const RunResult one = run_of(one_direction_thread(true, 500, 90'000));
  const json o = to_json(job_of(RwMode::RandRead), &one, RunContext{}, {});
  for (const char* k : {"read_latency_ns", "write_latency_ns", "read_slat_ns", "read_clat_ns", "write_slat_ns",
                        "write_clat_ns"}) {
    ASSERT_TRUE(o["results"].contains(k)) << k;
    EXPECT_TRUE(o["results"][k].is_null()) << k;
  }
}

TEST(DirLatency, FioJsonFillsReadAndWriteEachFromItsOwn) {
  const RunResult r = run_of(mixed_thread(700, 300));
  const json f = to_fio_json({job_of(RwMode::RandRw)}, r, RunContext{}, {});
  const json& rd = f["jobs"][0]["read"];
  const json& wr = f["jobs"][0]["write"];
  EXPECT_EQ(rd["total_ios"], 700);
  EXPECT_EQ(wr["total_ios"], 300);
  EXPECT_EQ(rd["io_bytes"], 700 * 4096);
  EXPECT_EQ(rd["lat_ns"]["N"], 700);
  EXPECT_EQ(rd["lat_ns"]["max"], 20'000);
  EXPECT_EQ(wr["lat_ns"]["N"], 300);
  EXPECT_EQ(wr["lat_ns"]["min"], 3'000'000);
  EXPECT_EQ(rd["slat_ns"]["N"], 700);
  EXPECT_EQ(wr["slat_ns"]["N"], 300);
  EXPECT_EQ(rd["clat_ns"]["percentile"]["99.000000"], 19'000);
  EXPECT_EQ(wr["clat_ns"]["percentile"]["50.000000"], 2'999'000);
  EXPECT_EQ(rd["clat_ns"]["percentile"].size(), 17u) << "fio's default list";
  EXPECT_EQ(rd["bw_samples"], 0) << "the series counts both directions: no samples for one";
  // The job's one, for a job of one direction.
  const RunResult one = run_of(one_direction_thread(false, 40, 7'000'000));
  const json g = to_fio_json({job_of(RwMode::RandWrite)}, one, RunContext{}, {});
  EXPECT_EQ(g["jobs"][0]["write"]["lat_ns"]["N"], 40);
  EXPECT_EQ(g["jobs"][0]["write"]["clat_ns"]["N"], 40);
  EXPECT_EQ(g["jobs"][0]["read"]["lat_ns"]["N"], 0);
}

TEST(DirLatency, FioJsonGivesNoSplitWhereSomeIosWereNotTimedApart) {
  ThreadResult t = mixed_thread(700, 300);
  t.slat_unsplit = 5;
  const json f = to_fio_json({job_of(RwMode::RandRw)}, run_of(t), RunContext{}, {});
  EXPECT_EQ(f["jobs"][0]["read"]["lat_ns"]["N"], 700);
  EXPECT_EQ(f["jobs"][0]["read"]["clat_ns"]["N"], 0);
  EXPECT_EQ(f["jobs"][0]["write"]["slat_ns"]["N"], 0);
}

std::string latency_block(const JobSpec& job, const RunResult& r) {
  const std::string out = format_console(job, r);
  const size_t at = out.find("  latency");
  return at == std::string::npos ? out : out.substr(at, out.find("  slat", at) - at);
}

TEST(DirLatency, TheConsoleShowsALineForEachDirectionUnderTheJobsLatency) {
  const std::string s = latency_block(job_of(RwMode::RandRw), run_of(mixed_thread(700, 300)));
  EXPECT_NE(s.find("             reads  p50 20.0 µs  p90 20.0 µs  p99 20.0 µs  p99.9 20.0 µs  max 20.0 µs  (700 I/Os)\n"),
            std::string::npos) << s;
  EXPECT_NE(s.find("             writes p50 3.00 ms"), std::string::npos) << s;
  EXPECT_LT(s.find("p99.99"), s.find("reads ")) << "under the job's lat: " << s;
  const std::string one = latency_block(job_of(RwMode::RandRead), run_of(one_direction_thread(true, 500, 90'000)));
  EXPECT_EQ(one.find("reads "), std::string::npos) << one;
}

}  // namespace
}  // namespace ioacct
