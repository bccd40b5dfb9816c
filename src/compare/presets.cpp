#include "compare/presets.hpp"

#include "compare/matrix.hpp"

namespace ioacct {
namespace {

std::vector<Preset> make_presets() {
  std::vector<Preset> p;
  p.push_back({"qd1", "Is io_uring slower than pread at depth 1?",
               "4 KiB O_DIRECT random reads, one I/O in flight: psync is one pread per I/O; io_uring 'sleep' waits in\n"
               "io_uring_enter (the task sleeps, the CPU may idle deeply); 'spin' polls the completion queue (no sleep,\n"
               "burns the core); 'no-iowait' sleeps without being counted as iowait (IORING_ENTER_NO_IOWAIT, 6.15+):\n"
               "iowait changes a CPU's speed only through a cpufreq driver (its boost on I/O wait) or a cpuidle driver\n"
               "(its choice of idle state), and the answer says when this machine has neither in sysfs.",
               {"--rw", "randread", "--iodepth", "1"},
               {{"psync", split_words("--engine psync")},
                {"uring-sleep", split_words("--engine uring --wait sleep")},
                {"uring-spin", split_words("--engine uring --wait spin")},
                {"uring-no-iowait", split_words("--engine uring --wait sleep --no-iowait")}}});
  p.push_back({"sqpoll", "What does SQPOLL buy for the core it burns?",
               "With and without a kernel SQ thread at depth 1 and 32; CPU per I/O counts every thread, the SQ thread\n"
               "included, and 'SQ work' is the share of the SQ thread's CPU that fdinfo's SqWorkTime counts (SqWorkTime /\n"
               "SqTotalTime). Last, what ioacct's own accounting costs: depth 32 at its default --acct level against\n"
               "'qd32-ioacct-acct-off' (--acct off: completions counted, nothing else; so no CPU or latency). The kernel's\n"
               "own SQ thread statistics (SqTotalTime, SqWorkTime) have no switch through Linux 6.18: every SQPOLL row\n"
               "pays for them and none measures it. Measuring it takes perf on the SQ thread (perf record -t on iou-sqp-PID:\n"
               "the share of its cycles in io_sq_cpu_usec, that accounting on 6.17+) or the same runs on a kernel built\n"
               "without them.",
               {"--rw", "randread"},
               {{"qd1", split_words("--iodepth 1")},
                {"qd1-sqpoll", split_words("--iodepth 1 --sqpoll")},
                {"qd32", split_words("--iodepth 32")},
                {"qd32-sqpoll", split_words("--iodepth 32 --sqpoll")},
                {kIoacctAcctOffVariant, split_words("--iodepth 32 --acct off")}}});
  p.push_back({"libaio", "Is io_uring faster than libaio at the same depth?",
               "4 KiB O_DIRECT random reads at depth 1 and 32, the same workload through io_uring (ioacct's default ring)\n"
               "and through Linux AIO (io_submit, then io_getevents). At depth 1 both wait for every I/O; at depth 32\n"
               "the difference is what each costs per I/O to submit and reap (CPU per I/O counts both).",
               {"--rw", "randread"},
               {{"libaio-qd1", split_words("--engine libaio --iodepth 1")},
                {"uring-qd1", split_words("--engine uring --iodepth 1")},
                {"libaio-qd32", split_words("--engine libaio --iodepth 32")},
                {"uring-qd32", split_words("--engine uring --iodepth 32")}}});
  // Rates whose period has no small ratio to a jiffy (10, 4, 3.33 or 1 ms at
  // HZ 100, 250, 300, 1000): successive arrivals fall at many phases of the
  // tick, so a short I/O straddles a tick as often as its length says.
  // Periods of 1, 2, 4 or 10 ms, divisors or multiples of a 4 ms jiffy, put
  // the arrivals at one to four phases, and %util then reads all or nothing
  // of the busy time. 271 and 769 are primes above 5 (periods of 3.69 and
  // 1.30 ms: 271 and 769 phases); 2 MiB/s of 4 KiB is 512 IOPS (256 phases
  // of a 4 ms jiffy, 64 of a 1 ms one). tests/unit/compare_presets_test.cpp
  // checks every pace against every HZ.
  Preset util{"util", "Does %util tell the truth at low load?",
              "Depth-1 I/O at paces no jiffy divides, so arrivals sweep the timer tick instead of locking to it.\n"
              "'sync-write-2m' is the classic %util case, fio's sync 4 KiB O_DIRECT writes at 2 MiB/s (psync, sequential,\n"
              "512 IOPS); then random reads and durable writes (O_DSYNC, --dsync) at 271 and 769 IOPS (periods of 3.69\n"
              "and 1.30 ms). %util is the kernel's io_ticks (a jiffy counted when a tick falls while I/O is in flight);\n"
              "busy% is the exact time the device had I/O in flight (eBPF, --acct full); both count every I/O on the\n"
              "device, other programs' too. The answer is %util / busy% per variant, with its interval over the\n"
              "repetitions (Student's t); the table's ratio and verdict compare IOPS, which the pacing fixes.",
              {"--iodepth", "1", "--acct", "full"},
              {{"sync-write-2m", split_words("--engine psync --rw write --bs 4k --rate 2m")}}};
  for (const char* rate : {"271", "769"})
    util.configs.push_back({std::string("read-") + rate, {"--rw", "randread", "--rate-iops", rate}});
  for (const char* rate : {"271", "769"})
    util.configs.push_back({std::string("dsync-write-") + rate, {"--rw", "randwrite", "--dsync", "--rate-iops", rate}});
  p.push_back(std::move(util));
  return p;
}

const std::vector<Preset>& presets() {
  static const std::vector<Preset> p = make_presets();
  return p;
}

}  // namespace

const Preset* find_preset(const std::string& name) {
  for (const auto& p : presets())
    if (p.name == name) return &p;
  return nullptr;
}

std::string preset_names() {
  std::string out;
  for (const auto& p : presets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

}  // namespace ioacct
