#include "trace/anatomy.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <filesystem>

#include "common/errors.hpp"
#include "common/files.hpp"
#include "trace/bpf/anatomy.skel.h"
#include "trace/bpf/anatomy_shared.h"
#include "trace/bpf/libbpf_log.hpp"
#include "trace/bpf/map_view.hpp"

namespace ioacct {
namespace {

std::string why_not(const char* step, int err) {
  err = err < 0 ? -err : err;
  // EACCES is also the verifier's "no": a permission problem only without root.
  if (err == EPERM || (err == EACCES && geteuid() != 0))
    return "no permission to load BPF programs (needs root or CAP_BPF+CAP_PERFMON): run as root for the anatomy";
  if (err == ESRCH && std::string_view(step) == "load")
    return "this kernel lacks a tracepoint the anatomy needs (io_uring_submit_req, io_uring_complete, "
           "block_io_start (6.5+), block_rq_issue, block_rq_complete, sched_wakeup, sched_switch)";
  return fmt::format("cannot {} the BPF programs for the anatomy: {}", step, errno_text(err));
}

struct SkelDeleter {
  void operator()(anatomy_bpf* s) const { anatomy_bpf__destroy(s); }
};

// The idle-state figure: per-CPU cpuidle states are what it would read.
std::string cpuidle_words() {
  std::error_code ec;
  if (!std::filesystem::exists("/sys/devices/system/cpu/cpu0/cpuidle", ec))
    return "not available (no cpuidle states in sysfs)";
  return "not measured (the anatomy does not follow power:cpu_idle)";
}

}  // namespace

struct AnatomyTracer::Impl {
  // Declared first, destroyed last: the skeleton detaches before the maps
  // it points into are unmapped.
  MapView slots, threads;
  std::unique_ptr<anatomy_bpf, SkelDeleter> skel;
  std::vector<uint32_t> tid_used;  // the tids table's entries, as filled: 0 free
  // The kernel's BPF run-time statistics, on while this is open (the kernel
  // counts its holders, so closing it, or the process ending, restores them).
  int stats_fd = -1;
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (stats_fd >= 0) close(stats_fd);
  }
};

void AnatomyResult::merge(const AnatomyResult& o) {
  ios += o.ios;
  linked += o.linked;
  for (size_t i = 0; i < unlinked.size(); ++i) unlinked[i] += o.unlinked[i];
  for (int i = 0; i < kAnatomyStages; ++i) stages[i].merge(o.stages[i]);
  e2e.merge(o.e2e);
  wakeup.merge(o.wakeup);
  req_queue.merge(o.req_queue);
  req_device.merge(o.req_device);
  with_request += o.with_request;
  block_linked += o.block_linked;
  end_unseen += o.end_unseen;
  residual_max = std::max(residual_max, o.residual_max);
  residual_over_1us += o.residual_over_1us;
  foreign_requests += o.foreign_requests;
  if (o.bpf_run_ns) bpf_run_ns = bpf_run_ns.value_or(0) + *o.bpf_run_ns;
  bpf_runs += o.bpf_runs;
  reap_timed += o.reap_timed;
  reap_timed_ns += o.reap_timed_ns;
  flushed += o.flushed;
  flush_ns += o.flush_ns;
}

void AnatomyThread::copy(uint32_t tag, uint64_t user_submit, uint64_t user_reap, bool retried) noexcept {
  ++r_.ios;
  if (retried || tag >= stride_) {
    ++r_.unlinked[static_cast<int>(AnatomyUnlinked::Retried)];
    return;
  }
  // The programs wrote the slot before the completion was posted, and the
  // tag is not resubmitted before this call: the copy is the I/O's.
  const volatile ioacct_anat_slot& sl = slots_[tag];
  AnatomyStamps& s = pending_[npending_++];
  s.user_submit = user_submit;
  s.user_reap = user_reap;
  s.submit = sl.t[IOACCT_ANAT_SUBMIT];
  s.io_start = sl.t[IOACCT_ANAT_IO_START];
  s.rq_issue = sl.t[IOACCT_ANAT_RQ_ISSUE];
  s.rq_complete = sl.t[IOACCT_ANAT_RQ_COMPLETE];
  s.post = sl.t[IOACCT_ANAT_POST];
  s.nreq = sl.nreq;
  s.wake = rec_->wake;
  s.run = rec_->run;
}

