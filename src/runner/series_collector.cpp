#include "runner/series_collector.hpp"

#include "acct/accounting.hpp"
#include "acct/histogram.hpp"

namespace ioacct {

void SeriesCollector::tick(Nanos now) {
  if (now < next_ || ctl_.windows_open.load(std::memory_order_acquire) == 0) return;
  const uint32_t e = ctl_.epoch.load(std::memory_order_relaxed);
  if (!all_acked(e)) return;  // a worker still fills the histogram we would hand back: later
  // Epoch e + 1 fills epoch e - 1's histograms again: those must have been
  // read and reset first, or a worker would write into one being read. The
  // interval grows instead (its length is measured, never assumed).
  if (!pending_.empty() && pending_.front().epoch + 1 <= e) return;
  Snap s = snap(now);
  merger_.add_boundary(now);
  if (have_prev_) pending_.push_back({prev_, s, e, boundaries_});
  ++boundaries_;
  prev_ = std::move(s);
  have_prev_ = true;
  ctl_.epoch.store(e + 1, std::memory_order_release);
  next_ = now + interval_;
}

void SeriesCollector::collect(bool final) {
  while (!pending_.empty()) {
    Pending& p = pending_.front();
    if (!all_acked(p.epoch + 1)) return;
    const auto& busy = merger_.interval_busy();
    if (!final && busy.size() <= p.boundary) return;
    emit(p, busy.size() > p.boundary ? std::optional<uint64_t>(busy[p.boundary]) : std::nullopt);
    pending_.pop_front();
  }
}

bool SeriesCollector::all_acked(uint32_t e) const {
  for (size_t i = 0; i < workers_.size(); ++i)
    if (!pub_[i].done.load(std::memory_order_acquire) && pub_[i].epoch_ack.load(std::memory_order_acquire) < e)
      return false;
  return true;
}

SeriesCollector::Snap SeriesCollector::snap(Nanos now) {
  Snap s;
  s.t = now;
  for (size_t i = 0; i < workers_.size(); ++i) {
    s.ios += pub_[i].measured.load(std::memory_order_relaxed);
    s.bytes += pub_[i].bytes.load(std::memory_order_relaxed);
    s.inflight += pub_[i].inflight.load(std::memory_order_relaxed);
  }
  s.cpu = sample_cpu();
  s.sys = sample_system(disk_.empty() ? std::vector<std::string>{} : std::vector<std::string>{disk_},
                        job_.uring.sqpoll ? ctl_.ring_fds : std::vector<int>{}, job_.uring.sqpoll, false);
  if (ctl_.tracker && busy_index_) {
    try {
      const std::lock_guard<std::mutex> lock(ctl_.tracker_mu);
      auto all = ctl_.tracker->read();
      if (*busy_index_ < all.size()) s.busy = std::move(all[*busy_index_]);
    } catch (const std::exception&) {
      // Not measured for this interval: the sample says so with a null.
    }
  }
  return s;
}

void SeriesCollector::emit(const Pending& p, std::optional<uint64_t> busy_ns) {
  SeriesSample x;
  const double dur = static_cast<double>(p.b.t - p.a.t) / 1e9;
  x.t_s = static_cast<double>(p.b.t - ctl_.measure_start) / 1e9;
  x.dur_s = dur;
  x.iops = static_cast<double>(p.b.ios - p.a.ios) / dur;
  x.bytes_per_s = static_cast<double>(p.b.bytes - p.a.bytes) / dur;
  x.inflight = p.b.inflight;
  Histogram merged, slat, clat;
  for (auto& w : workers_) {
    const auto take = [](Histogram* h, Histogram& into) {
      if (!h) return;
      into.merge(*h);
      h->reset();
    };
    take(w->interval_hist(p.epoch), merged);
    take(w->interval_slat(p.epoch), slat);
    take(w->interval_clat(p.epoch), clat);
  }
  if (merged.count()) {
    x.p50_ns = merged.quantile(0.5);
    x.p99_ns = merged.quantile(0.99);
    x.mean_ns = merged.mean();
  }
  if (slat.count()) x.slat_mean_ns = slat.mean();
  if (clat.count()) x.clat_mean_ns = clat.mean();
  // In ns over ns: a thread that never leaves full depth reads exactly 100.
  if (busy_ns) x.own_inflight_pct = 100.0 * static_cast<double>(*busy_ns) / static_cast<double>(p.b.t - p.a.t);
  if (p.a.busy && p.b.busy && p.b.busy->stamp_ns > p.a.busy->stamp_ns)
    x.device_busy_pct = 100.0 * static_cast<double>(p.b.busy->busy_ns - p.a.busy->busy_ns) /
                        static_cast<double>(p.b.busy->stamp_ns - p.a.busy->stamp_ns);
  if (p.a.cpu.valid && p.b.cpu.valid) {
    const CpuUsage c = cpu_delta(p.a.cpu, p.b.cpu);
    x.cpu_pct = 100.0 * (c.user_s + c.sys_s) / dur;
  }
  if (job_.uring.sqpoll) {
    const Accounting acc = account(p.a.sys, p.b.sys, {}, {});
    double cpu = 0, work = 0;
    bool has_work = !acc.sq_threads.empty();
    for (const auto& t : acc.sq_threads) {
      cpu += t.cpu_s;
      if (t.work_s) work += *t.work_s; else has_work = false;
    }
    if (!acc.sq_threads.empty()) x.sq_cpu_pct = 100.0 * cpu / dur;
    if (has_work) x.sq_work_pct = 100.0 * work / dur;
  }
  auto da = p.a.sys.disks.find(disk_), db = p.b.sys.disks.find(disk_);
  if (da != p.a.sys.disks.end() && db != p.b.sys.disks.end()) x.util_pct = iostat_row(da->second, db->second, dur).util;
  series.add(x);
}

}  // namespace ioacct
