// Installing and packaging: `cmake --install` into a scratch DESTDIR puts the
// binary, the man pages, the completions and the docs in place; `cpack -G
// DEB` makes a .deb whose Depends covers every library the binary needs,
// and that .deb unpacked into a scratch root (dpkg -x) runs. The man pages
// and completions carry every flag --help lists, and render without groff
// warnings.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "cli/help_flags.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

namespace fs = std::filesystem;

std::string build_dir() { return fs::path(IOACCT_BINARY).parent_path().string(); }

std::set<std::string> files_under(const std::string& root) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (!e.is_directory()) out.insert(e.path().string().substr(root.size()));
  return out;
}

// The install prefix the build was configured with (the presets: /usr).
std::string prefix() {
  return sh("sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' " + build_dir() + "/CMakeCache.txt");
}

TEST(Install, PutsTheBinaryManPagesCompletionsAndDocsInPlace) {
  TempDir root;
  sh("DESTDIR=" + root.path() + " cmake --install " + build_dir() + " >/dev/null");
  const std::string p = prefix();
  std::set<std::string> want = {
      p + "/bin/ioacct",
      p + "/share/man/man1/ioacct.1.gz",
      p + "/share/bash-completion/completions/ioacct",
      p + "/share/zsh/vendor-completions/_ioacct",
      p + "/share/doc/ioacct/README.md",
      p + "/share/doc/ioacct/cli.md",
      p + "/share/doc/ioacct/design.md",
      p + "/share/doc/ioacct/fio.md",
      p + "/share/doc/ioacct/copyright",
      p + "/share/doc/ioacct/changelog.gz",
      p + "/share/doc/ioacct/json-schema.md",
      p + "/share/doc/ioacct/metrics.md",
      p + "/lib/systemd/system/ioacct-export.service",
      p + "/share/ioacct/prometheus/ioacct-rules.yml",
      p + "/share/ioacct/prometheus/ioacct-rules.test.yml",
      p + "/share/ioacct/grafana/ioacct.json",
  };
  for (const std::string& sub : help_subcommands()) want.insert(p + "/share/man/man1/ioacct-" + sub + ".1.gz");
  EXPECT_EQ(files_under(root.path()), want);
  EXPECT_EQ(sh(root.path() + p + "/bin/ioacct --version"), sh(IOACCT_BINARY " --version"));
  // man finds each page by name in the installed tree, whatis reads its NAME line.
  for (const std::string& sub : help_subcommands()) {
    const std::string page = "ioacct-" + sub;
    EXPECT_EQ(sh("MANPATH=" + root.path() + p + "/share/man man -w " + page),
              root.path() + p + "/share/man/man1/" + page + ".1.gz");
    EXPECT_EQ(sh("lexgrog " + root.path() + p + "/share/man/man1/" + page + ".1.gz").rfind(
                  root.path() + p + "/share/man/man1/" + page + ".1.gz: \"" + page + " - ", 0),
              0u);
  }
}

