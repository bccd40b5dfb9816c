#include "cli/probe_cmd.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "cli/cli.hpp"
#include "cli/option_rows.hpp"
#include "common/errors.hpp"
#include "common/output.hpp"
#include "engine/probe.hpp"
#include "report/probe_report.hpp"

namespace ioacct {
namespace {

constexpr OptionRow<ProbeArgs> kProbeRows[] = {format_row<ProbeArgs>("console or json (default console)")};

}  // namespace

CLI::App* add_probe_command(CLI::App& app, ProbeArgs& a) {
  return add_command(
      app, "probe",
      "Show what this kernel's io_uring offers: setup flags, features, opcodes, SQPOLL accounting, devices.",
      "Every answer comes from trying: each setup flag in a ring of its own, created and closed unused; "
      "opcodes through IORING_REGISTER_PROBE.\nSee docs/cli.md.",
      a, kProbeRows);
}

int run_probe_command(const ProbeArgs& a) {
  const Format format = parse_format("--format", a.format, {Format::Console, Format::Json});
  const ProbeResult r = probe_io_uring();
  const std::string text = format == Format::Json ? probe_to_json(r).dump(2) + "\n" : format_probe_console(r);
  write_output(text);
  return kExitOk;
}

}  // namespace ioacct
