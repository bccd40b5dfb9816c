#pragma once
// Named matrices for the classic io_uring questions (`ioacct compare --preset`).
#include <string>
#include <utility>
#include <vector>

namespace ioacct {

struct Preset {
  std::string name;
  std::string question;                   // what it asks, one line; the headline answers it
  std::string explanation;                // how the variants answer it, printed with the result
  std::vector<std::string> fixed;         // bench words every variant gets (before the user's)
  std::vector<std::pair<std::string, std::vector<std::string>>> configs;  // NAME, bench words
};

// The sqpoll preset's row at depth 32 with ioacct's own accounting off
// (--acct off): named for whose accounting it is, since beside SQPOLL rows
// "accounting" reads as the kernel's SQ thread statistics.
inline constexpr const char* kIoacctAcctOffVariant = "qd32-ioacct-acct-off";

// Null for an unknown name.
const Preset* find_preset(const std::string& name);
std::string preset_names();  // "qd1, sqpoll, libaio, util"

}  // namespace ioacct
