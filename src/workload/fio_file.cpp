// Reading a fio job file: the INI text, includes and substitutions
// (fio_file.hpp), and fio's number formats. Pure but for system_fio_env().
#include "workload/fio_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <thread>

#include "common/errors.hpp"
#include "common/files.hpp"

namespace ioacct {
namespace {

constexpr size_t kMaxIncludeDepth = 16;
constexpr size_t kMaxLine = 64 * 1024;

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "a/./b/../c.fio" -> "a/c.fio": the same file named two ways is one file
// for include-loop detection (links are caught by the depth limit).
std::string normalize(const std::string& path) {
  const bool absolute = !path.empty() && path[0] == '/';
  std::vector<std::string> parts;
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == ".." && !parts.empty() && parts.back() != "..") parts.pop_back();
    else if (!(part == ".." && absolute && parts.empty())) parts.push_back(part);
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "/" : "") + parts[i];
  return out.empty() ? "." : out;
}

std::string resolve(const std::string& from_file, const std::string& name) {
  if (!name.empty() && name[0] == '/') return name;
  const size_t slash = from_file.rfind('/');
  return slash == std::string::npos ? name : from_file.substr(0, slash + 1) + name;
}

bool valid_section_name(const std::string& n) {
  if (n.empty() || n.size() > 128) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '+';
  });
}

class Reader {
 public:
  explicit Reader(const FioEnv& env) : env_(env) {}

  // `written`: the include's name as the including file gives it.
  void read(const std::string& path, const std::string& from, bool included, const std::string& written = {}) {
    const std::string norm = normalize(path);
    const std::string shown = written == path ? written : fmt::format("{} ({})", written, path);
    if (std::find(stack_.begin(), stack_.end(), norm) != stack_.end())
      throw UsageError(fmt::format("{}: include {}: it includes itself, through {} (an include loop)", from, shown,
                                   fmt::format("{}", fmt::join(stack_, " -> "))));
    if (stack_.size() >= kMaxIncludeDepth)
      throw UsageError(fmt::format("{}: include {}: includes nest deeper than {}", from, shown, kMaxIncludeDepth));
    std::string error;
    const std::optional<std::string> text = env_.read(path, error);
    if (!text) {
      if (from.empty()) throw UsageError(fmt::format("--fio: {}: {}", path, error));
      throw UsageError(fmt::format("{}: include {}: cannot read it: {}", from, shown, error));
    }
    stack_.push_back(norm);
    unsigned line_no = 0;
    size_t pos = 0;
    while (pos < text->size()) {
      size_t end = text->find('\n', pos);
      if (end == std::string::npos) end = text->size();
      const std::string_view raw(text->data() + pos, end - pos);
      pos = end + 1;
      ++line_no;
      const std::string where = fmt::format("{}:{}", path, line_no);
      if (raw.size() > kMaxLine) throw UsageError(fmt::format("{}: the line is longer than {} bytes", where, kMaxLine));
      if (raw.find('\0') != std::string_view::npos) throw UsageError(fmt::format("{}: a NUL byte (is it a job file?)", where));
      const std::string line = trim(raw);
      if (line.empty() || line[0] == ';' || line[0] == '#') continue;
      if (line[0] == '[') {
        if (included)
          throw UsageError(fmt::format("{}: {}: an included file may not hold [] sections (fio's rule)", where, line));
        if (line.back() != ']' || line.size() < 3)
          throw UsageError(fmt::format("{}: '{}' is not a [section] header", where, line));
        const std::string name = trim(std::string_view(line).substr(1, line.size() - 2));
        if (!valid_section_name(name))
          throw UsageError(fmt::format("{}: [{}]: a job name is letters, digits, '_', '-', '.' or '+' (at most 128)",
                                       where, name));
        sections_.push_back({name, path, line_no, {}});
        continue;
      }
      const size_t eq = line.find('=');
      const std::string key = lower(trim(std::string_view(line).substr(0, eq)));
      if (eq == std::string::npos && key.rfind("include", 0) == 0 && key.size() > 7 &&
          std::isspace(static_cast<unsigned char>(key[7]))) {
        const std::string name = trim(std::string_view(line).substr(7));
        read(resolve(path, name), where, true, name);
        continue;
      }
      if (sections_.empty())
        throw UsageError(fmt::format("{}: {}: an option outside any [section] (put it under [global] or a job)",
                                     where, key));
      if (key.empty()) throw UsageError(fmt::format("{}: '{}': an option without a name", where, line));
      FioOption o;
      o.key = key;
      o.file = path;
      o.line = line_no;
      if (eq != std::string::npos) {
        o.has_value = true;
        o.value = expand(trim(std::string_view(line).substr(eq + 1)), where, key);
      }
      sections_.back().options.push_back(std::move(o));
    }
    stack_.pop_back();
    if (!included && sections_.empty())
      throw UsageError(fmt::format("--fio: {}: holds no [section]: a job file needs at least one job", path));
  }

  std::vector<FioSection> take() { return std::move(sections_); }