// Every flag --help lists is in the subcommand's man page and completions;
// the pages render without a groff warning.
TEST(Install, ManPagesAndCompletionsCarryEveryFlagOfHelp) {
  const std::string gen = build_dir() + "/generated-docs";
  const std::string bash_file = gen + "/ioacct.bash", zsh_file = gen + "/_ioacct";
  EXPECT_EQ(sh("zsh -n " + zsh_file + " 2>&1; echo rc=$?"), "rc=0");
  for (const std::string& sub : help_subcommands()) {
    SCOPED_TRACE(sub);
    const std::string page = gen + "/man1/ioacct-" + sub + ".1.gz";
    EXPECT_EQ(sh("LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l " + page + " 2>&1 >/dev/null"), "");
    const std::string text = sh("zcat " + page);
    // What bash offers after `ioacct SUB -`.
    const std::string offered = sh("bash -c 'source " + bash_file + "; COMP_WORDS=(ioacct " + sub +
                                   " -); COMP_CWORD=2; _ioacct; printf \"%s\\n\" \"${COMPREPLY[@]}\"'");
    const auto help = help_flags(sub);
    std::set<std::string> bash_flags;
    std::istringstream in(offered);
    for (std::string w; std::getline(in, w);)
      if (w != "--help" && (w != "-h" || help.count("-h"))) bash_flags.insert(w);
    EXPECT_EQ(bash_flags, help) << "bash completes exactly the flags --help lists";
    const std::string zsh = sh("cat " + zsh_file);
    for (const std::string& f : help) {
      std::string roff;
      for (char c : f) roff += c == '-' ? std::string("\\-") : std::string(1, c);
      EXPECT_NE(text.find("\\fB" + roff + "\\fR"), std::string::npos) << f << " is not in the man page";
      // '--bs[...]' alone, or '(-d --iodepth)'{-d,--iodepth}'[...]' with its other name
      EXPECT_TRUE(zsh.find(f + "[") != std::string::npos || zsh.find("{" + f + ",") != std::string::npos ||
                  zsh.find("," + f + "}") != std::string::npos)
          << f << " is not in the zsh completion";
    }
  }
  // Subcommands first, then files for a FILE, devices for stat.
  EXPECT_EQ(sh("bash -c 'source " + bash_file + "; COMP_WORDS=(ioacct ex); COMP_CWORD=1; _ioacct; echo ${COMPREPLY[@]}'"),
            "export");
  EXPECT_EQ(sh("bash -c 'source " + bash_file + "; COMP_WORDS=(ioacct export --web.config.file " + gen +
               "/ioacct.ba); COMP_CWORD=3; _ioacct; echo ${COMPREPLY[@]}'"),
            bash_file);
  const std::string disk = sh("ls /sys/class/block | head -1");
  EXPECT_NE(sh("bash -c 'source " + bash_file + "; COMP_WORDS=(ioacct stat -x " + disk +
               "); COMP_CWORD=3; _ioacct; echo ${COMPREPLY[@]}'")
                .find(disk),
            std::string::npos);
}

// --help names the docs where the user has them: the installed copies under
// the prefix's doc folder, and docs/ of the source tree only from a build.
TEST(Install, HelpNamesTheInstalledDocs) {
  TempDir root;
  sh("DESTDIR=" + root.path() + " cmake --install " + build_dir() + " >/dev/null");
  const std::string docs = root.path() + prefix() + "/share/doc/ioacct";
  const std::string bin = root.path() + prefix() + "/bin/ioacct";
  for (const auto& [sub, file] : std::vector<std::pair<std::string, std::string>>{
           {"bench", "cli.md"}, {"bench", "fio.md"}, {"stat", "cli.md"}, {"export", "metrics.md"}}) {
    SCOPED_TRACE(sub + " " + file);
    EXPECT_TRUE(fs::exists(docs + "/" + file));
    const std::string installed = sh(bin + " " + sub + " --help");
    EXPECT_NE(installed.find(docs + "/" + file), std::string::npos) << installed;
    EXPECT_EQ(installed.find(" docs/"), std::string::npos) << "a source-tree path in the installed --help";
    EXPECT_EQ(installed.find("(docs/"), std::string::npos) << "a source-tree path in the installed --help";
    const std::string built = sh(IOACCT_BINARY " " + sub + " --help");
    EXPECT_NE(built.find("docs/" + file), std::string::npos) << built;
  }
}

