#include "common/secure_wipe.hpp"

#include <string.h>

namespace px {

void secure_wipe(void* data, std::size_t size) {
  if (data != nullptr && size > 0) ::explicit_bzero(data, size);
}

void secure_wipe(std::string& text) {
  secure_wipe(text.data(), text.size());
}

}  // namespace px
