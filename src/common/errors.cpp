#include "common/errors.hpp"

#include <cstring>
#include <string>

namespace ioacct {

std::string errno_name(int err) {
  if (err < 0) err = -err;
  // strerrordesc_np/strerrorname_np are glibc >= 2.32 (Debian 12 has 2.36).
  const char* name = strerrorname_np(err);
  if (name) return name;
  return "errno " + std::to_string(err);
}

std::string errno_text(int err) {
  if (err < 0) err = -err;
  const char* desc = strerrordesc_np(err);
  return std::string(desc ? desc : "unknown error") + " (" + errno_name(err) + ")";
}

}  // namespace ioacct