TEST(Package, LintianFindsNoErrors) {
  ASSERT_EQ(sh("command -v lintian >/dev/null && echo yes || echo no"), "yes") << "run scripts/setup: it installs lintian";
  TempDir out;
  sh("cpack -G DEB -B " + out.path() + " --config " + build_dir() + "/CPackConfig.cmake >/dev/null 2>&1");
  const std::string deb = sh("ls " + out.path() + "/*.deb");
  ASSERT_FALSE(deb.empty());
  // The files whose absence lintian calls an error (copyright, changelog), and
  // fio.md, which --help names.
  const std::string listing = sh("dpkg-deb -c " + deb);
  for (const char* f : {"/share/doc/ioacct/copyright", "/share/doc/ioacct/changelog.gz", "/share/doc/ioacct/fio.md"})
    EXPECT_NE(listing.find("." + prefix() + f), std::string::npos) << f << " is not in the .deb:\n" << listing;
  // Every tag, errors and warnings included; only errors fail the test
  // (README.md, "Packaging", lists the rest and why they stay).
  const std::string tags = sh("lintian --no-cfg --pedantic -I " + deb + " 2>&1 | grep -v '^running with root' || true");
  std::istringstream lines(tags);
  for (std::string l; std::getline(lines, l);) EXPECT_NE(l.rfind("E: ", 0), 0u) << l;
  EXPECT_EQ(tags.find("no-copyright-file"), std::string::npos) << tags;
  EXPECT_EQ(tags.find("bogus-mail-host"), std::string::npos) << tags;
  EXPECT_EQ(tags.find("no-changelog"), std::string::npos) << tags;
}

TEST(Package, TheDebDependsOnWhatTheBinaryLinksAndRunsFromAScratchRoot) {
  TempDir out;
  sh("cpack -G DEB -B " + out.path() + " --config " + build_dir() + "/CPackConfig.cmake >/dev/null 2>&1");
  const std::string deb = sh("ls " + out.path() + "/*.deb");
  ASSERT_FALSE(deb.empty());
  EXPECT_EQ(sh("dpkg-deb -f " + deb + " Package"), "ioacct");
  const std::string depends = sh("dpkg-deb -f " + deb + " Depends");
  std::set<std::string> packages;
  const std::regex name(R"((?:^|, )([a-z0-9][a-z0-9.+-]+))");
  for (auto it = std::sregex_iterator(depends.begin(), depends.end(), name); it != std::sregex_iterator(); ++it)
    packages.insert((*it)[1]);
  for (const auto& p : packages) EXPECT_EQ(p.find("-dev"), std::string::npos) << p << ": a -dev package in Depends";

  TempDir root;
  sh("dpkg -x " + deb + " " + root.path());
  const std::string bin = root.path() + prefix() + "/bin/ioacct";
  EXPECT_EQ(sh(bin + " --version").rfind("ioacct ", 0), 0u);
  EXPECT_NE(sh(bin + " probe").find("io_uring on Linux"), std::string::npos) << "the installed binary runs";
  // Every library it links directly (DT_NEEDED) belongs to a package in
  // Depends; what those need in turn is their packages' business.
  std::istringstream libs(sh("for n in $(readelf -d " + bin + " | sed -n 's/.*Shared library: \\[\\(.*\\)\\]/\\1/p'); do "
                             "ldd " + bin + " | awk -v n=$n '$1 == n && $3 ~ /^\\// {print $3}'; done"));
  size_t checked = 0;
  for (std::string lib; std::getline(libs, lib);) {
    const std::string real = fs::canonical(lib).string();
    const std::string owner = sh("dpkg -S " + real + " 2>/dev/null | head -1 | cut -d: -f1 || true");
    if (owner.empty()) continue;  // not from a package (e.g. the vDSO's neighbours)
    EXPECT_TRUE(packages.count(owner)) << lib << " comes from " << owner << ", which Depends does not name: " << depends;
    ++checked;
  }
  EXPECT_GE(checked, 8u) << "liburing, libbpf, libmicrohttpd, libgnutls, yaml-cpp, fmt, ... all checked";
  // The man pages went into the package, compressed.
  EXPECT_TRUE(fs::exists(root.path() + prefix() + "/share/man/man1/ioacct-export.1.gz"));
}

}  // namespace
}  // namespace ioacct::test
