// node_exporter's web config file (export --web.config.file): any bytes
// either parse into a configuration that keeps its promises or are refused
// with one UsageError; nothing else escapes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/errors.hpp"
#include "monitor/web_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // a web config is a few lines; yaml-cpp's own nesting limit is not ours to fuzz
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ioacct::WebConfig c = ioacct::parse_web_config(text, "web.yml", "/etc/ioacct");
    for (const auto& [user, hash] : c.users)
      if (user.empty() || !ioacct::is_bcrypt_hash(hash)) std::abort();
    if (c.tls) {
      if (c.tls->cert.path.empty() == c.tls->cert.text.empty() && c.tls->cert.path.empty()) std::abort();
      if (c.tls->min_version < 10 || c.tls->max_version > 13 || c.tls->min_version > c.tls->max_version) std::abort();
    }
  } catch (const ioacct::UsageError& e) {
    if (std::string_view(e.what()).rfind("--web.config.file: web.yml: ", 0) != 0) std::abort();
  }
  return 0;
}
