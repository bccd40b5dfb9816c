#include <cmath>
#include <optional>

#include "common/units.hpp"
#include "report/json_opt.hpp"
#include "report/report.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

// The device's time at each depth bucket, % of the window (null: not measured).
json depth_json(const std::vector<double>& pct, const std::vector<uint64_t>& low) {
  if (pct.empty() || pct.size() != low.size()) return nullptr;
  json by = json::array();
  for (size_t k = 0; k < pct.size(); ++k)
    by.push_back({{"min", low[k]}, {"max", k + 1 < low.size() ? json(low[k + 1] - 1) : json(nullptr)}, {"pct", pct[k]}});
  return by;
}

// --rate-iops R,W,T: each direction's pace per thread (null: unpaced), or
// null when the job is not paced by direction.
json rate_by_direction_json(const JobSpec& job) {
  if (!job.paced_by_direction()) return nullptr;
  const std::array<double, 3> r = job.rate_by_direction();
  const auto one = [](double v) { return v > 0 ? json(v) : json(nullptr); };
  return {{"read", one(r[0])}, {"write", one(r[1])}, {"trim", one(r[2])}};
}

// --rate-min / --rate-iops-min: each direction's floor, null where none.
json rate_floor_json(const JobSpec& job) {
  if (!job.has_rate_floor()) return nullptr;
  const auto dirs = [](const std::array<uint64_t, 3>& v) {
    const auto one = [](uint64_t x) { return x ? json(x) : json(nullptr); };
    return json{{"read", one(v[0])}, {"write", one(v[1])}, {"trim", one(v[2])}};
  };
  return {{"min_bytes_per_s", dirs(job.rate_min_bw)},
          {"min_ios_per_s", dirs(job.rate_min_iops)},
          {"cycle_s", static_cast<double>(job.rate_cycle.count()) / 1e9}};
}

json uring_options_json(const JobSpec& job) {
  if (job.engine == EngineKind::Psync) return nullptr;
  const UringOptions& u = job.uring;
  auto wish = [](FlagWish w) { return w == FlagWish::On ? "on" : w == FlagWish::Off ? "off" : "default"; };
  return {{"sqpoll", u.sqpoll},
          {"sq_cpu", u.sq_cpu >= 0 ? json(u.sq_cpu) : json(nullptr)},
          {"sq_idle_ms", u.sq_idle_ms ? json(u.sq_idle_ms) : json(nullptr)},
          {"sq_shared", job.sq_shared},
          {"iopoll", u.iopoll},
          {"fixed_files", wish(u.fixed_files)},
          {"fixed_bufs", wish(u.fixed_bufs)},
          {"register_ring", wish(u.register_ring)},
          {"vectored", u.vectored},
          {"nowait", u.nowait},
          {"force_async", u.force_async},
          {"no_iowait", u.no_iowait},
          {"wait", u.wait == WaitMode::Sleep ? "sleep" : u.wait == WaitMode::Spin ? "spin" : "hybrid"},
          {"hybrid_spin_ns", u.wait == WaitMode::Hybrid ? json(u.hybrid_spin_ns) : json(nullptr)},
          {"single_issuer", wish(u.single_issuer)},
          {"defer_taskrun", wish(u.defer_taskrun)},
          {"coop_taskrun", wish(u.coop_taskrun)},
          {"no_sqarray", wish(u.no_sqarray)}};
}

json errors_json(const std::map<int, uint64_t>& errors) {
  json e = json::object();
  for (const auto& [k, v] : errors) e[error_key_name(k)] = v;
  return e;
}

json syscalls_json(const EngineCounters& c) {
  auto ratio = [](uint64_t a, uint64_t b) -> json { return b ? json(static_cast<double>(a) / static_cast<double>(b)) : json(nullptr); };
  return {{"total", c.syscalls},
          {"submit", c.submit_syscalls},
          {"reap", c.reap_syscalls},
          {"submitted_ios", c.submitted},
          {"reaped_ios", c.reaped},
          {"ios_per_submit", ratio(c.submitted, c.submit_syscalls)},
          {"ios_per_reap", ratio(c.reaped, c.reap_syscalls)}};
}

json opt_latency_json(const std::shared_ptr<Histogram>& h) { return h ? latency_json(*h) : json(nullptr); }

