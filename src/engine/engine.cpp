#include "engine/engine.hpp"

#include <fmt/format.h>

#include "engine/engine_impl.hpp"
#include "engine/setup_flags.hpp"
#include "engine/uapi.hpp"

namespace ioacct {

EngineTraits engine_traits(EngineKind kind) noexcept {
  if (kind == EngineKind::Nop) return {.moves_data = false, .checks_fd = false, .fused = true};
  return {.moves_data = true, .checks_fd = true, .fused = kind == EngineKind::Uring};
}

const char* engine_name(EngineKind kind, SyncCall call) noexcept {
  switch (kind) {
    case EngineKind::Uring: return "uring";
    case EngineKind::Psync:
      switch (call) {
        case SyncCall::Pread: return "psync";
        case SyncCall::Read: return "sync";
        case SyncCall::Preadv: return "pvsync";
        case SyncCall::Preadv2: return "pvsync2";
      }
      return "psync";
    case EngineKind::Nop: return "nop";
    case EngineKind::Libaio: return "libaio";
  }
  return "?";
}

std::unique_ptr<Engine> make_engine(EngineKind kind, const EngineOptions& opts) {
  switch (kind) {
    case EngineKind::Uring: return std::make_unique<UringEngine>(opts, false);
    case EngineKind::Nop: return std::make_unique<UringEngine>(opts, true);
    case EngineKind::Psync: return std::make_unique<PsyncEngine>(opts);
    case EngineKind::Libaio: return make_libaio_engine(opts);
  }
  return nullptr;
}

void check_engine_available(EngineKind kind, const UringOptions& uring, unsigned depth) {
  if (kind == EngineKind::Psync) return;
  if (kind == EngineKind::Libaio) return check_libaio_available(depth);
  EngineOptions o;
  o.depth = depth;
  o.uring = uring;
  // Registration needs the real files and buffers; that is checked when the
  // workers set up. What can fail here is the ring itself and its flags.
  o.uring.fixed_files = o.uring.fixed_bufs = FlagWish::Off;
  UringEngine probe(o, kind == EngineKind::Nop);  // throws with the reason
}

std::string setup_flag_names(uint32_t flags) {
  std::string out;
  for (const SetupFlag& n : kSetupFlags) {
    if (!(flags & n.bit)) continue;
    if (!out.empty()) out += '|';
    out += n.name;
  }
  return out.empty() ? "none" : out;
}

}  // namespace ioacct
