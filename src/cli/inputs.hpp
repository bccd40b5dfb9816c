#pragma once
// The files a command is given as words: FILE, DIR (its *.json, sorted) or
// a glob the shell did not expand ('runs-a/*.json', quoted so that ioacct
// sees it), expanded here, at the command's edge.
#include <string>
#include <vector>

namespace ioacct {

// `word` as one or more paths, in order: a glob's matches sorted, a
// directory's *.json files sorted (when `dirs`), else the word itself (a
// missing file is the reader's to report). Throws UsageError naming `word`
// for a glob that matches nothing or a directory without a .json file.
std::vector<std::string> expand_input(const std::string& word, bool dirs);

}  // namespace ioacct