// How refills were submitted (--submit-policy), or null where the run did
// not refill as reaped.
json submission_json(const RefillResult& r) {
  if (r.decided_by.empty()) return nullptr;
  const uint64_t all = r.each_ns + r.pass_ns;
  return {{"decided_by", r.decided_by},
          {"each_share", all ? json(static_cast<double>(r.each_ns) / static_cast<double>(all)) : json(nullptr)},
          {"probes", r.probes},
          {"probes_chose_each", r.chose_each},
          {"probes_extended", r.extended},
          {"probes_cut_short", r.cut_short},
          {"probes_unconfirmed", r.unconfirmed},
          {"probe_ratios", r.probe_ratios}};
}

json counts_json(const ThreadResult& t, uint64_t window_ns, bool moves_data) {
  const uint64_t bytes = t.bytes_read + t.bytes_written;
  return {{"window_s", static_cast<double>(window_ns) / 1e9},
          {"ios", t.ios},
          {"reads", t.reads},
          {"writes", t.writes},
          {"trims", t.trims},
          {"syncs", t.syncs},
          {"bytes", bytes},
          {"bytes_read", t.bytes_read},
          {"bytes_written", t.bytes_written},
          {"bytes_trimmed", t.bytes_trimmed},
          {"iops", per_s(t.ios, window_ns)},
          {"bytes_per_s", moves_data ? json(per_s(bytes, window_ns)) : json(nullptr)},
          {"latency_ns", latency_json(*t.latency)},
          {"slat_ns", opt_latency_json(t.slat)},
          {"clat_ns", opt_latency_json(t.clat)},
          {"unsplit_ios", t.slat ? json(t.slat_unsplit) : json(nullptr)},
          {"complete_at_submit_ios", t.slat ? json(t.clat_at_submit) : json(nullptr)},
          {"read_latency_ns", opt_latency_json(t.read_lat.lat)},
          {"write_latency_ns", opt_latency_json(t.write_lat.lat)},
          {"read_slat_ns", opt_latency_json(t.read_lat.slat)},
          {"read_clat_ns", opt_latency_json(t.read_lat.clat)},
          {"write_slat_ns", opt_latency_json(t.write_lat.slat)},
          {"write_clat_ns", opt_latency_json(t.write_lat.clat)},
          {"trim_latency_ns", opt_latency_json(t.trim_latency)},
          {"sync_latency_ns", opt_latency_json(t.sync_latency)},
          {"syscalls", syscalls_json(t.engine)},
          {"errors", errors_json(t.errors)},
          {"short_resubmits", t.short_resubmits},
          {"eagain_retries", t.eagain_retries},
          {"latency_target_depth", t.latency_depth ? json(t.latency_depth) : json(nullptr)},
          {"latency_target_found", t.latency_depth ? json(t.latency_found) : json(nullptr)},
          {"rate_floor_missed", t.floor_missed.empty() ? json(nullptr) : json(t.floor_missed)},
          {"submission", submission_json(t.refill)}};
}

json histogram_json(const Histogram& h) {
  json hist = json::array();
  for (const auto& b : h.buckets()) hist.push_back({b.lo, b.hi, b.count});
  return hist;
}

json setup_flags_json(uint32_t flags) {
  json a = json::array();
  for (uint32_t bit = 1; bit; bit <<= 1)
    if (flags & bit) a.push_back(setup_flag_names(bit));
  return a;
}

// --bssplit's sizes and weights; null when every I/O is bs.
json bssplit_json(const std::vector<BsShare>& split) {
  if (split.empty()) return nullptr;
  json a = json::array();
  for (const BsShare& s : split) a.push_back({{"size", s.size}, {"weight", s.weight}});
  return a;
}

}  // namespace

