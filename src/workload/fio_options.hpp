#pragma once
// fio's options as ioacct maps them: one row per option, with its names, how
// its value is read, and the two columns of docs/fio.md's table. The rows
// drive the mapping (fio_map.cpp: an option with no row is an error naming
// it), the order options are read in, and the docs (a unit test holds
// docs/fio.md's table to fio_options_markdown(), so the two cannot drift).
//
// Reading is two steps over plain data: each option set in a job is decoded
// alone into a FioSpec (its row's `decode`), then fio_words() turns the whole
// spec into `ioacct bench` words and checks what depends on several options
// (io_uring's flags on another engine, a rate with a mixed rw, ...).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workload/fio_file.hpp"
#include "workload/job.hpp"

namespace ioacct {

// One line of the error message: "FILE:LINE: OPTION: what is wrong".
struct FioProblem {
  std::string file;
  unsigned line = 0;
  std::string text;
};

// Values in fio's formats (sizes with kb_base, times, booleans, per-direction
// lists), each failure one problem naming the option.
class FioValues {
 public:
  explicit FioValues(std::vector<FioProblem>& errors) : errors_(errors) {}

  void bad(const FioOption& o, const std::string& msg);
  size_t problems() const { return errors_.size(); }
  std::optional<uint64_t> integer(const FioOption& o, uint64_t lo = 0, uint64_t hi = UINT64_MAX);
  std::optional<uint64_t> integer(const FioOption& o, const std::string& text, uint64_t lo, uint64_t hi);
  std::optional<uint64_t> sized(const FioOption& o) { return sized(o, o.value); }
  std::optional<uint64_t> sized(const FioOption& o, const std::string& text);
  std::optional<uint64_t> time_of(const FioOption& o);
  std::optional<bool> boolean(const FioOption& o);
  // "4k" or fio's per-direction list "4k,4k,4k" (reads, writes, trims): one
  // value, or all equal; an empty part keeps the one before it.
  std::optional<uint64_t> sizes(const FioOption& o, const char* what);
  std::optional<uint64_t> integers(const FioOption& o, const char* what, uint64_t lo, uint64_t hi);
  // fio's list for reads, writes and trims, each direction its own (rate,
  // rate_iops): "a" sets all three, "a,b" reads a and writes and trims b,
  // "a," reads only, ",b" writes and trims; 0 where a direction is unset.
  std::optional<std::array<uint64_t, 3>> sizes_each(const FioOption& o);
  std::optional<std::array<uint64_t, 3>> integers_each(const FioOption& o, uint64_t lo, uint64_t hi);

  unsigned kb_base = 1024;

