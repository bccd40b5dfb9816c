#include "compare/presets.hpp"

#include "compare/matrix.hpp"

namespace ioacct {
namespace {

std::vector<Preset> make_presets() {
  std::vector<Preset> p;
  p.push_back({"qd1", "Is io_uring slower than pread at depth 1?",
               "4 KiB O_DIRECT random reads, one I/O in flight: psync is one pread per I/O; io_uring 'sleep' waits in\n"
               "io_uring_enter (the task sleeps, the CPU may idle deeply); 'spin' polls the completion queue (no sleep,\n"
               "burns the core); 'no-iowait' sleeps without being counted as iowait (IORING_ENTER_NO_IOWAIT, 6.15+),\n"
               "which on some machines lets the CPU reach deeper idle states.",
               {"--rw", "randread", "--iodepth", "1"},
               {{"psync", split_words("--engine psync")},
                {"uring-sleep", split_words("--engine uring --wait sleep")},
                {"uring-spin", split_words("--engine uring --wait spin")},
                {"uring-no-iowait", split_words("--engine uring --wait sleep --no-iowait")}}});
  p.push_back({"sqpoll", "What does SQPOLL buy for the core it burns?",
               "With and without a kernel SQ thread at depth 1 and 32; CPU per I/O counts every thread, the SQ thread\n"
               "included, and 'SQ work' is the share of the SQ thread's CPU spent submitting (SqWorkTime / SqTotalTime).\n"
               "Last, what accounting costs: depth 32 with --acct latency (the default) against --acct off (completions\n"
               "counted, nothing else; so no CPU or latency).",
               {"--rw", "randread"},
               {{"qd1", split_words("--iodepth 1")},
                {"qd1-sqpoll", split_words("--iodepth 1 --sqpoll")},
                {"qd32", split_words("--iodepth 32")},
                {"qd32-sqpoll", split_words("--iodepth 32 --sqpoll")},
                {"qd32-acct-off", split_words("--iodepth 32 --acct off")}}});
  p.push_back({"libaio", "Is io_uring faster than libaio at the same depth?",
               "4 KiB O_DIRECT random reads at depth 1 and 32, the same workload through io_uring (ioacct's default ring)\n"
               "and through Linux AIO (io_submit, then io_getevents). At depth 1 both wait for every I/O; at depth 32\n"
               "the difference is what each costs per I/O to submit and reap (CPU per I/O counts both).",
               {"--rw", "randread"},
               {{"libaio-qd1", split_words("--engine libaio --iodepth 1")},
                {"uring-qd1", split_words("--engine uring --iodepth 1")},
                {"libaio-qd32", split_words("--engine libaio --iodepth 32")},
                {"uring-qd32", split_words("--engine uring --iodepth 32")}}});
  Preset util{"util", "Does %util tell the truth at low load?",
              "Depth-1 I/O paced at 100, 250, 500 and 1000 IOPS: reads, then durable writes (O_DSYNC, --dsync: each\n"
              "write reaches stable storage before it completes). %util is the kernel's io_ticks (any I/O in flight\n"
              "during a jiffy's sample); busy% is the exact time the device had I/O in flight (eBPF, --acct full). Both\n"
              "count every I/O on the device, other programs' too.",
              {"--iodepth", "1", "--acct", "full"},
              {}};
  for (const char* rate : {"100", "250", "500", "1000"})
    util.configs.push_back({std::string("read-") + rate, {"--rw", "randread", "--rate-iops", rate}});
  for (const char* rate : {"100", "250", "500", "1000"})
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
