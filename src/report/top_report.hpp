#pragma once
// `ioacct top`: one frame, as plain text lines that fit the terminal. A sink
// over what stat and rings measured (StatReport, RingsView): the same frame
// is drawn by ncurses or printed by --batch.
#include <optional>
#include <string>
#include <vector>

#include "monitor/rings.hpp"
#include "monitor/stat.hpp"

namespace ioacct {

// What the keys change, and the screen's size.
struct TopView {
  BusyBy by = BusyBy::Cgroup;
  enum class Sort { Share, Iops, Bandwidth };
  Sort sort = Sort::Share;
  std::optional<std::string> device;  // only this device's rows; none: every device
  bool paused = false;
  int width = 80, height = 24;
  double interval_s = 1;
  std::string clock;                  // the time to print ("19:50:01"), given by the caller
  std::optional<std::string> no_exact;  // why there are no exact figures (no tracker)
};

const char* top_sort_name(TopView::Sort s);
TopView::Sort next_sort(TopView::Sort s);

// The help line, the frame's last: every key top reads.
inline constexpr const char* kTopHelp = "q quit  s sort  d device  c cgroup/process  p pause";

// The frame: at most `height` lines, each at most `width` columns. The
// header, the devices (r/s, w/s, MB/s, exact busy% beside io_ticks %util,
// mean depth, await), the cgroups or processes by the chosen sort, the SQ
// threads by CPU with their useful work, then the help line. Pure.
std::vector<std::string> format_top_frame(const StatReport& r, const RingsView& rings, const TopView& v);

}  // namespace ioacct