void AnatomyThread::flush() noexcept {
  if (!npending_) return;
  const uint64_t t0 = now_ns();
  for (unsigned i = 0; i < npending_; ++i) {
    const AnatomySplit x = split_io(pending_[i], r_.block_link);
    if (x.unlinked != AnatomyUnlinked::None) {
      ++r_.unlinked[static_cast<int>(x.unlinked)];
      continue;
    }
    ++r_.linked;
    r_.e2e.record(x.e2e);
    for (int k = 0; k < kAnatomyStages; ++k)
      if (x.stage[k]) r_.stages[k].record(*x.stage[k]);
    if (x.req_queue) {
      r_.req_queue.record(*x.req_queue);
      r_.req_device.record(*x.req_device);
    }
    if (x.wakeup) r_.wakeup.record(*x.wakeup);
    r_.with_request += x.had_request;
    r_.block_linked += x.block_linked;
    r_.end_unseen += x.end_unseen;
    const uint64_t res = static_cast<uint64_t>(x.residual < 0 ? -x.residual : x.residual);
    r_.residual_max = std::max(r_.residual_max, res);
    r_.residual_over_1us += res > 1000;
  }
  r_.flushed += npending_;
  r_.flush_ns += now_ns() - t0;
  npending_ = 0;
}

std::unique_ptr<AnatomyTracer> AnatomyTracer::attach(const AnatomyOptions& o) {
  set_libbpf_log();
  auto impl = std::make_unique<Impl>();
  anatomy_bpf* raw = anatomy_bpf__open();
  if (!raw) throw NotAvailable(why_not("open", errno));
  impl->skel.reset(raw);
  anatomy_bpf* skel = raw;
  const unsigned threads = std::max(1u, o.threads), stride = std::max(1u, o.stride);
  skel->rodata->tgid = static_cast<uint32_t>(o.tgid);
  skel->rodata->stride = stride;
  skel->rodata->sys_read = o.sys_read;
  skel->rodata->sys_write = o.sys_write;
  const uint32_t tid_slots = std::bit_ceil(std::max(16u, 4 * threads));
  skel->rodata->tid_mask = tid_slots - 1;
  bpf_map__set_max_entries(skel->maps.tids, tid_slots);
  impl->tid_used.assign(tid_slots, 0);
  bpf_map__set_max_entries(skel->maps.rings, std::max(8u, 2 * threads));
  const uint32_t req_slots = std::bit_ceil(std::max(1024u, 4 * threads * stride));
  skel->rodata->req_mask = req_slots - 1;
  bpf_map__set_max_entries(skel->maps.reqs, req_slots);
  bpf_map__set_max_entries(skel->maps.slots, threads * stride);
  bpf_map__set_max_entries(skel->maps.threads, threads);
  // Only the side the engine goes through: sys_enter runs for every syscall
  // of the machine, the io_uring ones for every request.
  const bool uring = o.flavor == AnatomyFlavor::Uring;
  bpf_program__set_autoload(skel->progs.on_submit_req, uring);
  bpf_program__set_autoload(skel->progs.on_complete, uring);
  bpf_program__set_autoload(skel->progs.on_sys_enter, !uring);
  bpf_program__set_autoload(skel->progs.on_sys_exit, !uring);
  // The wake-up is an I/O's only with one in flight per thread; the
  // scheduler's tracepoints run on every context switch of the machine.
  const bool wake = o.block_link == AnatomyBlockLink::Order;
  bpf_program__set_autoload(skel->progs.on_wakeup, wake);
  bpf_program__set_autoload(skel->progs.on_switch, wake);
  if (int err = anatomy_bpf__load(skel)) throw NotAvailable(why_not("load", err));
  impl->slots.map(skel->maps.slots, "the anatomy's slots map");
  impl->threads.map(skel->maps.threads, "the anatomy's threads map");
  auto* recs = impl->threads.as<ioacct_anat_thread>();
  for (unsigned i = 0; i < threads; ++i) recs[i].cur_slot = IOACCT_ANAT_NONE;
  if (int err = anatomy_bpf__attach(skel)) throw NotAvailable(why_not("attach", err));
  // The cost line's programs' time needs them; without CAP_SYS_ADMIN this
  // fails and the line says the time is not measured.
  impl->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  std::unique_ptr<AnatomyTracer> t(new AnatomyTracer(std::move(impl), o));
  t->since_.store(now_ns(), std::memory_order_release);
  return t;
}

