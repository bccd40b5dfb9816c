// bench --anatomy in the console and in the JSON: only reads AnatomyResult.
#include <fmt/format.h>


#include "common/units.hpp"
#include "report/report.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

std::string dur(double ns) { return format_duration_ns(ns); }

double sum_ns(const Histogram& h) { return h.mean() * static_cast<double>(h.count()); }

// The words for how each side was linked.
const char* uring_link(const AnatomyResult& a) {
  return a.flavor == AnatomyFlavor::Uring ? "per I/O, by user_data" : "per I/O, by thread (one syscall in flight)";
}
const char* block_link(const AnatomyResult& a) {
  switch (a.block_link) {
    case AnatomyBlockLink::Order: return "per I/O, by order (one I/O in flight per thread)";
    case AnatomyBlockLink::Submission: return "per I/O, by the submission that started the request (O_DIRECT)";
    case AnatomyBlockLink::None: break;
  }
  return "per request only, not linked to I/Os (more than one buffered I/O in flight per thread)";
}

const char* block_link_key(AnatomyBlockLink l) {
  switch (l) {
    case AnatomyBlockLink::Order: return "per_io_order";
    case AnatomyBlockLink::Submission: return "per_io_submission";
    case AnatomyBlockLink::None: break;
  }
  return "per_request";
}

// Per-request distributions, where requests are not linked to I/Os.
bool per_request_shown(const AnatomyResult& a) { return a.block_link == AnatomyBlockLink::None && a.req_queue.count(); }

// Why the table has no block stages, when it has none.
std::optional<std::string> no_block_words(const AnatomyResult& a) {
  if (!a.linked || a.with_request) return std::nullopt;
  if (a.foreign_requests)
    return std::string("no block stages linked: the block requests were started outside the bench threads' "
                       "submissions (io-wq workers)");
  return std::string("no block stages: none of the I/Os started a block request (page-cache hits, or no data moved)");
}

std::string ratio_unmeasured(const AnatomyResult& a) {
  switch (a.iops_ratio_unmeasured) {
    case AnatomyResult::Unmeasured::Compare:
      return "compare keeps the programs on in every run (a variant without --anatomy measures it)";
    case AnatomyResult::Unmeasured::FewPairs:
      return fmt::format("the window held fewer than 2 pairs of {} s slices (--runtime 5s or more measures it)",
                         a.unmeasured_slice_s);
    case AnatomyResult::Unmeasured::CountedByIos:
      return "a run counted by --ios keeps the programs on throughout (--runtime 5s or more measures it)";
    case AnatomyResult::Unmeasured::NoSlices:
      break;
  }
  return "no slices ran";
}

AnatomyStage wakeup_stage(const AnatomyResult& a) {
  return anatomy_wakeup_stage(a.stages[static_cast<int>(AnatomyStage::Completion)].count(),
                              a.stages[static_cast<int>(AnatomyStage::Kernel)].count());
}

json hist_json(const Histogram& h) {
  json buckets = json::array();
  for (const auto& b : h.buckets()) buckets.push_back({b.lo, b.hi, b.count});
  return {{"ios", h.count()}, {"latency_ns", latency_json(h)}, {"histogram_ns", buckets}};
}

}  // namespace

