#include "cli/top_session.hpp"

#include <fmt/format.h>

#include <ctime>

#include "acct/clock.hpp"
#include "trace/attach.hpp"

namespace ioacct {

std::string top_clock() {
  const time_t secs = static_cast<time_t>(wall_ns() / 1'000'000'000);
  struct tm tm {};
  localtime_r(&secs, &tm);
  return fmt::format("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

TopSession::TopSession(std::vector<StatDevice> devices, BusyBy by, double interval_s) : devices_(std::move(devices)) {
  view_.by = by;
  view_.interval_s = interval_s;
  attach();
  restart();
}

void TopSession::attach() {
  tracker_.reset();
  paths_.reset();
  view_.no_exact.reset();
  if (devices_.empty()) {
    view_.no_exact = "no device to watch";
    return;
  }
  TrackerAttach attached = attach_tracker(busy_devices(devices_), {.by = view_.by});
  tracker_ = std::move(attached.tracker);
  if (tracker_) paths_.emplace();
  else view_.no_exact = attached.unavailable.value_or("the busy tracker is not attached");
}

void TopSession::restart() {
  prev_ = take_stat_sample(devices_, tracker_.get(), paths_ ? &*paths_ : nullptr, view_.by);
  rings_prev_ = scan_rings();
}

std::vector<std::string> TopSession::next() {
  StatSample cur = take_stat_sample(devices_, tracker_.get(), paths_ ? &*paths_ : nullptr, view_.by);
  RingScan rings = scan_rings();
  report_ = make_stat_report(devices_, prev_ ? &*prev_ : nullptr, cur);
  rings_ = rings_view(rings_prev_, rings);
  prev_ = std::move(cur);
  rings_prev_ = std::move(rings);
  view_.clock = top_clock();
  return format_top_frame(report_, rings_, view_);
}

std::vector<std::string> TopSession::redraw() const { return format_top_frame(report_, rings_, view_); }

void TopSession::switch_by() {
  view_.by = view_.by == BusyBy::Cgroup ? BusyBy::Process : BusyBy::Cgroup;
  attach();
  restart();
  for (StatRow& row : report_.rows) row.who.clear();  // the last frame's rows were by the other
}

}  // namespace ioacct