json job_options_json(const JobSpec& job) {
  return {
      {"name", job.name},
      {"rw", rw_name(job.rw)},
      {"rwmix_read", job.rwmix_read},
      {"bs", job.bs},
      {"bs_by_direction", job.bs_dir[0] ? json{{"read", job.bs_dir[0]}, {"write", job.bs_dir[1]}, {"trim", job.bs_dir[2]}}
                                        : json(nullptr)},
      {"bssplit_by_direction", job.bs_split_dir[0].empty() ? json(nullptr)
                                                           : json{{"read", bssplit_json(job.bs_split_dir[0])},
                                                                  {"write", bssplit_json(job.bs_split_dir[1])},
                                                                  {"trim", bssplit_json(job.bs_split_dir[2])}}},
      {"bssplit", bssplit_json(job.bs_split)},
      {"blockalign", job.blockalign ? json(job.blockalign) : json(nullptr)},
      {"iodepth", job.depth_per_thread() * job.threads},
      {"iodepth_per_thread", job.depth_per_thread()},
      {"submit_batch", job.submit_batch_eff()},
      {"complete_batch", job.complete_batch_eff()},
      {"complete_max", job.complete_max ? json(job.complete_max) : json(nullptr)},
      {"batching", job.lockstep() ? "lockstep" : "refill"},
      {"submit_policy", job.submit_policy_applies() ? json(submit_policy_name(job.submit_policy)) : json(nullptr)},
      {"direct", job.direct},
      {"dsync", job.dsync},
      {"size", job.size ? json(*job.size) : job.targets.empty() ? json(job.temp_size) : json(nullptr)},
      {"offset", job.offset},
      {"runtime_s", job.runtime ? json(static_cast<double>(job.runtime->count()) / 1e9) : json(nullptr)},
      {"ios", job.ios ? json(*job.ios) : json(nullptr)},
      {"ramp_s", static_cast<double>(job.ramp.count()) / 1e9},
      {"threads", job.threads},
      {"cpus", job.cpus},
      {"engine", engine_name(job.engine, job.sync.call)},
      {"rate_iops_per_thread", job.rate_per_thread() > 0 ? json(job.rate_per_thread()) : json(nullptr)},
      {"rate_iops_by_direction", rate_by_direction_json(job)},
      {"rate_process", job.rate_per_thread() > 0 || job.paced_by_direction()
                           ? json(job.rate_process == RateProcess::Poisson ? "poisson" : "linear")
                           : json(nullptr)},
      {"rate_floor", rate_floor_json(job)},
      {"latency_target", job.latency_target.count()
                             ? json{{"target_ns", job.latency_target.count()},
                                    {"window_s", static_cast<double>(job.latency_window.count()) / 1e9},
                                    {"percentile", job.latency_percentile},
                                    {"run", job.latency_run}}
                             : json(nullptr)},
      {"seed", job.seed},
      {"max_errors", job.max_errors},
      {"uring", uring_options_json(job)},
      {"sync", job.engine == EngineKind::Psync ? json{{"hipri", job.sync.hipri}, {"hipri_percentage", job.sync.hipri_pct}, {"nowait", job.sync.nowait}} : json(nullptr)},
      {"log_interval_s", static_cast<double>(job.log_interval.count()) / 1e9},
      {"acct", acct_name(job.acct)},
      {"verify", job.verify},
      {"anatomy", job.anatomy},
      {"verify_during", job.verify_during},
      {"rwmix_trim", job.rwmix_trim},
      {"random_distribution", distribution_name(job.distribution)},
      {"fsync", job.fsync_every},
      {"fdatasync", job.fdatasync_every},
      {"split_submit", job.split_submit},
      {"startdelay_s", static_cast<double>(job.startdelay.count()) / 1e9},
      {"stonewall", job.stonewall},
  };
}

json latency_json(const Histogram& h) {
  if (!h.count()) return nullptr;
  return {{"count", h.count()},           {"min", h.min()},
          {"mean", h.mean()},             {"stdev", h.stdev()},
          {"p50", h.quantile(0.5)},
          {"p90", h.quantile(0.9)},       {"p99", h.quantile(0.99)},
          {"p99.9", h.quantile(0.999)},   {"p99.99", h.quantile(0.9999)},
          {"max", h.max()}};
}

json device_identity_json(const TargetInfo& t) {
  if (t.device.empty() || !t.identity) return nullptr;
  const DeviceIdentity& id = *t.identity;
  return {{"disk", id.disk.empty() ? json(nullptr) : json(id.disk)},
          {"model", id.model ? json(*id.model) : json(nullptr)},
          {"firmware", id.firmware ? json(*id.firmware) : json(nullptr)}};
}

const char* stop_reason_name(StopReason r) noexcept {
  switch (r) {
    case StopReason::Runtime: return "runtime";
    case StopReason::Ios: return "ios";
    case StopReason::Interrupted: return "interrupted";
    case StopReason::Errors: return "errors";
    case StopReason::Fatal: return "fatal";
  }
  return "?";
}