std::string format_anatomy(const AnatomyResult& a) {
  std::string out;
  if (a.unavailable) return fmt::format("  anatomy    not measured: {}\n", *a.unavailable);
  const uint64_t unlinked = a.ios - a.linked;
  out += fmt::format("  anatomy    kernel tracepoints (eBPF); {} of {} I/Os{} linked{}\n", a.linked, a.ios,
                     a.iops_ratio ? " (those of the slices with the programs on)" : "",
                     unlinked ? fmt::format(" ({} not: {} without a submission stamp, {} without a completion stamp, "
                                            "{} resubmitted)",
                                            unlinked, a.unlinked[static_cast<int>(AnatomyUnlinked::NoSubmit)],
                                            a.unlinked[static_cast<int>(AnatomyUnlinked::NoPost)],
                                            a.unlinked[static_cast<int>(AnatomyUnlinked::Retried)])
                              : "");
  const auto no_block = no_block_words(a);
  out += fmt::format("             {} stages linked {}; {}\n", a.flavor == AnatomyFlavor::Uring ? "io_uring" : "syscall",
                     uring_link(a), no_block ? "no block stages (below)" : fmt::format("block stages linked {}", block_link(a)));
  if (!a.linked) return out;
  const double e2e_sum = sum_ns(a.e2e);
  out += fmt::format("             {:<14}{:<44}{:>10}{:>10}{:>10}{:>8}\n", "stage", "from -> to", "p50", "p99", "mean", "share");
  auto row = [&](std::string_view name, std::string from_to, const Histogram& h, bool share, std::string note) {
    out += fmt::format("             {:<14}{:<44}{:>10}{:>10}{:>10}{:>8}{}\n", name, from_to,
                       dur(static_cast<double>(h.quantile(0.5))), dur(static_cast<double>(h.quantile(0.99))),
                       dur(h.mean()), share && e2e_sum > 0 ? fmt::format("{:.1f}%", 100.0 * sum_ns(h) / e2e_sum) : "",
                       note);
  };
  for (int i = 0; i < kAnatomyStages; ++i) {
    const Histogram& h = a.stages[i];
    if (!h.count()) continue;
    const AnatomyStageName n = anatomy_stage_name(static_cast<AnatomyStage>(i), a.flavor);
    row(n.name, fmt::format("{} -> {}", n.from, n.to), h, true,
        h.count() < a.linked ? fmt::format("  ({} I/Os)", h.count()) : "");
    // The wake-up is a part of one stage, shown under it, not a stage.
    if (a.wakeup.count() && static_cast<AnatomyStage>(i) == wakeup_stage(a))
      row("  wake-up", fmt::format("sched_wakeup -> on CPU (inside {})", n.name), a.wakeup, false,
          fmt::format("  ({} I/Os slept)", a.wakeup.count()));
  }
  row("end to end", "user submit stamp -> user reap stamp", a.e2e, true, "");
  if (per_request_shown(a)) {
    row("queue/req", "block_io_start -> block_rq_issue", a.req_queue, false, "  per request");
    row("device/req", "block_rq_issue -> block_rq_complete", a.req_device, false, "  per request");
  }
  if (no_block) out += fmt::format("             {}\n", *no_block);
  if (a.foreign_requests)
    out += fmt::format("             {} block requests were started outside the bench threads' submissions "
                       "(io-wq workers) and are in no stage\n", a.foreign_requests);
  if (a.end_unseen)
    out += fmt::format("             {} I/Os' block request completed where no BPF program ran: their kernel time is "
                       "the `in kernel` stage\n             (the kernel runs none on top of some tasks; "
                       "docs/design.md, \"Lost events\")\n", a.end_unseen);
  out += fmt::format("             stages sum to end to end within 1 us for {} of {} linked I/Os "
                     "(largest residual {} ns)\n", a.linked - a.residual_over_1us, a.linked, a.residual_max);
  out += fmt::format("             CPU idle state at wake-up: {}\n", a.cpuidle.value_or("not available"));
  if (const auto reap = a.reap_ns_per_io())
    out += fmt::format("             cost: the reaping thread's split {} per I/O (the copy timed on 1 I/O in {}, the "
                       "split per batch; clock reads included)\n",
                       dur(*reap), AnatomyResult::kReapSample);
  if (a.bpf_run_ns && a.ios)
    out += fmt::format("             cost: the programs ran {} per measured I/O ({:.1f} runs each, every task's "
                       "tracepoint hits included; the kernel's BPF statistics, on for the run)\n",
                       dur(static_cast<double>(*a.bpf_run_ns) / static_cast<double>(a.ios)),
                       static_cast<double>(a.bpf_runs) / static_cast<double>(a.ios));
  else
    out += "             cost: the programs' run time is not measured (the kernel's BPF statistics need "
           "CAP_SYS_ADMIN, or sysctl kernel.bpf_stats_enabled=1); bench/anatomy_cost.sh measures the whole price\n";
  if (const auto& q = a.iops_ratio)
    out += fmt::format("             cost: IOPS with the programs {:.3f}x of without them ({}-{}x over {} pairs of {:.0f} s "
                       "slices, on and off in turn in this run; the stages are the on slices' I/Os, {:.0f}% of them, "
                       "and the run's other figures cover both)\n",
                       q->median, fmt::format("{:.3f}", q->min), fmt::format("{:.3f}", q->max), q->pairs, q->slice_s,
                       100.0 * q->on_share);
  else
    out += fmt::format("             cost: the IOPS ratio to a run without the programs is not measured: {}\n",
                       ratio_unmeasured(a));
  return out;
}

