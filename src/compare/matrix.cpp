#include "compare/matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "common/errors.hpp"

namespace ioacct {
namespace {

std::vector<std::string> split_commas(const std::string& option, const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t c = s.find(',', start);
    std::string item = s.substr(start, c == std::string::npos ? std::string::npos : c - start);
    if (item.empty()) throw UsageError(fmt::format("{}: '{}' has an empty item in its comma list", option, s));
    out.push_back(std::move(item));
    if (c == std::string::npos) return out;
    start = c + 1;
  }
}

bool is_on_off_list(const std::string& s) {
  if (s.empty()) return false;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (item != "on" && item != "off") return false;
  return s.back() != ',';
}

}  // namespace

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

Matrix parse_matrix(const std::vector<std::string>& words, const OptionKinds& kinds) {
  Matrix m;
  auto add_axis = [&](const std::string& option, bool flag, const std::string& list) {
    for (const auto& a : m.axes)
      if (a.option == option) throw UsageError(fmt::format("{}: given as a list twice; give one list", option));
    Axis a{option, flag, split_commas(option, list)};
    std::vector<std::string> sorted = a.values;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      throw UsageError(fmt::format("{}: '{}' names a value twice", option, list));
    m.axes.push_back(std::move(a));
  };
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() < 2 || w[0] != '-' || !kinds.known) {
      m.fixed.push_back(w);  // a target, or something bench will reject by name
      continue;
    }
    const size_t eq = w.find('=');
    const std::string name = w.substr(0, eq);
    if (!kinds.known(name)) {
      m.fixed.push_back(w);
      continue;
    }
    if (kinds.is_flag(name)) {
      if (eq == std::string::npos && i + 1 < words.size() && is_on_off_list(words[i + 1])) {
        const std::string& list = words[++i];
        if (list.find(',') != std::string::npos) add_axis(name, true, list);
        else if (list == "on") m.fixed.push_back(name);
        continue;  // "off": the flag is left out
      }
      m.fixed.push_back(w);
      continue;
    }
    std::string value;
    if (eq != std::string::npos) {
      value = w.substr(eq + 1);
    } else if (i + 1 < words.size()) {
      value = words[++i];
    } else {
      m.fixed.push_back(w);  // bench says "needs an argument"
      continue;
    }
    if (value.find(',') != std::string::npos && !kinds.is_list(name)) {
      add_axis(name, false, value);
    } else {
      m.fixed.push_back(name);
      m.fixed.push_back(value);
    }
  }
  return m;
}

std::vector<Variant> expand(const Matrix& m, const std::vector<std::pair<std::string, std::vector<std::string>>>& configs) {
  std::vector<Variant> out;
  if (configs.empty()) {
    out.push_back({"", m.fixed});
  } else {
    for (const auto& [name, words] : configs) {
      Variant v{name, m.fixed};
      v.args.insert(v.args.end(), words.begin(), words.end());
      out.push_back(std::move(v));
    }
  }
  for (const Axis& a : m.axes) {
    std::vector<Variant> next;
    for (const Variant& base : out) {
      for (const std::string& value : a.values) {
        Variant v = base;
        if (!v.name.empty()) v.name += ' ';
        v.name += fmt::format("{}={}", a.option.substr(a.option.find_first_not_of('-')), value);
        if (!a.flag) {
          v.args.push_back(a.option);
          v.args.push_back(value);
        } else if (value == "on") {
          v.args.push_back(a.option);
        }
        next.push_back(std::move(v));
      }
    }
    out = std::move(next);
  }
  if (out.size() == 1 && out[0].name.empty()) out[0].name = "default";
  return out;
}

std::vector<RunSlot> round_slots(size_t variants, unsigned k, unsigned repetition, bool warmup) {
  std::vector<RunSlot> out;
  for (size_t i = 0; i < variants; ++i) out.push_back({(k + i) % variants, repetition, warmup});
  return out;
}

std::vector<RunSlot> interleave(size_t variants, unsigned repeat, unsigned warmup) {
  std::vector<RunSlot> out;
  for (unsigned r = 0; r < warmup + repeat; ++r) {
    const auto round = round_slots(variants, r, r < warmup ? r : r - warmup, r < warmup);
    out.insert(out.end(), round.begin(), round.end());
  }
  return out;
}

}  // namespace ioacct