const char* device_role_name(DeviceRole r) noexcept {
  return r == DeviceRole::Target ? "target" : "underlying";
}

json run_context_json(const RunContext& ctx, const std::vector<std::string>& argv) {
  return {
      {"ioacct_version", IOACCT_VERSION},
      {"schema_version", kSchemaVersion},
      {"command_line", argv},
      {"host", ctx.host},
      {"kernel", ctx.kernel},
      {"cpu_model", ctx.cpu_model},
      {"cpus", ctx.cpus},
      {"cpus_allowed", ctx.cpus_allowed},
      {"start_time", nullptr},
      {"start_monotonic_ns", nullptr},
      {"boot_id", ctx.boot_id.empty() ? json(nullptr) : json(ctx.boot_id)},
      {"tags", ctx.tags},
      {"clock", ctx.clock ? json{{"synchronised", ctx.clock->synchronised},
                                 {"maxerror_us", ctx.clock->maxerror_us},
                                 {"esterror_us", ctx.clock->esterror_us},
                                 {"state", ctx.clock->state}}
                          : json(nullptr)},
  };
}

json to_json(const JobSpec& job, const RunResult* r, const RunContext& ctx, const std::vector<std::string>& argv) {
  return to_json(std::vector<JobSpec>{job}, r, ctx, argv);
}