json anatomy_json(const AnatomyResult& a) {
  json j;
  j["available"] = !a.unavailable;
  j["unavailable"] = a.unavailable ? json(*a.unavailable) : json(nullptr);
  j["flavor"] = a.flavor == AnatomyFlavor::Uring ? "io_uring" : "syscall";
  if (a.unavailable) {
    for (const char* k : {"ios", "linked", "unlinked", "linking", "stages", "end_to_end", "wakeup", "per_request",
                          "block_stages", "residual", "foreign_block_requests", "block_completions_unseen", "cpuidle",
                          "bpf_run_ns_per_io", "bpf_runs_per_io", "reap_ns_per_io", "iops_ratio", "iops_ratio_unmeasured"})
      j[k] = nullptr;
    return j;
  }
  j["ios"] = a.ios;
  j["linked"] = a.linked;
  j["unlinked"] = {{"no_submit_stamp", a.unlinked[static_cast<int>(AnatomyUnlinked::NoSubmit)]},
                   {"no_completion_stamp", a.unlinked[static_cast<int>(AnatomyUnlinked::NoPost)]},
                   {"resubmitted", a.unlinked[static_cast<int>(AnatomyUnlinked::Retried)]}};
  const auto no_block = no_block_words(a);
  j["linking"] = {{"io_uring", a.flavor == AnatomyFlavor::Uring ? "per_io_user_data" : "per_io_thread"},
                  {"block", no_block ? "none" : block_link_key(a.block_link)}};
  const double e2e_sum = sum_ns(a.e2e);
  json stages = json::array();
  for (int i = 0; i < kAnatomyStages; ++i) {
    const Histogram& h = a.stages[i];
    if (!h.count()) continue;
    const AnatomyStageName n = anatomy_stage_name(static_cast<AnatomyStage>(i), a.flavor);
    json s = hist_json(h);
    s["stage"] = n.name;
    s["from"] = n.from;
    s["to"] = n.to;
    s["share_of_end_to_end"] = e2e_sum > 0 ? json(sum_ns(h) / e2e_sum) : json(nullptr);
    stages.push_back(s);
  }
  j["stages"] = stages;
  j["end_to_end"] = hist_json(a.e2e);
  if (a.wakeup.count()) {
    j["wakeup"] = hist_json(a.wakeup);
    j["wakeup"]["inside"] = std::string(anatomy_stage_name(wakeup_stage(a), a.flavor).name);
  } else {
    j["wakeup"] = nullptr;
  }
  j["per_request"] = per_request_shown(a)
                         ? json{{"queue", hist_json(a.req_queue)}, {"device", hist_json(a.req_device)}}
                         : json(nullptr);
  j["block_stages"] = no_block ? json(*no_block) : json(nullptr);
  j["residual"] = {{"max_ns", a.residual_max}, {"over_1us", a.residual_over_1us}};
  j["foreign_block_requests"] = a.foreign_requests;
  j["block_completions_unseen"] = a.end_unseen;
  j["cpuidle"] = a.cpuidle ? json(*a.cpuidle) : json(nullptr);
  const bool cost = a.bpf_run_ns && a.ios;
  j["bpf_run_ns_per_io"] = cost ? json(static_cast<double>(*a.bpf_run_ns) / static_cast<double>(a.ios)) : json(nullptr);
  j["bpf_runs_per_io"] = cost ? json(static_cast<double>(a.bpf_runs) / static_cast<double>(a.ios)) : json(nullptr);
  const auto reap = a.reap_ns_per_io();
  j["reap_ns_per_io"] = reap ? json(*reap) : json(nullptr);
  if (const auto& q = a.iops_ratio)
    j["iops_ratio"] = {{"median", q->median}, {"min", q->min},   {"max", q->max},
                       {"pairs", q->pairs},   {"slice_s", q->slice_s}, {"on_share", q->on_share}};
  else
    j["iops_ratio"] = nullptr;
  j["iops_ratio_unmeasured"] = a.iops_ratio ? json(nullptr) : json(ratio_unmeasured(a));
  return j;
}

}  // namespace ioacct
