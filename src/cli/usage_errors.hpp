#pragma once
// The parser's errors in ioacct's words. CLI11 throws its own text ("The
// following argument was not expected: --depth"); every command line that
// CLI11 refuses goes through usage_error_message, so that each is one line
// naming the flag, with a "did you mean" where a near name exists.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ioacct {

// The nearest of `known` (e.g. "--iodepth", "-d") to what was typed
// ("--depth", "--iodepht", "--rate_iops"): first the names fio and iostat
// users type for ioacct's (--depth, --numjobs, --blocksize, ...), then '_'
// read as '-', then the closest by edit distance (transpositions count one)
// when it is within a third of the name. None when nothing is near.
std::optional<std::string> near_name(const std::string& typed, const std::vector<std::string>& known);

// The message (without "error: ") for `e`, thrown while parsing `cmd`'s
// words; `command` is how the user calls it ("ioacct bench"). `root` is the
// app parse() was called on: where CLI11 leaves words it could not place.
std::string usage_error_message(const CLI::ParseError& e, const CLI::App& root, const CLI::App* cmd,
                                const std::string& command);

}  // namespace ioacct