 private:
  template <typename F>
  std::optional<uint64_t> per_direction(const FioOption& o, const char* what, F&& read);
  template <typename F>
  std::optional<std::array<uint64_t, 3>> each_direction(const FioOption& o, F&& read);
  std::vector<FioProblem>& errors_;
};

// What a job's options say, decoded, with fio's defaults where unset (so
// that ioacct's own, randread at depth 32 with O_DIRECT, never leak into a
// fio job). `*_at` is where an option was set, for errors that fio_words()
// finds across options; null when it was not.
struct FioSpec {
  std::string file;  // the job's section
  unsigned line = 0;
  std::string name;
  std::string rw = "read";
  std::optional<uint64_t> rwmix_read;
  uint64_t bs = 4096;
  std::vector<BsShare> bs_split;  // bssplit or bsrange with several sizes (bs is then unused)
  std::array<uint64_t, 3> bs_dir{};  // bs=r,w,t with different sizes (each set); all 0: bs
  std::array<std::vector<BsShare>, 3> bs_split_dir;  // bssplit=r,w,t with different lists; all empty: none
  uint64_t blockalign = 0;                   // blockalign=, one for every direction; 0: none
  const FioOption* blockalign_at = nullptr;  // where it was set
  uint64_t numjobs = 1;
  std::string engine = "psync";  // ioacct's name: uring, libaio, psync, sync, pvsync, pvsync2
  std::optional<uint64_t> iodepth;
  std::optional<uint64_t> batch_submit, batch_complete_min, batch_complete_max;
  bool direct = false;
  std::string directory;
  std::vector<std::string> files;
  std::optional<uint64_t> size;
  uint64_t offset = 0;
  const FioOption* time_based_at = nullptr;  // set, and true
  uint64_t runtime_ns = 0;
  uint64_t loops = 1;
  std::optional<uint64_t> number_ios, io_size;  // per clone, as fio counts them
  std::optional<uint64_t> ramp_ns;
  const FioOption* ramp_at = nullptr;
  uint64_t startdelay_ns = 0;
  bool stonewall = false;
  std::optional<std::array<uint64_t, 3>> rate_iops, rate;  // reads, writes, trims; 0 = unpaced
  std::optional<std::array<uint64_t, 3>> rate_iops_min, rate_min;  // floors, the same way; 0 = none
  std::optional<uint64_t> rate_cycle_ms;
  bool poisson = false;  // rate_process=poisson
  std::string distribution;  // ioacct's spelling; "" for uniform
  std::optional<uint64_t> latency_target_ns, latency_window_ns;  // fio's default unit: µs
  std::optional<double> latency_percentile;
  bool latency_run = false;
  bool fresh_seed = false;   // randrepeat=0
  const FioOption* norandommap_at = nullptr;  // where norandommap was set
  bool norandommap = false;                   // and to what
  bool seed_given = false;   // randseed set, read or not
  std::optional<uint64_t> seed;
  uint64_t fsync = 0, fdatasync = 0;
  // io_uring's modes set to 1, in the table's order: the option and the flag.
  std::vector<std::pair<const FioOption*, const char*>> uring_flags;
  bool sqpoll = false;
  const FioOption* sq_cpu_at = nullptr;
  bool vectored = false;  // nonvectored=0
  const FioOption* hipri_at = nullptr;   // hipri=1: io_uring's --iopoll, pvsync2's --hipri
  uint64_t hipri_pct = 100;                  // hipri_percentage (pvsync2)
  const FioOption* hipri_pct_at = nullptr;  // where it was set
  const FioOption* nowait_at = nullptr;  // nowait=1: --nowait (io_uring, pvsync2)
  const FioOption* gtod_reduce_at = nullptr;  // set, and true
  const FioOption* verify_at = nullptr;       // a check type (not verify=null)
  bool do_verify = true;
  FioLogs logs;
  const FioOption* log_at = nullptr;  // the first write_*_log set
  std::optional<uint64_t> log_avg_ms;
  const FioOption* log_avg_at = nullptr;
};

// An option's value as a job's sections leave it: the last setting, under
// any of its names.
struct FioSetting {
  const FioOption* opt = nullptr;
  bool inverted = false;  // given under a name that means the opposite (rwmixwrite, buffered)
};

struct FioName {
  std::string_view name;
  bool inverted = false;
};

struct FioOptionRow {
  std::vector<FioName> names;  // the first is fio's main name
  // docs/fio.md's columns: what it becomes in ioacct, and how that differs
  // from fio (what is refused, and why).
  std::string_view meaning, differences;
  // Reads the value into the spec; null for an option that changes nothing
  // ioacct measures (accepted, and the docs say why).
  void (*decode)(FioValues&, const FioSetting&, FioSpec&) = nullptr;
};

// Every option ioacct accepts, in the order a job's options are decoded
// (kb_base first: it changes how sizes read) and the docs list them.
const std::vector<FioOptionRow>& fio_options();
// The parts of fio_options() kept with their decoders in files of their
// own: the block sizes (bs, bsrange, bssplit: fio_size_rows.cpp) and the
// pace (rate*, latency_*: fio_pace_rows.cpp).
std::vector<FioOptionRow> fio_size_rows();
std::vector<FioOptionRow> fio_pace_rows();

// The row that `name` (lower case) belongs to, or null; `inverted` says
// whether this name means the opposite of the row's main one.
const FioOptionRow* fio_option(std::string_view name, bool& inverted);

// The `ioacct bench` words for a decoded job (its targets last), adding a
// problem for each combination ioacct cannot run. `fresh_seed` is the seed
// of a job with randrepeat=0.
std::vector<std::string> fio_words(const FioSpec& s, FioValues& v, uint64_t fresh_seed);

// docs/fio.md's table of the options ioacct maps, from the rows.
std::string fio_options_markdown();

}  // namespace ioacct
