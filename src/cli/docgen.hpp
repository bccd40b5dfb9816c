#pragma once
// Man pages and shell completions, generated from the same CLI11 definitions
// that `--help` prints, so the three cannot drift apart. The build runs
// `ioacct --generate-docs DIR DOCDIR` (a hidden option) and installs what it
// writes (cmake/manpages.cmake); docs/cli.md is held to the same flags by a
// test (tests/cli/docs_test.cpp).
#include <CLI/CLI.hpp>
#include <string>

namespace ioacct {

// troff (man(7)) for `ioacct` (sub null) or `ioacct SUB`. `doc_dir` is where
// docs/*.md are installed; references to docs/X.md in help texts point there.
std::string man_page(const CLI::App& app, const CLI::App* sub, const std::string& doc_dir);
std::string bash_completion(const CLI::App& app);
std::string zsh_completion(const CLI::App& app);

// Writes ioacct.1, ioacct-SUB.1 for every subcommand, ioacct.bash and
// _ioacct (zsh) into `dir`. Throws RuntimeError when a file cannot be
// written.
void write_generated_docs(const CLI::App& app, const std::string& dir, const std::string& doc_dir);

// Where the installed docs are for the running binary: DOCDIR beside its
// BINDIR (/usr/bin/ioacct: /usr/share/doc/ioacct), when cli.md is there;
// "" when it is not (a build tree, where docs/ of the source tree is meant).
std::string installed_doc_dir();
// Turns "docs/X.md" in every description and footer of `app` and its
// subcommands into `doc_dir`/X.md, so that --help names the files where an
// installed ioacct has them.
void point_help_at(CLI::App& app, const std::string& doc_dir);

}  // namespace ioacct
