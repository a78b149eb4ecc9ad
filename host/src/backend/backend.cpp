#include "backend/backend.hpp"

#include <cstdlib>
#include <sstream>

namespace px::backend {

Backend& sealing_backend() {
  return linux_backend();
}

bool process_limit_hidden_for_tests(std::string_view id) {
  const char* hidden = std::getenv("PARALLEX_TEST_PROCESS_LIMIT_WITHOUT");
  if (!hidden || !*hidden) return false;
  std::stringstream list(hidden);
  std::string item;
  while (std::getline(list, item, ','))
    if (item == id) return true;
  return false;
}

}  // namespace px::backend
