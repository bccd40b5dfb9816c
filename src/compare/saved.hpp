#pragma once
// Comparing saved runs (`ioacct compare A.json B.json ...`): bench and compare
// JSON documents read back into variants, for the same statistics, table and
// report as a live comparison. Pure: it parses text it is given and opens
// nothing; the command reads the files.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare/summary.hpp"

namespace ioacct {

// One word of the command line: "FILE.json" (a bench run, a variant named
// after the file; or a compare document, whose variants are taken as they
// are), or "NAME=FILE.json,FILE.json" (bench runs as the repetitions of one
// variant NAME).
struct SavedWord {
  std::string name;                // "" for a bare FILE.json
  std::vector<std::string> files;
};
// True when every word is one of those (so the words are saved runs, not a
// bench matrix); none of them may be empty.
bool are_saved_words(const std::vector<std::string>& words);
// Throws UsageError for an empty name or file, or a name given twice.
std::vector<SavedWord> parse_saved_words(const std::vector<std::string>& words);

struct SavedDoc {
  std::string path;
  enum class Kind { Bench, Compare } kind = Kind::Bench;
  // Shared and immutable: cheap to copy, and a plain pointer to move (a
  // json member's move is not noexcept to clang-tidy's eyes).
  std::shared_ptr<const nlohmann::json> root;
  const nlohmann::json& doc() const { return *root; }
};
// `text` is the file's content. Throws UsageError("PATH: ...") for text that
// is not JSON, JSON that is not an ioacct bench or compare document, one
// from a newer schema, or a bench run that holds no results.
SavedDoc parse_saved(const std::string& path, const std::string& text);

// What a bench document measured, in the table's units.
RunMetrics metrics_of_bench(const nlohmann::json& doc);

struct SavedCompare {
  CompareResult result;            // variants with runs, names, options, sources; not yet summarized
  std::shared_ptr<const nlohmann::json> context;  // the first document's context, for the report's header
  std::vector<std::string> warnings;  // contexts that differ, one line each, saying what to do
};
// `docs[i]` are the documents of words[i], in order. Throws UsageError for a
// compare document inside a NAME= group, or two variants of one name.
SavedCompare saved_compare(const std::vector<SavedWord>& words, const std::vector<std::vector<SavedDoc>>& docs);

// Differences between the documents' contexts that make their figures hard
// to compare: kernel, host, device (name, model, firmware), ioacct version,
// and options (those that differ between files, not inside one compare file).
std::vector<std::string> context_warnings(const std::vector<SavedDoc>& docs);

}  // namespace ioacct
