#include "common/error.hpp"

#include <cstring>

namespace px {

Error Error::io(const std::string& what, int err) {
  return {ErrorKind::io, what + ": " + std::strerror(err)};
}

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_input: return "invalid input";
    case ErrorKind::not_found: return "not found";
    case ErrorKind::io: return "I/O error";
    case ErrorKind::plugin: return "plugin error";
    case ErrorKind::policy: return "policy error";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::conflict: return "conflict";
    case ErrorKind::internal: return "internal error";
  }
  return "error";
}

ErrorKind error_kind_from_string(std::string_view text) {
  for (ErrorKind k : {ErrorKind::invalid_input, ErrorKind::not_found, ErrorKind::io, ErrorKind::plugin,
                      ErrorKind::policy, ErrorKind::unsupported, ErrorKind::conflict, ErrorKind::internal})
    if (text == to_string(k)) return k;
  return ErrorKind::internal;
}

}  // namespace px
