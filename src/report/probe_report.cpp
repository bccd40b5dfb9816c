#include "report/probe_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <string_view>
#include <vector>

#include "common/errors.hpp"
#include "common/units.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

constexpr size_t kWidth = 100;  // console lines stay within this many columns

// Appends `words` to `out` as lines of at most kWidth columns, each starting with `indent`.
void wrap(std::string& out, const std::vector<std::string>& words, std::string_view indent) {
  std::string line(indent);
  for (const auto& w : words) {
    if (line.size() > indent.size() && line.size() + 1 + w.size() > kWidth) {
      out += line + "\n";
      line = indent;
    }
    if (line.size() > indent.size()) line += ' ';
    line += w;
  }
  if (line.size() > indent.size()) out += line + "\n";
}

std::string limit_text(uint64_t v) { return v == ProbeResult::kUnlimited ? "unlimited" : format_size(v); }
json limit_json(uint64_t v) { return v == ProbeResult::kUnlimited ? json("unlimited") : json(v); }
json errno_json(int err) { return err ? json(errno_name(err)) : json(nullptr); }

std::string disabled_text(const std::optional<int>& v) {
  if (!v) return "not present (kernel before 6.6: no such switch)";
  switch (*v) {
    case 0: return "0 (everyone may create rings)";
    case 1: return "1 (only CAP_SYS_ADMIN and the group in kernel.io_uring_group may create rings)";
    case 2: return "2 (nobody may create rings)";
    default: return fmt::format("{} (unknown value)", *v);
  }
}

// At most 19 + 22 columns, so two fit side by side. What each flag was
// tried with is in the JSON ("with") and docs/cli.md, not here.
std::string flag_cell(const SetupFlagProbe& f) {
  return fmt::format("{:<19} {}", f.name, f.error ? fmt::format("NO ({}; {}+)", errno_name(f.error), f.since) : "yes");
}

std::string unknown_bits_line(const ProbeResult& r) {
  if (r.unknown_setup_bits.empty()) return {};
  std::vector<std::string> accepted, errors;
  for (const auto& b : r.unknown_setup_bits) {
    if (!b.error) accepted.push_back(fmt::format("{}", b.bit));
    else if (std::find(errors.begin(), errors.end(), errno_name(b.error)) == errors.end())
      errors.push_back(errno_name(b.error));
  }
  std::string s = fmt::format("  {:<19} ", fmt::format("bits {}-{}", r.unknown_setup_bits.front().bit,
                                                        r.unknown_setup_bits.back().bit));
  if (accepted.empty()) return s + fmt::format("all rejected ({}): no flags newer than ioacct\n", fmt::join(errors, ", "));
  return s + fmt::format("ACCEPTED bit {}: this kernel knows flags that ioacct does not\n", fmt::join(accepted, ", "));
}

void setup_flags_section(std::string& out, const ProbeResult& r) {
  const auto& f = r.setup_flags;
  // Where no ring can be made at all, twenty lines repeating why say nothing more.
  if (r.setup_error && std::all_of(f.begin(), f.end(), [&](const SetupFlagProbe& x) { return x.error == r.setup_error; })) {
    out += fmt::format("setup flags: none accepted (every try: {}, like the plain ring)\n", errno_name(r.setup_error));
    return;
  }
  out += "setup flags (each tried in a ring of its own, with the flags it requires)\n";
  const size_t rows = (f.size() + 1) / 2;  // column-major, so bits read top to bottom
  for (size_t i = 0; i < rows; ++i) {
    std::string line = "  " + flag_cell(f[i]);
    if (i + rows < f.size()) line = fmt::format("{:<46}{}", line, flag_cell(f[i + rows]));
    out += line + "\n";
  }
  out += unknown_bits_line(r);
}

void features_section(std::string& out, const ProbeResult& r) {
  if (r.setup_error) {
    out += fmt::format("features: unknown (no ring: {})\n", errno_name(r.setup_error));
    return;
  }
  std::vector<std::string> words = r.feature_names;
  for (unsigned bit : r.unknown_feature_bits) words.push_back(fmt::format("bit{}", bit));
  out += fmt::format("features (io_uring_params.features = {:#x}): {} named{}\n", r.features, r.feature_names.size(),
                     r.unknown_feature_bits.empty() ? "" : fmt::format(", {} unknown to ioacct", r.unknown_feature_bits.size()));
  wrap(out, words, "  ");
}

void opcodes_section(std::string& out, const ProbeResult& r) {
  if (r.opcodes_error) {
    out += fmt::format("opcodes: unknown (IORING_REGISTER_PROBE: {})\n", errno_text(r.opcodes_error));
    return;
  }
  std::vector<std::string> yes, no;
  for (const auto& o : r.opcodes)
    (o.supported ? yes : no).push_back(o.name.empty() ? fmt::format("op{}", o.op) : o.name);
  out += no.empty() ? fmt::format("opcodes (IORING_REGISTER_PROBE): all {} of 0..{} supported\n", yes.size(), r.last_op)
                    : fmt::format("opcodes (IORING_REGISTER_PROBE): {} of the {} in 0..{} supported\n", yes.size(),
                                  r.opcodes.size(), r.last_op);
  wrap(out, yes, "  ");
  if (!no.empty()) {
    no.insert(no.begin(), "NOT supported:");
    wrap(out, no, "  ");
  }
}