void AnatomyTracer::detach() {
  if (!since_.exchange(0, std::memory_order_acq_rel)) return;
  anatomy_bpf__detach(impl_->skel.get());
}

bool AnatomyTracer::reattach() {
  if (since_.load(std::memory_order_acquire)) return true;
  if (anatomy_bpf__attach(impl_->skel.get()) != 0) return false;
  since_.store(now_ns(), std::memory_order_release);
  return true;
}

AnatomyTracer::AnatomyTracer(std::unique_ptr<Impl> impl, const AnatomyOptions& o)
    : impl_(std::move(impl)), opt_(o), threads_(std::max(1u, o.threads)) {
  opt_.stride = std::max(1u, o.stride);
  const auto* slots = impl_->slots.as<const ioacct_anat_slot>();
  const auto* recs = impl_->threads.as<const ioacct_anat_thread>();
  for (size_t i = 0; i < threads_.size(); ++i) {
    AnatomyThread& t = threads_[i];
    t.slots_ = slots + i * opt_.stride;
    t.rec_ = recs + i;
    t.stride_ = opt_.stride;
    t.r_.flavor = o.flavor;
    t.r_.block_link = o.block_link;
  }
}

AnatomyTracer::~AnatomyTracer() = default;

void AnatomyTracer::add_thread(unsigned index, int tid) {
  // The programs' probe order (thread_index() in anatomy.bpf.c). At a quarter
  // full at most, a free entry is always among the first few.
  const ioacct_anat_tid value{static_cast<uint32_t>(tid), index};
  std::vector<uint32_t>& used = impl_->tid_used;
  const auto mask = static_cast<uint32_t>(used.size() - 1);
  const uint32_t h = ioacct_anat_tid_hash(value.tid);
  for (uint32_t i = 0; i < IOACCT_ANAT_PROBES; ++i) {
    const uint32_t key = (h + i) & mask;
    if (used[key] != 0 && used[key] != value.tid) continue;
    if (bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.tids), &key, &value, BPF_ANY) != 0)
      throw NotAvailable(fmt::format("cannot follow bench thread {} in the anatomy: {}", tid, errno_text(errno)));
    used[key] = value.tid;
    return;
  }
  throw NotAvailable(fmt::format("cannot follow bench thread {} in the anatomy: its table has no free entry", tid));
}

AnatomyAttach attach_anatomy(const AnatomyOptions& options, const std::vector<int>& tids) {
  AnatomyAttach a;
  try {
    a.tracer = AnatomyTracer::attach(options);
    for (size_t i = 0; i < tids.size(); ++i) a.tracer->add_thread(static_cast<unsigned>(i), tids[i]);
  } catch (const NotAvailable& e) {
    a.tracer.reset();
    a.unavailable = e.what();
  }
  return a;
}

AnatomyResult AnatomyTracer::result() const {
  AnatomyResult r;
  r.flavor = opt_.flavor;
  r.block_link = opt_.block_link;
  for (const AnatomyThread& t : threads_) r.merge(t.result());
  r.foreign_requests = impl_->skel->bss->foreign_requests;
  uint64_t ns = 0, runs = 0;
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, impl_->skel->obj) {
    const int fd = bpf_program__fd(prog);
    if (fd < 0) continue;  // not loaded (the other flavor's)
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) continue;
    ns += info.run_time_ns;
    runs += info.run_cnt;
  }
  // Run times are kept only while the kernel's statistics are on: then even
  // 0 is a measurement.
  if (impl_->stats_fd >= 0 || runs > 0 || read_first_line("/proc/sys/kernel/bpf_stats_enabled") == "1") {
    r.bpf_run_ns = ns;
    r.bpf_runs = runs;
  }
  r.cpuidle = cpuidle_words();
  return r;
}

}  // namespace ioacct
