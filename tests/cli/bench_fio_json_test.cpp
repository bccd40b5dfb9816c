// bench --format fio-json against fio itself: the same job file run by fio
// 3.x (--output-format=json) and by ioacct, and every key fio writes is in
// ioacct's document with the same JSON type, at the same place ("job
// options" and "global options" hold the options each tool was given, so
// only their own type is compared). The figures are ioacct's, checked against its own
// JSON under "ioacct": a job that mixes reads and writes has each
// direction's from that direction's own (read_latency_ns ...).
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

uint64_t summary_count(const json& summary) { return summary.is_null() ? 0 : summary["count"].get<uint64_t>(); }

// One direction of a fio-json job (`d`, "read" or "write") against ioacct's
// own results `r` of the job: a mixed job's from that direction's figures
// (read_latency_ns ...), a job of one direction's from the job's.
void expect_direction(const std::string& what, const json& j, const json& r, const json& fio_job, const std::string& dir) {
  const bool read = dir == "read";
  const json& d = j[dir];
  const uint64_t ios = r[read ? "reads" : "writes"].get<uint64_t>();
  EXPECT_EQ(d["total_ios"], ios) << what << " " << dir;
  EXPECT_EQ(d["io_bytes"], r[read ? "bytes_read" : "bytes_written"]) << what << " " << dir;
  if (ios == 0) {
    EXPECT_EQ(d["lat_ns"]["N"], 0) << what << " " << dir;
    return;
  }
  const bool mixed = !r[dir + "_latency_ns"].is_null();
  const json& lat = mixed ? r[dir + "_latency_ns"] : r["latency_ns"];
  const double window = r["window_s"].get<double>();
  EXPECT_NEAR(d["iops"].get<double>(), static_cast<double>(ios) / window, 1e-6 * static_cast<double>(ios) / window + 1e-9)
      << what << " " << dir;
  EXPECT_EQ(d["lat_ns"]["N"], lat["count"]) << what << " " << dir;
  EXPECT_EQ(d["lat_ns"]["max"], lat["max"]) << what << " " << dir;
  EXPECT_EQ(lat["count"], ios) << what << " " << dir << ": every counted I/O has its lat";
  // Every I/O has a clat: fio's own (each batch submitted in a call of its
  // own), less those complete by the return of that call (all slat);
  // psync's lat is its clat.
  if (mixed) {
    EXPECT_EQ(d["clat_ns"]["N"], summary_count(r[dir + "_clat_ns"])) << what << " " << dir;
    EXPECT_EQ(d["slat_ns"]["N"], summary_count(r[dir + "_slat_ns"])) << what << " " << dir;
  } else {
    const uint64_t at_submit = r["complete_at_submit_ios"].is_null() ? 0 : r["complete_at_submit_ios"].get<uint64_t>();
    EXPECT_EQ(d["clat_ns"]["N"].get<uint64_t>() + at_submit, ios) << what << " " << dir;
  }
  ASSERT_TRUE(d["clat_ns"].contains("percentile")) << what << " " << dir;
  EXPECT_EQ(d["clat_ns"]["percentile"].size(), fio_job[dir]["clat_ns"].value("percentile", json::object()).size())
      << what << " " << dir << ": fio's percentile list";
}

// A job's figures in fio-json (`j`) are ioacct's own results `r` of it.
void expect_figures_are_ioaccts(const std::string& what, const json& j, const json& r, const json& fio_job) {
  for (const char* dir : {"read", "write"}) expect_direction(what, j, r, fio_job, dir);
  const bool mixed = !r["read_latency_ns"].is_null();
  if (mixed) {
    EXPECT_EQ(j["read"]["lat_ns"]["N"].get<uint64_t>() + j["write"]["lat_ns"]["N"].get<uint64_t>(),
              r["latency_ns"]["count"].get<uint64_t>()) << what << ": each I/O in its own direction";
    const uint64_t at_submit = r["complete_at_submit_ios"].is_null() ? 0 : r["complete_at_submit_ios"].get<uint64_t>();
    EXPECT_EQ(j["read"]["clat_ns"]["N"].get<uint64_t>() + j["write"]["clat_ns"]["N"].get<uint64_t>() + at_submit,
              r["latency_ns"]["count"].get<uint64_t>()) << what << ": every I/O has a clat, or is all slat";
    EXPECT_GT(j["read"]["total_ios"].get<uint64_t>(), j["write"]["total_ios"].get<uint64_t>()) << what << ": 70% reads";
  }
  double share = 0;
  for (const char* k : {"latency_ns", "latency_us", "latency_ms"})
    for (const auto& [b, v] : j[k].items()) share += v.get<double>();
  EXPECT_NEAR(share, 100.0, 0.01) << what << ": every I/O is in one latency bin";
}

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
      {"io_uring randrw", "[m]\nrw=randrw\nrwmixread=70\nioengine=io_uring\niodepth=4\ndirect=1\n"},
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
      const json& r = own.contains("jobs") ? own["jobs"][i]["results"] : own["results"];
      expect_figures_are_ioaccts(c.what, ours["jobs"][i], r, fio["jobs"][i]);
    }
    ASSERT_FALSE(ours["disk_util"].empty()) << c.what;
  }
}

}  // namespace
}  // namespace ioacct::test
