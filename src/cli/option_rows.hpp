#pragma once
// A command's options as rows of plain data, one row an option: its names,
// the type name of its value, its help, the member of the command's Args it
// fills and, for bench, the decoder that turns the value into the JobSpec.
// One loop (add_option_rows) registers the rows with CLI11 in their order;
// that order is --help's, the man pages' and completions' (docgen.cpp reads
// the options back from CLI11), and the order bench decodes them in, so a
// new option is one row, found in one place. The fio job-file map has the
// same shape (workload/fio_options.hpp).
#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "workload/job.hpp"

namespace ioacct {

// What a decoder is handed: the option's long name (for its messages), its
// value as typed ("" for a flag), and every option as typed, for the checks
// across options ("--hipri-percentage: only applies with --hipri").
template <class Args>
struct Given {
  std::string_view flag;
  const std::string& text;
  const Args& args;
};

template <class Args>
struct OptionRow {
  std::string_view names;      // CLI11's: "-d,--iodepth"; a positional's has no dash ("targets")
  std::string_view type_name;  // "N", "SIZE"; "" for a flag, and for an option --help leaves out
  std::string_view help;
  std::variant<std::string Args::*, bool Args::*, std::vector<std::string> Args::*> field;
  // Into the job, in the rows' order, for an option that is given or has a
  // default (a value not empty, a flag set); null where the option is read
  // elsewhere (a run's outputs, --job, --fio) or for a command without jobs.
  void (*decode)(const Given<Args>&, JobSpec&) = nullptr;
  // CLI11's settings beyond the names, the type name and the help (left out
  // of --help, repeatable, ...); null for none.
  void (*tune)(CLI::Option*) = nullptr;
};

// The settings rows name as `tune`.
inline void hidden_option(CLI::Option* o) { o->group(""); }  // test-only or internal: docs/cli.md says why
inline void repeatable_option(CLI::Option* o) { o->multi_option_policy(CLI::MultiOptionPolicy::TakeAll); }

// "--iodepth" for "-d,--iodepth": the name a message gives; a positional's
// name as it stands ("targets").
inline std::string_view long_name(std::string_view names) {
  const size_t comma = names.rfind(',');
  return comma == std::string_view::npos ? names : names.substr(comma + 1);
}

template <class Args, class Rows>
void add_option_rows(CLI::App* app, Args& a, const Rows& rows) {
  for (const OptionRow<Args>& r : rows) {
    const std::string names(r.names), help(r.help);
    CLI::Option* o = nullptr;
    if (const auto* flag = std::get_if<bool Args::*>(&r.field)) o = app->add_flag(names, a.**flag, help);
    else if (const auto* one = std::get_if<std::string Args::*>(&r.field)) o = app->add_option(names, a.**one, help);
    else o = app->add_option(names, a.*std::get<std::vector<std::string> Args::*>(r.field), help);
    if (!r.type_name.empty()) o->type_name(std::string(r.type_name));
    if (r.tune) r.tune(o);
  }
}

// A subcommand: its name and description, the footer --help prints after
// the options, and its options' rows.
template <class Args, class Rows>
CLI::App* add_command(CLI::App& app, std::string_view name, std::string_view description, std::string_view footer,
                      Args& a, const Rows& rows) {
  CLI::App* c = app.add_subcommand(std::string(name), std::string(description));
  c->footer(std::string(footer));
  add_option_rows(c, a, rows);
  return c;
}

// Rows that several commands have, each with its own help: where the
// result goes (--format, -o/--output, --report) and --progress.
template <class Args>
constexpr OptionRow<Args> format_row(std::string_view help, void (*decode)(const Given<Args>&, JobSpec&) = nullptr) {
  return {"--format", "FORMAT", help, &Args::format, decode};
}
template <class Args>
constexpr OptionRow<Args> output_row(std::string_view help) {
  return {"-o,--output", "FILE", help, &Args::output};
}
template <class Args>
constexpr OptionRow<Args> report_row(std::string_view help) {
  return {"--report", "FILE.html", help, &Args::report};
}
template <class Args>
constexpr OptionRow<Args> progress_row(std::string_view help) {
  return {"--progress", "", help, &Args::progress};
}

}  // namespace ioacct
