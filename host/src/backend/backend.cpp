#include "backend/backend.hpp"

namespace px::backend {

Backend& sealing_backend() {
  return linux_backend();
}

}  // namespace px::backend
