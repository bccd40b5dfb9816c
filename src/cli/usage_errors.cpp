#include "cli/usage_errors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <utility>

namespace ioacct {
namespace {

// What fio and iostat users type, and ioacct's name for it. A name counts
// only where the command has the option it points to.
const std::pair<std::string_view, std::string_view> kHabits[] = {
    {"--depth", "--iodepth"},           {"--qd", "--iodepth"},
    {"--queue-depth", "--iodepth"},     {"--numjobs", "--threads"},
    {"--jobs", "--threads"},            {"--blocksize", "--bs"},
    {"--block-size", "--bs"},           {"--readwrite", "--rw"},
    {"--ioengine", "--engine"},         {"--filesize", "--size"},
    {"--directory", "--dir"},           {"--rwmixread", "--rwmix-read"},
    {"--rwmixtrim", "--rwmix-trim"},    {"--output-format", "--format"},
    {"--json", "--format"},             {"--ramp-time", "--ramp"},
    {"--number-ios", "--ios"},          {"--iodepth-batch", "--submit-batch"},
    {"--iodepth-batch-submit", "--submit-batch"}, {"--iodepth-batch-complete", "--complete-batch"},
    {"--sqthread-poll", "--sqpoll"},    {"--sqthread-poll-cpu", "--sq-cpu"},
    {"--hipri", "--iopoll"},            {"--registerfiles", "--fixed-files"},
    {"--fixedbufs", "--fixed-bufs"},    {"--cpus-allowed", "--cpus"},
    {"--start-delay", "--startdelay"},  {"--human", "-h"},
    {"--pretty", "-h"},
};

// Optimal string alignment distance: Levenshtein with a swap of two
// neighbours counted as one edit ("--iodepht").
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string_view stem(std::string_view name) {
  while (name.starts_with('-')) name.remove_prefix(1);
  return name;
}

// The names `cmd` answers to, as typed: "-d", "--iodepth", "--help". Hidden
// options (no group) are left out: no one is pointed at a test-only flag.
std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> out;
  for (const CLI::Option* o : cmd.get_options()) {
    if (!o->nonpositional() || o->get_group().empty()) continue;
    for (const auto& s : o->get_snames()) out.push_back("-" + s);
    for (const auto& l : o->get_lnames()) out.push_back("--" + l);
  }
  return out;
}

std::vector<std::string> command_names(const CLI::App& root) {
  std::vector<std::string> out;
  for (const CLI::App* s : root.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
    out.push_back(s->get_name());
  return out;
}

// The words CLI11 could not place, the command's own first.
std::vector<std::string> leftovers(const CLI::App& root, const CLI::App* cmd, const std::string& what) {
  std::vector<std::string> out;
  if (cmd && cmd != &root) out = cmd->remaining(false);
  for (const std::string& w : root.remaining(false)) out.push_back(w);
  if (out.empty()) {
    // Not where we looked: the words are the end of the message.
    const size_t colon = what.rfind(": ");
    if (colon != std::string::npos) out.push_back(what.substr(colon + 2));
  }
  return out;
}

std::string unknown_word(const std::string& word, const std::vector<std::string>& known, const std::string& command,
                         const char* kind) {
  if (auto near = near_name(word, known)) return fmt::format("unknown {} {} for '{}'; did you mean {}?", kind, word, command, *near);
  return fmt::format("unknown {} {} for '{}' (see '{} --help')", kind, word, command, command);
}

std::string extras_message(const std::vector<std::string>& words, const CLI::App& root, const CLI::App* cmd,
                           const std::string& command) {
  const std::string& w = words.front();
  if (w.starts_with('-') && w.size() > 1) {
    const std::string name = w.substr(0, w.find('='));
    if (!cmd || cmd == &root)
      return fmt::format("unknown option {} for 'ioacct': options come after the command, as in 'ioacct bench "
                         "--iodepth 8' (see 'ioacct --help')", name);
    return unknown_word(name, option_names(*cmd), command, "option");
  }
  if (!cmd || cmd == &root) {
    if (auto near = near_name(w, command_names(root))) return fmt::format("unknown command '{}'; did you mean {}?", w, *near);
    return fmt::format("unknown command '{}': the commands are {}", w, fmt::join(command_names(root), ", "));
  }
  return fmt::format("unexpected argument{} '{}' for '{}' (see '{} --help')", words.size() > 1 ? "s" : "",
                     fmt::join(words, " "), command, command);
}

// "--bs: 1 required SIZE missing" -> "--bs", "1 required SIZE missing".
std::pair<std::string, std::string> split_name(const std::string& what) {
  const size_t colon = what.find(": ");
  if (colon == std::string::npos) return {"", what};
  return {what.substr(0, colon), what.substr(colon + 2)};
}

std::string mismatch_message(const std::string& what) {
  auto [name, rest] = split_name(what);
  // CLI11 2.x's ArgumentMismatch texts (CLI/Error.hpp).
  static const std::regex missing(R"(\d+ required (\S+) missing)");
  static const std::regex at_most(R"(At Most (\d+) required but received (\d+))");
  static const std::regex at_least(R"(At least (\d+) required but received (\d+))");
  std::smatch m;
  if (std::regex_match(rest, m, missing)) return fmt::format("{}: needs a value ({})", name, m[1].str());
  if (std::regex_match(rest, m, at_most))
    return m[1] == "1" ? fmt::format("{}: given {} times; give it once", name, m[2].str())
                       : fmt::format("{}: takes at most {} values, got {}", name, m[1].str(), m[2].str());
  if (std::regex_match(rest, m, at_least))
    return fmt::format("{}: needs at least {} value{}, got {}", name, m[1].str(), m[1] == "1" ? "" : "s", m[2].str());
  return what;
}

std::string conversion_message(const std::string& what) {
  constexpr std::string_view kCould = "Could not convert: ";
  if (what.starts_with(kCould)) {
    const std::string rest = what.substr(kCould.size());
    const size_t eq = rest.find(" = ");
    if (eq != std::string::npos) return fmt::format("{}: cannot read '{}'", rest.substr(0, eq), rest.substr(eq + 3));
  }
  auto [name, rest] = split_name(what);
  if (rest == "too many inputs for a flag" || rest == "Should be true/false or a number")
    return fmt::format("{}: is a flag and takes no value", name);
  return what;
}

std::string lower_first(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

}  // namespace

std::optional<std::string> near_name(const std::string& typed, const std::vector<std::string>& known) {
  auto has = [&](std::string_view n) { return std::find(known.begin(), known.end(), n) != known.end(); };
  std::string t = typed;
  if (t.starts_with("--")) std::replace(t.begin() + 2, t.end(), '_', '-');
  if (t != typed && has(t)) return t;
  for (const auto& [habit, ours] : kHabits)
    if (habit == t && has(ours)) return std::string(ours);
  // A unique prefix of three or more letters: --iodep.
  if (stem(t).size() >= 3) {
    std::optional<std::string> only;
    int n = 0;
    for (const std::string& k : known)
      if (k.starts_with('-') == t.starts_with('-') && k.size() > t.size() && k.starts_with(t)) only = k, ++n;
    if (n == 1) return only;
  }
  std::optional<std::string> best;
  if (stem(t).size() < 2) return best;  // one letter is near every other
  size_t best_d = std::max<size_t>(1, stem(t).size() / 3) + 1;
  for (const std::string& k : known) {
    if (stem(k).size() < 2) continue;  // no single letter is near anything
    const size_t d = edit_distance(stem(t), stem(k));
    if (d < best_d) best = k, best_d = d;
  }
  return best;
}

std::string usage_error_message(const CLI::ParseError& e, const CLI::App& root, const CLI::App* cmd,
                                const std::string& command) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) return extras_message(leftovers(root, cmd, what), root, cmd, command);
  if (dynamic_cast<const CLI::RequiredError*>(&e) && what.starts_with("A subcommand")) {
    const std::vector<std::string> words = root.remaining(false);
    if (!words.empty()) return extras_message(words, root, nullptr, "ioacct");
    return fmt::format("no command given: ioacct COMMAND, where COMMAND is one of {} (see 'ioacct --help')",
                       fmt::join(command_names(root), ", "));
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) return mismatch_message(what);
  if (dynamic_cast<const CLI::ConversionError*>(&e)) return conversion_message(what);
  if (dynamic_cast<const CLI::ExcludesError*>(&e)) {
    const size_t at = what.find(" excludes ");
    if (at != std::string::npos)
      return fmt::format("{}: cannot be combined with {}", what.substr(0, at), what.substr(at + 10));
  }
  if (dynamic_cast<const CLI::RequiresError*>(&e)) {
    const size_t at = what.find(" requires ");
    if (at != std::string::npos) return fmt::format("{}: needs {} too", what.substr(0, at), what.substr(at + 10));
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) && what.ends_with(" is required"))
    return fmt::format("{}: is required", what.substr(0, what.size() - 12));
  // ValidationError and the rest already read "NAME: what is wrong".
  return lower_first(what);
}

}  // namespace ioacct