void sqpoll_section(std::string& out, const ProbeResult& r) {
  const SqpollFdinfo& s = r.sqpoll;
  if (s.error) {
    out += fmt::format("SQPOLL ring: refused: {}; no SQ thread to account\n", errno_text(s.error));
    return;
  }
  if (!s.read_error.empty()) {
    out += fmt::format("SQPOLL ring: created, but its fdinfo is unreadable: {}\n", s.read_error);
    return;
  }
  std::vector<std::string> words;
  for (const auto& f : s.fields) words.push_back(fmt::format("{} {}", f.key, f.value ? "yes" : "NO"));
  out += "SQPOLL ring's /proc/self/fdinfo lines\n";
  out += fmt::format("  {}\n", fmt::join(words, "  "));
}

void devices_section(std::string& out, const ProbeResult& r) {
  out += "block devices (/sys/block; polled I/O needs io_poll 1)\n";
  if (r.block_devices.empty()) {
    out += "  none\n";
    return;
  }
  size_t w = 4;
  for (const auto& d : r.block_devices) w = std::max(w, d.name.size());
  out += fmt::format("  {:<{}}  io_poll  logical block  scheduler\n", "name", w);
  for (const auto& d : r.block_devices) {
    out += fmt::format("  {:<{}}  {:<7}  {:<13}  {}\n", d.name, w, d.io_poll ? (*d.io_poll ? "1" : "0") : "?",
                       d.logical_block_size ? format_size(*d.logical_block_size) : "?",
                       d.scheduler.value_or("?"));
  }
}

}  // namespace

std::string format_probe_console(const ProbeResult& r) {
  std::string out;
  out += fmt::format("io_uring on {} {}: {}\n", r.sysname, r.release,
                     r.setup_error ? fmt::format("NOT AVAILABLE (a plain ring was refused: {})", errno_text(r.setup_error))
                                   : std::string("available"));
  out += fmt::format("  io_uring_disabled  {}\n", disabled_text(r.io_uring_disabled));
  out += fmt::format("  RLIMIT_MEMLOCK     soft {}, hard {}\n", limit_text(r.memlock_soft), limit_text(r.memlock_hard));
  // A blank line before each section: the eye finds the headings.
  for (auto* section : {setup_flags_section, features_section, opcodes_section, sqpoll_section, devices_section}) {
    out += "\n";
    section(out, r);
  }
  return out;
}

json probe_to_json(const ProbeResult& r) {
  json flags = json::array();
  for (const auto& f : r.setup_flags)
    flags.push_back({{"name", f.name},
                     {"bit", std::countr_zero(f.flag)},
                     {"value", f.flag},
                     {"tried", f.tried},
                     {"with", f.with.empty() ? json(nullptr) : json(f.with)},
                     {"since", f.since},
                     {"accepted", f.error == 0},
                     {"errno", errno_json(f.error)}});
  json unknown_bits = json::array();
  for (const auto& b : r.unknown_setup_bits)
    unknown_bits.push_back({{"bit", b.bit}, {"accepted", b.error == 0}, {"errno", errno_json(b.error)}});

  json ops = json::array();
  for (const auto& o : r.opcodes)
    ops.push_back({{"op", o.op}, {"name", o.name.empty() ? json(nullptr) : json(o.name)}, {"supported", o.supported}});

  json fields = json::object();
  for (const auto& f : r.sqpoll.fields) fields[f.key] = f.value.has_value();

  json devices = json::array();
  for (const auto& d : r.block_devices)
    devices.push_back({{"name", d.name},
                       {"io_poll", d.io_poll ? json(*d.io_poll) : json(nullptr)},
                       {"logical_block_size", d.logical_block_size ? json(*d.logical_block_size) : json(nullptr)},
                       {"scheduler", d.scheduler ? json(*d.scheduler) : json(nullptr)}});

  return {
      {"context",
       {{"ioacct_version", IOACCT_VERSION}, {"schema_version", kProbeSchemaVersion}, {"kernel", r.sysname + " " + r.release}}},
      {"system",
       {{"kernel_release", r.release},
        {"io_uring_disabled", r.io_uring_disabled ? json(*r.io_uring_disabled) : json(nullptr)},
        {"rlimit_memlock", {{"soft", limit_json(r.memlock_soft)}, {"hard", limit_json(r.memlock_hard)}}}}},
      {"io_uring", {{"available", r.setup_error == 0}, {"errno", errno_json(r.setup_error)}}},
      {"features",
       {{"value", r.setup_error ? json(nullptr) : json(r.features)},
        {"names", r.feature_names},
        {"unknown_bits", r.unknown_feature_bits}}},
      {"setup_flags", flags},
      {"unknown_setup_bits", unknown_bits},
      {"opcodes",
       {{"errno", errno_json(r.opcodes_error)},
        {"last_op", r.opcodes_error ? json(nullptr) : json(r.last_op)},
        {"ops", ops}}},
      {"sqpoll_fdinfo",
       {{"errno", errno_json(r.sqpoll.error)},
        {"read_error", r.sqpoll.read_error.empty() ? json(nullptr) : json(r.sqpoll.read_error)},
        {"fields", fields}}},
      {"block_devices", devices},
  };
}

}  // namespace ioacct
