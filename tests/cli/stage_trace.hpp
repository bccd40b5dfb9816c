#pragma once
// An independent witness for bench --anatomy: the same tracepoints, recorded
// through two tracefs instances that only this test uses (clock "mono" = the
// programs' clock). One follows this process and its children (set_event_pid
// with event-fork: the bench and its threads) for the submission and
// completion events; the other the test's own block device, since a request
// completes in whatever context the interrupt finds. Each block event keeps
// the process that was current (record-tgid): the kernel runs no BPF program
// on top of some tasks (on this VM, PID 1, the sandbox's agent: docs/design.md,
// "Lost events"), so the witness can say which events no program could see.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cli/run_binary.hpp"

namespace ioacct::test {

class StageTrace {
 public:
  // The kinds in the order they happen for one I/O (ties in a microsecond
  // sort in this order; a reader that follows I/Os one after another orders
  // ties across I/Os itself).
  enum Kind { kSubmit, kIoStart, kRqIssue, kRqComplete, kPost };
  struct Event {
    uint64_t t_ns;  // tracefs prints microseconds
    Kind kind;
    uint64_t sector = 0;  // block events: the request's first sector
    uint32_t tgid = 0;    // block events: the process current when it fired (0: none, or not known)
  };

  // `psync`: the submission and completion are pread64's entry and exit,
  // else io_uring_submit_req and io_uring_complete. `sectors`: a tracefs
  // filter that narrows the block events further (a file's extents on a disk
  // other processes use too).
  StageTrace(unsigned major, unsigned minor, bool psync, const std::string& sectors = "") : psync_(psync) {
    const std::string base = "/sys/kernel/tracing/instances/ioacct-anatomy-" + std::to_string(getpid());
    task_ = base + "-task";
    block_ = base + "-block";
    for (const auto& d : {task_, block_}) {
      new_trace_instance(d);
      write(d, "trace_clock", "mono");
      write(d, "buffer_size_kb", "16384");
    }
    write(task_, "options/event-fork", "1");
    write(block_, "options/record-tgid", "1");
    write(task_, "set_event_pid", std::to_string(getpid()));
    for (const char* ev : psync ? kSyscallEvents : kUringEvents) write(task_, std::string("events/") + ev + "/enable", "1");
    const std::string filter =
        "dev == " + std::to_string((major << 20) | minor) + (sectors.empty() ? "" : " && (" + sectors + ")");
    for (const char* ev : {"block_io_start", "block_rq_issue", "block_rq_complete"}) {
      write(block_, std::string("events/block/") + ev + "/filter", filter);
      write(block_, std::string("events/block/") + ev + "/enable", "1");
    }
    for (const auto& d : {task_, block_}) write(d, "tracing_on", "1");
  }
  ~StageTrace() {
    for (const auto& d : {task_, block_}) std::system(("echo 0 > " + d + "/tracing_on; rmdir " + d + " 2>/dev/null").c_str());
  }
  StageTrace(const StageTrace&) = delete;
  StageTrace& operator=(const StageTrace&) = delete;

  // Stops recording; every event of both instances in time order. Fails the
  // test if a buffer lost any.
  std::vector<Event> stop() {
    std::vector<Event> out;
    for (const auto& d : {task_, block_}) {
      write(d, "tracing_on", "0");
      EXPECT_EQ(trace_events_lost(d), 0u) << "the trace buffer of " << d << " overflowed: the witness is incomplete";
      std::ifstream in(d + "/trace");
      for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        int kind = -1;
        size_t at = std::string::npos;
        for (int k = 0; k < 5 && kind < 0; ++k) {
          at = line.find(std::string(": ") + pattern(static_cast<Kind>(k)));
          if (at != std::string::npos) kind = k;
        }
        if (kind < 0) continue;
        // "  ioacct-123  [001] ..... 1234.567890: io_uring_submit_req: ring ..."
        // "  ioacct-123  [001] ..... 1234.567890: sys_pread64(fd: 3, ...)"
        const size_t colon = at;
        const size_t sp = line.rfind(' ', colon);
        const std::string ts = line.substr(sp + 1, colon - sp - 1);
        const size_t dot = ts.find('.');
        // "block_rq_issue: 7,0 R 4096 () 12345 + 8 ...": the sector follows the command's parentheses.
        uint64_t sector = 0;
        uint32_t tgid = 0;
        if (kind == kIoStart || kind == kRqIssue || kind == kRqComplete) {
          const size_t close = line.find(") ", at);
          if (close != std::string::npos) sector = std::stoull(line.substr(close + 2));
          // "  <idle>-0  (-------) [001] ...": the tgid column, dashes where there is none
          // (looked for from the timestamp back: a command's name may hold parentheses).
          const size_t shut = line.rfind(") [", at);
          const size_t open = shut == std::string::npos ? shut : line.rfind('(', shut);
          if (open != std::string::npos) tgid = static_cast<uint32_t>(std::strtoul(line.c_str() + open + 1, nullptr, 10));
        }
        out.push_back({std::stoull(ts.substr(0, dot)) * 1'000'000'000ull + std::stoull(ts.substr(dot + 1)) * 1000ull,
                       static_cast<Kind>(kind), sector, tgid});
      }
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const Event& a, const Event& b) { return a.t_ns != b.t_ns ? a.t_ns < b.t_ns : a.kind < b.kind; });
    return out;
  }

  // How the event's line reads after the timestamp.
  const char* pattern(Kind k) const {
    switch (k) {
      case kSubmit: return psync_ ? "sys_pread64(" : "io_uring_submit_req: ";
      case kIoStart: return "block_io_start: ";
      case kRqIssue: return "block_rq_issue: ";
      case kRqComplete: return "block_rq_complete: ";
      case kPost: return psync_ ? "sys_pread64 -> " : "io_uring_complete: ";
    }
    return "?";
  }

 private:
  static constexpr const char* kUringEvents[] = {"io_uring/io_uring_submit_req", "io_uring/io_uring_complete"};
  static constexpr const char* kSyscallEvents[] = {"syscalls/sys_enter_pread64", "syscalls/sys_exit_pread64"};
  static void write(const std::string& dir, const std::string& file, const std::string& value) {
    std::ofstream f(dir + "/" + file);
    f << value;
    f.close();
    ASSERT_TRUE(f) << "cannot write " << value << " to " << dir << "/" << file;
  }
  bool psync_;
  std::string task_, block_;
};

}  // namespace ioacct::test
