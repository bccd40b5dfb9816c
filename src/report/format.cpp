#include "report/format.hpp"

#include <array>
#include <utility>

namespace ioacct {
namespace {

constexpr std::array<std::pair<Format, const char*>, 5> kNames = {{
    {Format::Console, "console"},
    {Format::Json, "json"},
    {Format::Csv, "csv"},
    {Format::Markdown, "markdown"},
    {Format::FioJson, "fio-json"},
}};

}  // namespace

const char* format_name(Format f) noexcept {
  for (const auto& [format, name] : kNames)
    if (format == f) return name;
  return "?";
}

std::optional<Format> format_named(std::string_view word) noexcept {
  for (const auto& [format, name] : kNames)
    if (word == name) return format;
  return std::nullopt;
}

}  // namespace ioacct