namespace {

// One job: its options, as always. Several: the run's own options, each
// job's in jobs[].options.
json run_options_json(const std::vector<JobSpec>& jobs) {
  const JobSpec& job = jobs.front();  // the run's own options are the first job's
  if (jobs.size() == 1) return job_options_json(job);
  return {{"jobs", jobs.size()},
          {"ramp_s", static_cast<double>(job.ramp.count()) / 1e9},
          {"max_errors", job.max_errors},
          {"log_interval_s", static_cast<double>(job.log_interval.count()) / 1e9},
          {"acct", job.acct == AcctLevel::Off ? "off" : job.acct == AcctLevel::Basic ? "basic" : "full"}};
}

// Interrupted before the run started: each job's options, no figures.
json never_ran_json(json out, const std::vector<JobSpec>& jobs) {
  out["interrupted"] = true;
  out["stop_reason"] = stop_reason_name(StopReason::Interrupted);
  out["results"] = nullptr;
  out["threads"] = json::array();
  json js = json::array();
  for (const JobSpec& j : jobs) js.push_back({{"name", j.name}, {"options", job_options_json(j)}, {"results", nullptr}});
  out["jobs"] = js;
  return out;
}

// What the run itself adds to the context block: when it started, the
// engine it got, its targets.
void add_run_context(json& context, const RunResult& r) {
  context["start_time"] = r.start_wall_ns ? json(format_rfc3339(r.start_wall_ns)) : json(nullptr);
  context["start_monotonic_ns"] = r.start_wall_ns ? json(r.start_mono_ns) : json(nullptr);
  context["start_at"] = nullptr;  // set by to_json from the run's options
  context["engine_description"] = r.engine_desc;
  context["setup_flags"] = setup_flags_json(r.setup_flags);
  context["engine_fallbacks"] = r.engine_fallbacks;
  json targets = json::array();
  for (const auto& t : r.targets)
    targets.push_back({{"path", t.path},
                       {"device", t.device.empty() ? json(nullptr) : json(t.device)},
                       {"device_identity", device_identity_json(t)},
                       {"block_device", t.is_block},
                       {"temporary", t.is_temp},
                       {"offset", t.base},
                       {"size", t.range},
                       {"dio_align", t.dio_align}});
  context["targets"] = targets;
}

// The process's CPU time ("cpu"), and what --verify found ("verify").
void add_cpu_and_verify(json& results, const RunResult& r) {
  if (r.cpu) {
    const double cpu_s = r.cpu->user_s + r.cpu->sys_s;
    results["cpu"] = {{"user_s", r.cpu->user_s},
                      {"sys_s", r.cpu->sys_s},
                      {"per_io_us", r.total.ios ? json(cpu_s * 1e6 / static_cast<double>(r.total.ios)) : json(nullptr)},
                      {"voluntary_ctxsw", r.cpu->vol_ctxsw},
                      {"involuntary_ctxsw", r.cpu->invol_ctxsw}};
  } else {
    results["cpu"] = nullptr;
  }
  if (r.verify) {
    json findings = json::array();
    for (const auto& f : r.verify->findings)
      findings.push_back({{"offset", f.offset}, {"kind", f.kind}, {"expected", f.expected}, {"found", f.found}});
    results["verify"] = {{"checked_during", r.verify->checked_during},
                         {"checked_after", r.verify->checked_after},
                         {"blocks_written", r.verify->written},
                         {"final_pass_skipped", r.verify_skipped},
                         {"mismatches", r.verify->mismatches},
                         {"findings", findings}};
  } else {
    results["verify"] = nullptr;
  }
}

// --acct basic and up: the CPU split, SQ threads, devices, exact busy time,
// the system's idle and iowait.
void add_accounting(json& results, const RunResult& r) {
  if (r.accounting) {
    const Accounting& a = *r.accounting;
    results["cpu"]["breakdown"] = {{"submitters_s", a.cpu.submitters_s}, {"sq_threads_s", a.cpu.sq_threads_s},
                                   {"iowq_s", a.cpu.iowq_s}, {"other_s", a.cpu.other_s}, {"total_s", a.cpu.total_s}};
    json sq = json::array();
    for (const auto& t : a.sq_threads)
      sq.push_back({{"tid", t.tid}, {"rings", t.rings}, {"cpu_s", t.cpu_s},
                    {"cpu_fraction", a.interval_s > 0 ? json(t.cpu_s / a.interval_s) : json(nullptr)},
                    {"work_s", t.work_s ? json(*t.work_s) : json(nullptr)},
                    {"work_ratio", opt_json(t.work_s ? sq_work_ratio(*t.work_s, t.cpu_s) : std::nullopt)},
                    {"cpu_per_io_us", r.total.ios ? json(t.cpu_s * 1e6 / static_cast<double>(r.total.ios)) : json(nullptr)},
                    {"source", t.source},
                    {"sq_total_time_process_wide_s", opt_json(t.process_wide_s)}});
    results["sq_threads"] = sq;
    json devs = json::array();
    for (const auto& d : a.devices) {
      const auto& x = d.row;
      devs.push_back({{"device", x.device}, {"role", device_role_name(d.role)}, {"reads", x.reads}, {"writes", x.writes},
                      {"r_s", x.r_s}, {"w_s", x.w_s}, {"rkB_s", x.rkB_s}, {"wkB_s", x.wkB_s},
                      {"r_await_ms", x.r_await}, {"w_await_ms", x.w_await}, {"aqu_sz", x.aqu_sz},
                      {"areq_sz_kB", x.areq_sz}, {"util_pct", x.util},
                      {"busy_pct", d.busy_pct ? json(*d.busy_pct) : json(nullptr)},
                      {"dev_pct", d.dev_pct ? json(*d.dev_pct) : json(nullptr)},
                      {"completions_lost", d.lost ? json(*d.lost) : json(nullptr)},
                      {"completions_invisible", d.invisible ? json(*d.invisible) : json(nullptr)},
                      {"busy_unsure_pct", d.unsure_pct ? json(*d.unsure_pct) : json(nullptr)},
                      {"by_depth", depth_json(d.depth_pct, a.exact_depth_low)}});
    }
    results["devices"] = devs;
    results["exact_busy"] = {{"source", a.exact_source ? json(*a.exact_source) : json(nullptr)},
                             {"unavailable", a.exact_unavailable ? json(*a.exact_unavailable) : json(nullptr)}};
    json idle = nullptr;
    if (a.system.cpuidle_s) idle = *a.system.cpuidle_s;
    results["system"] = {{"interval_s", a.interval_s},
                         {"iowait_pct", a.system.iowait_pct ? json(*a.system.iowait_pct) : json(nullptr)},
                         {"idle_pct", a.system.idle_pct ? json(*a.system.idle_pct) : json(nullptr)},
                         {"cpuidle_s", idle}};
  } else {
    results["sq_threads"] = nullptr;
    results["devices"] = nullptr;
    results["system"] = nullptr;
  }
}

// ioacct's own I/O in flight, by depth.
json inflight_json(const RunResult& r) {
  json results;
  if (r.inflight && r.inflight->window_ns) {
    const InflightResult& f = *r.inflight;
    json by = json::array();
    for (int b = 0; b < InflightResult::kBuckets; ++b) {
      const uint64_t lo = InflightResult::bucket_low(b);
      by.push_back({{"min", lo}, {"max", b <= 1 ? json(lo) : b == InflightResult::kBuckets - 1 ? json(nullptr) : json(2 * lo - 1)},
                    {"s", static_cast<double>(f.by_depth_ns[b]) / 1e9}});
    }
    // "busy" is the device's figure (devices[].busy_pct); this is ioacct's own
    // I/O in flight. busy_s/busy_pct are its old names, kept for schema 2 only.
    const double own_s = static_cast<double>(f.busy_ns) / 1e9;
    const double own_pct = 100.0 * static_cast<double>(f.busy_ns) / static_cast<double>(f.window_ns);
    results["inflight"] = {{"window_s", static_cast<double>(f.window_ns) / 1e9},
                           {"own_inflight_s", own_s},
                           {"own_inflight_pct", own_pct},
                           {"busy_s", own_s},
                           {"busy_pct", own_pct},
                           {"mean", static_cast<double>(f.inflight_ns) / static_cast<double>(f.window_ns)},
                           {"by_depth", by},
                           {"log_waits", f.log_waits}};
  } else {
    results["inflight"] = nullptr;
  }
  return results["inflight"];
}

// The wall clock (ns since the epoch) at the window's opening plus
// `after_ns`: the monotonic stamps placed by the anchor read with the run's
// start. None when the window never opened.
std::optional<int64_t> window_wall_ns(const RunResult& r, uint64_t after_ns) {
  if (!r.start_wall_ns || !r.total.window_start_ns) return std::nullopt;
  return r.start_wall_ns + static_cast<int64_t>(r.total.window_start_ns + after_ns - r.start_mono_ns);
}

// The window's edges on the wall clock: what a merge of several hosts' runs
// lines up.
void add_window_edges(json& results, const RunResult& r) {
  const std::optional<int64_t> open = window_wall_ns(r, 0), close = window_wall_ns(r, r.window_ns);
  results["window_start_unix_ns"] = open ? json(*open) : json(nullptr);
  results["window_end_unix_ns"] = close ? json(*close) : json(nullptr);
  results["window_start_time"] = open ? json(format_rfc3339_ns(*open)) : json(nullptr);
  results["window_end_time"] = close ? json(format_rfc3339_ns(*close)) : json(nullptr);
}

// The time series (--log-interval).
json series_json(const JobSpec& job, const RunResult& r, bool moves_data) {
  json results;
  if (r.series) {
    json samples = json::array();
    const std::optional<int64_t> opened = window_wall_ns(r, 0);
    for (const auto& x : r.series->samples())
      samples.push_back({{"t_s", x.t_s}, {"dur_s", x.dur_s}, {"iops", x.iops},
                         {"end_unix_ns", opened ? json(*opened + std::llround(x.t_s * 1e9)) : json(nullptr)},
                         {"bytes_per_s", moves_data ? json(x.bytes_per_s) : json(nullptr)},
                         {"p50_ns", opt_json(x.p50_ns)}, {"p99_ns", opt_json(x.p99_ns)}, {"inflight", x.inflight},
                         {"own_inflight_pct", opt_json(x.own_inflight_pct)}, {"busy_pct", opt_json(x.own_inflight_pct)},
                         {"device_busy_pct", opt_json(x.device_busy_pct)}, {"cpu_pct", opt_json(x.cpu_pct)}, {"sq_cpu_pct", opt_json(x.sq_cpu_pct)},
                         {"sq_work_pct", opt_json(x.sq_work_pct)}, {"util_pct", opt_json(x.util_pct)}});
    results["series"] = {{"interval_s", static_cast<double>(job.log_interval.count()) / 1e9},
                         {"keep_every", r.series->keep_every()},
                         {"max_samples", Series::kMaxSamples},
                         {"samples", samples}};
  } else {
    results["series"] = nullptr;
  }
  return results["series"];
}

// The whole run's figures.
json results_json(const JobSpec& job, const RunResult& r, bool moves_data) {
  json results = counts_json(r.total, r.window_ns, moves_data);
  results["iodepth"] = r.total.depth;
  add_window_edges(results, r);
  add_cpu_and_verify(results, r);
  if (job.faults.any()) {
    const auto& f = r.total.faults;
    results["faults_injected"] = {{"EIO", f.eio}, {"short", f.short_io}, {"EAGAIN", f.eagain}, {"delayed", f.delayed}};
  }
  add_accounting(results, r);
  results["inflight"] = inflight_json(r);
  results["series"] = series_json(job, r, moves_data);
  results["first_error"] = r.first_error.empty() ? json(nullptr) : json(r.first_error);
  results["anatomy"] = r.anatomy ? anatomy_json(*r.anatomy) : json(nullptr);
  results["latency_histogram_ns"] = histogram_json(*r.total.latency);
  return results;
}

json threads_json(const RunResult& r, bool moves_data) {
  json threads = json::array();
  for (const auto& t : r.threads) {
    json j = counts_json(t, t.window_ns, moves_data);
    j["index"] = t.index;
    j["job"] = t.job;
    j["pinned_cpu"] = t.cpu >= 0 ? json(t.cpu) : json(nullptr);
    j["iodepth"] = t.depth;
    // Each thread's own, so that a run can be split into per-thread results
    // and merged back (the merge's exactness test).
    j["latency_histogram_ns"] = histogram_json(*t.latency);
    threads.push_back(j);
  }
  return threads;
}

// Each job's own figures, over its own window.
json jobs_json(const std::vector<JobSpec>& jobs, const RunResult& r) {
  json js = json::array();
  for (size_t i = 0; i < r.jobs.size() && i < jobs.size(); ++i) {
    const JobResult& jr = r.jobs[i];
    json res = counts_json(jr.total, jr.window_ns, engine_traits(jobs[i].engine).moves_data);
    res["iodepth"] = jr.total.depth;
    if (jr.cpu) {
      const JobCpu& c = *jr.cpu;
      res["cpu"] = {{"submitters_s", c.submitters_s}, {"sq_threads_s", c.sq_threads_s}, {"iowq_s", c.iowq_s},
                    {"total_s", c.total_s}, {"by_thread_s", c.by_thread_s},
                    {"per_io_us", jr.total.ios ? json(c.total_s * 1e6 / static_cast<double>(jr.total.ios)) : json(nullptr)}};
    } else {
      res["cpu"] = nullptr;
    }
    res["latency_histogram_ns"] = histogram_json(*jr.total.latency);
    // When its window opened, from the run's first window: a --startdelay,
    // or the jobs before a stonewall.
    res["start_s"] = jr.total.window_start_ns && r.total.window_start_ns
                         ? json(static_cast<double>(jr.total.window_start_ns - r.total.window_start_ns) / 1e9)
                         : json(nullptr);
    json job_targets = json::array();
    for (const auto& t : jr.targets) job_targets.push_back({{"path", t.path}, {"offset", t.base}, {"size", t.range}});
    js.push_back({{"name", jr.name},
                  {"options", job_options_json(jobs[i])},
                  {"engine_description", jr.engine_desc},
                  {"setup_flags", setup_flags_json(jr.setup_flags)},
                  {"targets", job_targets},
                  {"first_thread", jr.first_thread},
                  {"threads", jr.threads},
                  {"results", res}});
  }
  return js;
}

}  // namespace

json to_json(const std::vector<JobSpec>& jobs, const RunResult* r, const RunContext& ctx,
             const std::vector<std::string>& argv) {
  json context = run_context_json(ctx, argv);
  context["options"] = run_options_json(jobs);
  json out = {{"context", context}};
  if (!r) return never_ran_json(std::move(out), jobs);
  add_run_context(out["context"], *r);
  if (jobs.front().start_at_unix_ns) out["context"]["start_at"] = format_rfc3339_ns(jobs.front().start_at_unix_ns);
  bool moves_data = false;
  for (const JobSpec& j : jobs) moves_data |= engine_traits(j.engine).moves_data;
  out["interrupted"] = r->interrupted;
  out["stop_reason"] = stop_reason_name(r->stop_reason);
  out["results"] = results_json(jobs.front(), *r, moves_data);
  out["threads"] = threads_json(*r, moves_data);
  out["jobs"] = jobs_json(jobs, *r);
  return out;
}

}  // namespace ioacct
