// Every command line the parser refuses is one line in ioacct's words:
// "error: " naming the flag or word, a "did you mean" where a near name
// exists (the names fio and iostat users type included), exit 2, nothing on
// stdout, and none of CLI11's own text.
#include <gtest/gtest.h>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

struct Case {
  std::vector<std::string> args;
  std::string line;  // the whole of stderr, without its newline
};

TEST(UsageErrors, TheParsersRefusalsAreOneLineInIoacctsWords) {
  const std::vector<Case> cases = {
      // fio's and iostat's names for ioacct's options
      {{"bench", "--depth", "4"}, "error: unknown option --depth for 'ioacct bench'; did you mean --iodepth?"},
      {{"bench", "--qd=4"}, "error: unknown option --qd for 'ioacct bench'; did you mean --iodepth?"},
      {{"bench", "--numjobs", "2"}, "error: unknown option --numjobs for 'ioacct bench'; did you mean --threads?"},
      {{"bench", "--blocksize", "8k"}, "error: unknown option --blocksize for 'ioacct bench'; did you mean --bs?"},
      {{"bench", "--ioengine", "psync"}, "error: unknown option --ioengine for 'ioacct bench'; did you mean --engine?"},
      {{"bench", "--rate_iops", "10"}, "error: unknown option --rate_iops for 'ioacct bench'; did you mean --rate-iops?"},
      {{"rings", "--depth", "4"}, "error: unknown option --depth for 'ioacct rings' (see 'ioacct rings --help')"},
      {{"stat", "--human"}, "error: unknown option --human for 'ioacct stat'; did you mean -h?"},
      // typos: a swap, a letter missing, a prefix
      {{"bench", "--iodepht", "4"}, "error: unknown option --iodepht for 'ioacct bench'; did you mean --iodepth?"},
      {{"bench", "--thread", "2"}, "error: unknown option --thread for 'ioacct bench'; did you mean --threads?"},
      {{"export", "--web-config-file", "x"},
       "error: unknown option --web-config-file for 'ioacct export'; did you mean --web.config.file?"},
      // nothing near: the command's --help
      {{"bench", "--frobnicate"}, "error: unknown option --frobnicate for 'ioacct bench' (see 'ioacct bench --help')"},
      {{"bench", "-q"}, "error: unknown option -q for 'ioacct bench' (see 'ioacct bench --help')"},
      // commands
      {{"bnech"}, "error: unknown command 'bnech'; did you mean bench?"},
      {{"frob"}, "error: unknown command 'frob': the commands are bench, compare, merge, probe, rings, stat, export, top"},
      {{}, "error: no command given: ioacct COMMAND, where COMMAND is one of bench, compare, merge, probe, rings, "
           "stat, export, top (see 'ioacct --help')"},
      {{"--iodepth", "8"}, "error: unknown option --iodepth for 'ioacct': options come after the command, as in "
                           "'ioacct bench --iodepth 8' (see 'ioacct --help')"},
      // values
      {{"bench", "--bs"}, "error: --bs: needs a value (SIZE)"},
      {{"rings", "--pid"}, "error: --pid: needs a value (PID)"},
      {{"bench", "--iodepth", "1", "--iodepth", "2"}, "error: --iodepth: given 2 times; give it once"},
      {{"probe", "sda"}, "error: unexpected argument 'sda' for 'ioacct probe' (see 'ioacct probe --help')"},
      // inside --job, the same words
      {{"bench", "--job", "a:--depth 2"}, "error: --job a: unknown option --depth for 'ioacct bench'; did you mean "
                                          "--iodepth?"},
  };
  for (const Case& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    SCOPED_TRACE(joined);
    const Outcome o = run_ioacct(c.args);
    EXPECT_EQ(o.exit_code, 2);
    EXPECT_EQ(o.out, "");
    EXPECT_EQ(o.err, c.line + "\n");
    // CLI11's own phrases are gone.
    for (const char* theirs : {"was not expected", "required but received", "is required", "missing"})
      EXPECT_EQ(o.err.find(theirs), std::string::npos) << theirs;
  }
}

}  // namespace
}  // namespace ioacct::test