 private:
  // ${VAR} from the environment; fio's reserved $pagesize, $mb_memory, $ncpus.
  std::string expand(const std::string& v, const std::string& where, const std::string& key) const {
    std::string out;
    for (size_t i = 0; i < v.size();) {
      if (v[i] != '$') {
        out += v[i++];
        continue;
      }
      if (i + 1 < v.size() && v[i + 1] == '{') {
        const size_t close = v.find('}', i + 2);
        if (close == std::string::npos)
          throw UsageError(fmt::format("{}: {}: '${{' without its closing '}}'", where, key));
        const std::string name = v.substr(i + 2, close - i - 2);
        const std::optional<std::string> val = env_.getenv(name);
        if (!val)
          throw UsageError(fmt::format("{}: {}: ${{{}}} is not set in the environment (fio would put an empty "
                                       "string there; set it, e.g. {}=... ioacct bench --fio ...)",
                                       where, key, name, name));
        out += *val;
        i = close + 1;
        continue;
      }
      bool replaced = false;
      for (const auto& [word, value] : {std::pair<std::string_view, uint64_t>{"pagesize", env_.pagesize},
                                        {"mb_memory", env_.mb_memory}, {"ncpus", env_.ncpus}}) {
        if (v.compare(i + 1, word.size(), word) == 0) {
          out += std::to_string(value);
          i += 1 + word.size();
          replaced = true;
          break;
        }
      }
      if (!replaced) out += v[i++];
    }
    return out;
  }

  const FioEnv& env_;
  std::vector<std::string> stack_;
  std::vector<FioSection> sections_;
};

// --- fio's numbers ---------------------------------------------------------

// A parenthesised integer expression: + - * / % ^ and parentheses, as fio
// takes anywhere a number goes ("(4*1024)"). Recursive descent, bounded.
class Expr {
 public:
  explicit Expr(std::string_view s) : s_(s) {}
  std::optional<int64_t> parse() {
    auto v = sum(0);
    skip();
    if (!v || i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;
  void skip() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  std::optional<int64_t> sum(int d) {
    auto a = product(d);
    for (;;) {
      skip();
      if (!a || i_ >= s_.size() || (s_[i_] != '+' && s_[i_] != '-')) return a;
      const char op = s_[i_++];
      auto b = product(d);
      if (!b) return std::nullopt;
      int64_t r;
      if (op == '+' ? __builtin_add_overflow(*a, *b, &r) : __builtin_sub_overflow(*a, *b, &r)) return std::nullopt;
      a = r;
    }
  }
  std::optional<int64_t> product(int d) {
    auto a = power(d);
    for (;;) {
      skip();
      if (!a || i_ >= s_.size() || (s_[i_] != '*' && s_[i_] != '/' && s_[i_] != '%')) return a;
      const char op = s_[i_++];
      auto b = power(d);
      if (!b) return std::nullopt;
      int64_t r;
      if (op == '*') {
        if (__builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
      } else {
        if (*b == 0 || (*a == std::numeric_limits<int64_t>::min() && *b == -1)) return std::nullopt;
        r = op == '/' ? *a / *b : *a % *b;
      }
      a = r;
    }
  }
  std::optional<int64_t> power(int d) {
    auto a = atom(d);
    skip();
    if (!a || i_ >= s_.size() || s_[i_] != '^') return a;
    ++i_;
    auto b = power(d + 1);
    if (!b || *b < 0 || *b > 64) return std::nullopt;
    int64_t r = 1;
    for (int64_t k = 0; k < *b; ++k)
      if (__builtin_mul_overflow(r, *a, &r)) return std::nullopt;
    return r;
  }
  std::optional<int64_t> atom(int d) {
    if (d > kMaxDepth) return std::nullopt;
    skip();
    if (i_ >= s_.size()) return std::nullopt;
    if (s_[i_] == '(') {
      ++i_;
      auto v = sum(d + 1);
      skip();
      if (!v || i_ >= s_.size() || s_[i_] != ')') return std::nullopt;
      ++i_;
      return v;
    }
    if (s_[i_] == '-') {
      ++i_;
      auto v = atom(d + 1);
      if (!v || *v == std::numeric_limits<int64_t>::min()) return std::nullopt;
      return -*v;
    }
    size_t j = i_;
    while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) ++j;
    if (j == i_) return std::nullopt;
    int64_t v = 0;
    for (size_t k = i_; k < j; ++k)
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[k] - '0', &v)) return std::nullopt;
    i_ = j;
    return v;
  }

  std::string_view s_;
  size_t i_ = 0;
};

// The number at the start of `t` ("4", "0x10", "(2*8)", "1.5") and where its
// suffix begins. Fractions are kept as a numerator over 10^digits.
struct Num {
  uint64_t whole = 0, frac = 0, scale = 1;
  size_t end = 0;
};

