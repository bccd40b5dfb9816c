#pragma once
// An optional figure in a JSON report: its value, or null where it was not
// measured (never a made-up 0). One helper for every reporter.
#include <nlohmann/json.hpp>
#include <optional>

namespace ioacct {

template <typename T>
nlohmann::json opt_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace ioacct
