#pragma once
// An independent witness for the exact busy time: the block layer's own
// tracepoints, recorded through a tracefs instance that only this test uses
// (its own buffer, its own filter, clock "mono" = the tracker's clock), and
// the union of the in-flight intervals computed here from the text trace.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/run_binary.hpp"

namespace ioacct::test {

class BlockTrace {
 public:
  // Which pair of tracepoints bounds a request: the accounting span
  // (block_io_start/block_io_done, what diskstats counts) or the device span
  // (block_rq_issue/block_rq_complete, from the driver's hand-off on).
  enum class Span { Accounting, Device };

  // Records the span's two tracepoints for the device major:minor from now on.
  BlockTrace(unsigned major, unsigned minor, Span span = Span::Accounting)
      : start_(span == Span::Accounting ? "block_io_start" : "block_rq_issue"),
        end_(span == Span::Accounting ? "block_io_done" : "block_rq_complete") {
    dir_ = "/sys/kernel/tracing/instances/ioacct-test-" + std::to_string(getpid());
    new_trace_instance(dir_);
    write("trace_clock", "mono");
    write("buffer_size_kb", "32768");  // per CPU: every event of a few seconds, none overwritten
    const std::string filter = "dev == " + std::to_string((major << 20) | minor);
    for (const std::string& ev : {start_, end_}) {
      write("events/block/" + ev + "/filter", filter);
      write("events/block/" + ev + "/enable", "1");
    }
    write("tracing_on", "1");
  }
  ~BlockTrace() {
    write("tracing_on", "0");
    std::system(("rmdir " + dir_ + " 2>/dev/null").c_str());
  }
  BlockTrace(const BlockTrace&) = delete;
  BlockTrace& operator=(const BlockTrace&) = delete;

  struct Event {
    uint64_t t_ns;
    bool start;
  };
  // Stops recording and returns every event in time order. Fails the test if
  // the buffer lost any (the witness would then be wrong).
  std::vector<Event> stop() {
    write("tracing_on", "0");
    EXPECT_EQ(trace_events_lost(dir_), 0u) << "the trace buffer overflowed: the trace-derived union is incomplete";
    std::ifstream in(dir_ + "/trace");
    std::vector<Event> out;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      const bool start = line.find(" " + start_ + ": ") != std::string::npos;
      if (!start && line.find(" " + end_ + ": ") == std::string::npos) continue;
      // "  fio-123  [001] ..... 1234.567890: block_io_start: 7,3 R ..."
      const size_t colon = line.find(": block_");
      if (!start && is_flush_op(line, colon)) continue;
      const size_t sp = line.rfind(' ', colon);
      const std::string ts = line.substr(sp + 1, colon - sp - 1);
      const size_t dot = ts.find('.');
      const uint64_t sec = std::stoull(ts.substr(0, dot)), usec = std::stoull(ts.substr(dot + 1));
      out.push_back({sec * 1'000'000'000ull + usec * 1000ull, start});
    }
    // The clock prints whole microseconds: a start and a done in one sort
    // the start first, so a request that starts and ends within one (on
    // two CPUs, read back in either order) is never a done with no start.
    std::stable_sort(out.begin(), out.end(),
                     [](const Event& a, const Event& b) { return a.t_ns != b.t_ns ? a.t_ns < b.t_ns : a.start > b.start; });
    return out;
  }

 private:
  // The flush machinery's own request (rwbs "FF": a preflush of op flush)
  // ends, with no start, inside an empty flush's span (rwbs "FWS" at its
  // start, "WS" at its end, as diskstats counts it): no request of the
  // accounting span ends there. rwbs is the op's letter (R W D E F N), after
  // an 'F' for a preflush, then its flags (F for FUA, A, S, M).
  static bool is_flush_op(const std::string& line, size_t colon) {
    std::istringstream fields(line.substr(line.find(": ", colon + 2) + 2));  // "7,3 FF 0 () 0 + 0 ..."
    std::string dev, rwbs;
    fields >> dev >> rwbs;
    return !rwbs.empty() && rwbs[0] == 'F' && (rwbs.size() == 1 || std::string_view("RWDEN").find(rwbs[1]) == std::string_view::npos);
  }
  void write(const std::string& file, const std::string& value) {
    std::ofstream f(dir_ + "/" + file);
    f << value;
    f.close();
    ASSERT_TRUE(f) << "cannot write " << value << " to " << dir_ << "/" << file;
  }
  std::string start_, end_;
  std::string dir_;
};

// Time within [from, to] during which at least one request was in flight:
// the count goes up at each start and down at each done (a done whose start
// came before the trace began is ignored, as the tracker does).
inline uint64_t trace_union_ns(const std::vector<BlockTrace::Event>& ev, uint64_t from, uint64_t to) {
  uint64_t busy = 0, count = 0, last = from;
  for (const auto& e : ev) {
    const uint64_t t = std::clamp(e.t_ns, from, to);
    if (count > 0) busy += t - last;
    last = t;
    if (e.start) ++count;
    else if (count > 0) --count;
  }
  if (count > 0 && to > last) busy += to - last;
  return busy;
}

// Requests in flight at `t`, counted the same way as trace_union_ns.
inline uint64_t trace_inflight_at(const std::vector<BlockTrace::Event>& ev, uint64_t t) {
  uint64_t count = 0;
  for (const auto& e : ev) {
    if (e.t_ns > t) break;
    if (e.start) ++count;
    else if (count > 0) --count;
  }
  return count;
}

// Time within [from, to] spent at each depth (index = requests in flight),
// counted the same way as trace_union_ns.
inline std::vector<uint64_t> trace_depth_ns(const std::vector<BlockTrace::Event>& ev, uint64_t from, uint64_t to) {
  std::vector<uint64_t> at(1, 0);
  uint64_t count = 0, last = from;
  for (const auto& e : ev) {
    const uint64_t t = std::clamp(e.t_ns, from, to);
    if (count >= at.size()) at.resize(count + 1, 0);
    at[count] += t - last;
    last = t;
    if (e.start) ++count;
    else if (count > 0) --count;
  }
  if (count >= at.size()) at.resize(count + 1, 0);
  if (to > last) at[count] += to - last;
  return at;
}

}  // namespace ioacct::test
