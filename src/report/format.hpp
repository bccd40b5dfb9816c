#pragma once
// The sinks a command writes its results to. --format is read once, at the
// command line (cli/cli.hpp, parse_format), into a Format; each command then
// looks its renderer up in a table of its own (bench_sinks, compare_sinks),
// as hyperfine picks its exporters.
#include <optional>
#include <string_view>

namespace ioacct {

enum class Format { Console, Json, Csv, Markdown, FioJson };

// The word on the command line and in the docs: "console", "json", "csv",
// "markdown", "fio-json".
const char* format_name(Format f) noexcept;
// The Format named `word`; nullopt for any other word.
std::optional<Format> format_named(std::string_view word) noexcept;

}  // namespace ioacct
