#pragma once
// Runs the real ioacct binary and captures what it does: stdout, stderr, exit
// code. Optionally sends a signal once stderr shows a given text.
#include <array>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ioacct::test {

// How far an SQ thread's SqWorkTime may read over its SqTotalTime (seconds).
// Both come from the thread's runtime, which the kernel brings up to date for
// a running task only at a tick or a switch, and the fdinfo reads the total
// first, then the work the thread has added up itself: 0.9 ms over on 0.2 s
// was seen here (HZ=250). One tick at HZ=100, the coarsest, is 10 ms.
inline constexpr double kSqWorkOverTotalS = 0.010;

struct Outcome {
  int exit_code = -1;  // 128+N when killed by signal N, as a shell reports it
  std::string out, err;
  double signal_to_exit_s = -1;  // when a signal was sent
};

struct RunOptions {
  std::vector<std::string> env;  // "NAME=value" added to the environment
  int signal = 0;                // send this signal ...
  std::string signal_after;      // ... once stderr contains this text ...
  double signal_delay_s = 0;     // ... and this many seconds have passed since
  double timeout_s = 120;        // kill -9 and fail after this long
  std::vector<std::string> prefix;  // run under this command (e.g. setpriv ...)
  bool seccomp_deny_uring = false;  // io_uring_setup fails with ENOSYS in the child
  std::string action_after;         // once stderr contains this text ...
  std::function<void()> action;     // ... run this (once), while ioacct runs on
  std::function<void(int pid)> action_pid;  // the same, told ioacct's pid
  // More of the same: each runs once, when stderr first contains its text.
  std::vector<std::pair<std::string, std::function<void(int pid)>>> steps;
};

Outcome run_ioacct(const std::vector<std::string>& args, const RunOptions& opts = {});

// A refusal as every command gives one: exit `code` (2 for usage, 1 at run
// time), nothing on stdout, and on stderr exactly one line that starts with
// "error: ", the last, which names each of `says`.
void expect_refused(const Outcome& o, const std::vector<std::string>& says, int code = 2);

// stdout parsed as JSON; when it is not JSON the test fails with ioacct's
// stderr (an exception from the parser names neither).
nlohmann::json stdout_json(const Outcome& o);

// A fresh empty directory, removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::vector<std::string> entries() const;  // names of what is inside

 private:
  std::string path_;
};

// A loop device over a file in `dir` that only the test uses; detached when
// it goes out of scope.
struct LoopOptions {
  std::string size = "64m";
  unsigned sector_size = 512;
  bool random_data = false;  // fill the backing file (else sparse zeros)
  std::string backing;       // an existing file or device to use instead of a new file
  bool read_only = false;    // losetup -r
  bool partitions = false;   // losetup -P: partitions can be added
  // Removed (LOOP_CTL_REMOVE), not only detached, when it goes out of scope:
  // a detached loop device keeps its per-cgroup workers, and each holds its
  // cgroup, removed or not, for 60 s; removing the device frees them at once.
  // For a test that does I/O from cgroups of its own (StatWhoV2 moves the
  // block controller only when no cgroup is left).
  bool remove_at_end = false;
};
class LoopDevice {
 public:
  explicit LoopDevice(const std::string& dir, const LoopOptions& o = {});
  ~LoopDevice();
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;
  const std::string& path() const { return dev_; }    // "/dev/loopN"
  std::string name() const { return dev_.substr(5); }  // "loopN"
  // Adds partition `number` (needs LoopOptions::partitions); returns its path.
  std::string add_partition(int number, uint64_t start_sector, uint64_t sectors) const;
  // Detaches it and removes the device itself (LOOP_CTL_REMOVE), as an
  // unplugged disk goes: it leaves /proc/diskstats. path() and name() keep
  // what it was called.
  void remove();

 private:
  // remove()'s work; -errno of LOOP_CTL_REMOVE, else 0.
  int detach_and_remove();
  std::string dev_;
  bool remove_at_end_ = false;
  bool removed_ = false;
};

// A mount that is undone when it goes out of scope, even when the test fails
// (lazily if busy). Declare it after the LoopDevice it mounts.
class Mount {
 public:
  Mount(const std::string& source, const std::string& dir, const std::string& options = "");
  ~Mount();
  Mount(const Mount&) = delete;
  Mount& operator=(const Mount&) = delete;

 private:
  std::string dir_;
};

// Runs a shell command, returns its stdout (trailing newline stripped); fails the test on non-zero exit.
std::string sh(const std::string& cmd);

// Whether sysfs has per-CPU cpuidle states (the path ioacct reads): a
// report says "not available" without them and gives figures, or says it
// does not measure them, with them.
bool machine_has_cpuidle();

// A tracefs instance of the test's own at `dir` (under
// /sys/kernel/tracing/instances), made afresh with tracing off. A new
// instance records from the first event enabled: the caller enables every
// event it wants, then turns tracing on, so that all of them start at one
// instant (a witness that enabled read before lseek counted reads alone).
void new_trace_instance(const std::string& dir);
// The events instance `dir` lost on every CPU (overwritten or dropped): a
// witness that lost any is incomplete.
uint64_t trace_events_lost(const std::string& dir);

// fio's JSON report of a job file (fio --output-format=json), fio run with
// `env` ("NAME=value") in `cwd` (where fio lays out a job's files when it
// names none; "" for here). fio's stderr is kept apart, so its notes never
// break the JSON; it is in the failure when fio fails or prints no JSON (the
// result is then null).
nlohmann::json run_fio(const std::string& job_file, const std::vector<std::string>& env = {},
                       const std::string& cwd = "");

// Reads and writes block device `name` ("loop3") was asked for so far:
// completed and merged into another (diskstats fields 1+2 and 5+6; adjacent
// random writes do merge).
std::array<uint64_t, 2> disk_rw_asked(const std::string& name);

// The whole of a file, or "" when it cannot be read.
std::string slurp(const std::string& path);

}  // namespace ioacct::test