std::optional<Num> leading_number(const std::string& t) {
  Num n;
  if (t.empty()) return std::nullopt;
  if (t[0] == '(') {
    int depth = 0;
    size_t j = 0;
    for (; j < t.size(); ++j) {
      if (t[j] == '(') ++depth;
      else if (t[j] == ')' && --depth == 0) break;
    }
    if (j == t.size()) return std::nullopt;
    const auto v = Expr(std::string_view(t).substr(0, j + 1)).parse();
    if (!v || *v < 0) return std::nullopt;
    n.whole = static_cast<uint64_t>(*v);
    n.end = j + 1;
    return n;
  }
  size_t i = 0;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    i = 2;
    while (i < t.size() && std::isxdigit(static_cast<unsigned char>(t[i]))) {
      const int d = std::isdigit(static_cast<unsigned char>(t[i])) ? t[i] - '0' : std::tolower(t[i]) - 'a' + 10;
      if (n.whole > (std::numeric_limits<uint64_t>::max() >> 4)) return std::nullopt;
      n.whole = n.whole * 16 + static_cast<uint64_t>(d);
      ++i;
    }
    if (i == 2) return std::nullopt;
    n.end = i;
    return n;
  }
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {
    if (__builtin_mul_overflow(n.whole, 10, &n.whole) || __builtin_add_overflow(n.whole, t[i] - '0', &n.whole))
      return std::nullopt;
    ++i;
  }
  if (i == 0) return std::nullopt;
  if (i < t.size() && t[i] == '.') {
    size_t j = ++i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) && i - j < 9) {
      n.frac = n.frac * 10 + static_cast<uint64_t>(t[i] - '0');
      n.scale *= 10;
      ++i;
    }
    if (i == j) return std::nullopt;
  }
  n.end = i;
  return n;
}

// n × mult, when whole and in range.
std::optional<uint64_t> times(const Num& n, uint64_t mult) {
  uint64_t w;
  if (__builtin_mul_overflow(n.whole, mult, &w)) return std::nullopt;
  const unsigned __int128 f = static_cast<unsigned __int128>(n.frac) * mult;
  if (f % n.scale) return std::nullopt;
  const unsigned __int128 total = static_cast<unsigned __int128>(w) + f / n.scale;
  if (total > std::numeric_limits<uint64_t>::max()) return std::nullopt;
  return static_cast<uint64_t>(total);
}

}  // namespace

std::optional<uint64_t> fio_size(const std::string& text, unsigned kb_base) {
  const std::string t = trim(text);
  const auto n = leading_number(t);
  if (!n) return std::nullopt;
  std::string suffix = lower(t.substr(n->end));
  if (!suffix.empty() && suffix.back() == 'b') suffix.pop_back();  // 'kB' is 'k'; 'b' alone is bytes
  if (suffix.empty()) return times(*n, 1);
  static constexpr std::string_view kPrefixes = "kmgtp";
  const size_t p = kPrefixes.find(suffix[0]);
  if (p == std::string_view::npos) return std::nullopt;
  const bool iec = suffix.size() == 2 && suffix[1] == 'i';
  if (suffix.size() > (iec ? 2u : 1u)) return std::nullopt;
  // kb_base=1024 (fio's default, "compatibility mode"): k is 1024, ki 1000.
  // kb_base=1000: the standards: k is 1000, ki 1024.
  const bool binary = (kb_base == 1024) != iec;
  uint64_t mult = 1;
  for (size_t k = 0; k <= p; ++k) mult *= binary ? 1024 : 1000;
  return times(*n, mult);
}

std::optional<uint64_t> fio_time_ns(const std::string& text) {
  const std::string t = trim(text);
  const auto n = leading_number(t);
  if (!n) return std::nullopt;
  const std::string suffix = lower(t.substr(n->end));
  // fio: seconds without a unit, except inside an expression: microseconds.
  uint64_t mult;
  if (suffix.empty()) mult = t[0] == '(' ? 1000ull : 1'000'000'000ull;
  else if (suffix == "us" || suffix == "usec") mult = 1000ull;
  else if (suffix == "ms" || suffix == "msec") mult = 1'000'000ull;
  else if (suffix == "s" || suffix == "sec") mult = 1'000'000'000ull;
  else if (suffix == "m" || suffix == "min") mult = 60'000'000'000ull;
  else if (suffix == "h" || suffix == "hr") mult = 3'600'000'000'000ull;
  else if (suffix == "d") mult = 86'400'000'000'000ull;
  else return std::nullopt;
  return times(*n, mult);
}

std::vector<FioSection> read_fio_file(const std::string& path, const FioEnv& env) {
  Reader r(env);
  r.read(path, "", false);
  return r.take();
}

FioEnv system_fio_env() {
  FioEnv env;
  env.read = [](const std::string& path, std::string& error) -> std::optional<std::string> {
    auto text = read_user_file(path, 64u << 20, error);
    if (!text && error.starts_with("larger than")) error += ": not a job file";
    return text;
  };
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    // Read before any worker thread exists, and nothing here calls setenv.
    const char* v = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe)
    if (!v) return std::nullopt;
    return std::string(v);
  };
  const long page = sysconf(_SC_PAGESIZE);
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  env.pagesize = page > 0 ? static_cast<uint64_t>(page) : 4096;
  env.mb_memory = page > 0 && pages > 0 ? static_cast<uint64_t>(page) * static_cast<uint64_t>(pages) >> 20 : 0;
  env.ncpus = cpus > 0 ? static_cast<uint64_t>(cpus) : 1;
  return env;
}

}  // namespace ioacct
