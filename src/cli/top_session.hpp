#pragma once
// `ioacct top`'s measuring side: the devices, the busy tracker attributing
// by cgroup or process, and the rings, sampled once a frame. The screen
// (ncurses) and --batch both draw what next() returns.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "monitor/rings.hpp"
#include "monitor/stat.hpp"
#include "report/top_report.hpp"

namespace ioacct {

class TopSession {
 public:
  // Attaches the tracker (by `by`); without one the frames have no exact
  // figures and `view().no_exact` says why.
  TopSession(std::vector<StatDevice> devices, BusyBy by, double interval_s);
  // A frame of what happened since the last sample (or since restart()).
  std::vector<std::string> next();
  // The last frame again, as the view now says (a key was pressed).
  std::vector<std::string> redraw() const;
  // Attribution by the other of cgroup and process: the tracker is attached
  // again (the next frame covers the time since).
  void switch_by();
  // Samples afresh: the next frame covers the time since (after a pause).
  void restart();
  TopView& view() { return view_; }
  const std::vector<StatDevice>& devices() const { return devices_; }

 private:
  void attach();
  std::vector<StatDevice> devices_;
  std::unique_ptr<BusyTracker> tracker_;
  std::optional<CgroupPaths> paths_;
  std::optional<StatSample> prev_;
  RingScan rings_prev_;
  StatReport report_;
  RingsView rings_;
  TopView view_;
};

// The wall clock as "HH:MM:SS" (local time).
std::string top_clock();

}  // namespace ioacct
