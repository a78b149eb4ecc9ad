#include "common/libgit2.hpp"

#include <git2.h>

namespace px {

void libgit2_init() {
  // A function-local static: initialised exactly once, thread-safe.
  static const int initialised = git_libgit2_init();
  (void)initialised;
}

}  // namespace px
