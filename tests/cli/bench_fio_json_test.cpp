// bench --format fio-json against fio itself: the same job file run by fio
// 3.x (--output-format=json) and by ioacct, and every key fio writes is in
// ioacct's document with the same JSON type, at the same place ("job
// options" and "global options" hold the options each tool was given, so
// only their own type is compared). The figures are ioacct's, checked against its own
// JSON under "ioacct".
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

// A JSON type as a reader sees it: an integer is one, signed or not.
std::string kind(const json& j) {
  if (j.is_number_integer()) return "integer";
  if (j.is_number_float()) return "float";
  return j.type_name();
}

// Where `ours` lacks a key of `fio`'s, or holds it with another type.
void same_shape(const json& fio, const json& ours, const std::string& path, std::vector<std::string>& diffs) {
  if (kind(fio) != kind(ours)) {
    diffs.push_back(path + ": fio " + kind(fio) + " " + fio.dump() + ", ioacct " + kind(ours) + " " + ours.dump());
    return;
  }
  if (fio.is_object()) {
    if (path.ends_with("/job options") || path == "/global options") return;
    for (const auto& [k, v] : fio.items()) {
      if (!ours.contains(k)) diffs.push_back(path + "/" + k + ": missing");
      else same_shape(v, ours[k], path + "/" + k, diffs);
    }
  } else if (fio.is_array() && !fio.empty() && !ours.empty()) {
    same_shape(fio[0], ours[0], path + "[0]", diffs);
  }
}

void write_job_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(BenchFioJson, EveryKeyFioWritesIsThereWithFiosType) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  sh("dd if=/dev/urandom of=" + data + " bs=1M count=32 status=none");
  struct JobCase {
    const char* what;
    std::string job;  // the sections after [global]
  };
  const JobCase cases[] = {
      {"io_uring reads", "[r]\nrw=randread\nioengine=io_uring\niodepth=4\ndirect=1\n"},
      {"psync writes", "[w]\nrw=randwrite\nioengine=psync\ndirect=1\n"},
      {"libaio reads, two jobs", "[a]\nrw=randread\nioengine=libaio\niodepth=8\ndirect=1\n"
                                 "[b]\nstonewall\nrw=read\nioengine=io_uring\nbs=64k\ndirect=1\n"},
  };
  for (const JobCase& c : cases) {
    const std::string file = dir.path() + "/job.fio";
    write_job_file(file, "[global]\nfilename=" + data + "\nsize=32m\nbs=4k\nruntime=300ms\ntime_based\n" + c.job);
    const json fio = run_fio(file);
    auto o = run_ioacct({"bench", "--fio", file, "--format", "fio-json"});
    ASSERT_EQ(o.exit_code, 0) << c.what << ": " << o.err;
    const json ours = stdout_json(o);
    std::vector<std::string> diffs;
    same_shape(fio, ours, "", diffs);
    EXPECT_TRUE(diffs.empty()) << c.what << ":\n" << [&] {
      std::string s;
      for (const auto& d : diffs) s += "  " + d + "\n";
      return s;
    }();
    ASSERT_EQ(ours["jobs"].size(), fio["jobs"].size()) << c.what;
    EXPECT_EQ(ours["jobs"].back()["groupid"], fio["jobs"].back()["groupid"]) << c.what << ": a stonewall starts a group";

    // The figures are ioacct's own, in fio's units.
    const json& own = ours["ioacct"];
    for (size_t i = 0; i < ours["jobs"].size(); ++i) {
      const json& j = ours["jobs"][i];
      const json& r = own.contains("jobs") ? own["jobs"][i]["results"] : own["results"];
      const bool reads = r["reads"].get<uint64_t>() > 0;
      const json& d = j[reads ? "read" : "write"];
      EXPECT_EQ(d["total_ios"], r[reads ? "reads" : "writes"]) << c.what;
      EXPECT_EQ(d["io_bytes"], r[reads ? "bytes_read" : "bytes_written"]) << c.what;
      EXPECT_NEAR(d["iops"].get<double>(), r["iops"].get<double>(), 1e-6 * r["iops"].get<double>() + 1e-9) << c.what;
      EXPECT_EQ(d["lat_ns"]["N"], r["latency_ns"]["count"]) << c.what;
      EXPECT_EQ(d["lat_ns"]["max"], r["latency_ns"]["max"]) << c.what;
      // Every I/O has a clat: fio's own (each batch submitted in a call of its
      // own), less those complete by the return of that call (all slat);
      // psync's lat is its clat.
      const uint64_t at_submit = r["complete_at_submit_ios"].is_null() ? 0 : r["complete_at_submit_ios"].get<uint64_t>();
      EXPECT_EQ(d["clat_ns"]["N"].get<uint64_t>() + at_submit, r["latency_ns"]["count"].get<uint64_t>()) << c.what;
      ASSERT_TRUE(d["clat_ns"].contains("percentile")) << c.what;
      EXPECT_EQ(d["clat_ns"]["percentile"].size(), fio["jobs"][0]["read"]["clat_ns"].value("percentile", json::object()).size() +
                                                       fio["jobs"][0]["write"]["clat_ns"].value("percentile", json::object()).size())
          << c.what << ": fio's percentile list";
      double share = 0;
      for (const char* k : {"latency_ns", "latency_us", "latency_ms"})
        for (const auto& [b, v] : j[k].items()) share += v.get<double>();
      EXPECT_NEAR(share, 100.0, 0.01) << c.what << ": every I/O is in one latency bin";
      const json& other = j[reads ? "write" : "read"];
      EXPECT_EQ(other["total_ios"], 0) << c.what;
      EXPECT_EQ(other["lat_ns"]["N"], 0) << c.what;
    }
    ASSERT_FALSE(ours["disk_util"].empty()) << c.what;
  }
}

TEST(BenchFioJson, AJobThatMixesReadsAndWritesIsRefusedBeforeItRuns) {
  auto o = run_ioacct({"bench", "--rw", "randrw", "--format", "fio-json", "--ios", "10"});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("error: --format fio-json: the job mixes reads and writes (randrw)"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("temporary file"), std::string::npos) << "refused before a file is made: " << o.err;
}

}  // namespace
}  // namespace ioacct::test
