#include "common/git2.hpp"

#include "common/lazy_library.hpp"

namespace px::git2 {

namespace {

Api load() {
  const LazyLibrary lib(
      {PX_LIBGIT2_SONAME, "libgit2", "reading git repositories needs it", PX_LIBGIT2_PACKAGE});
  Api api;
#define PX_GIT2_LOOKUP(name) api.name = reinterpret_cast<decltype(api.name)>(lib.symbol(#name));
  PX_GIT2_FUNCTIONS(PX_GIT2_LOOKUP)
#undef PX_GIT2_LOOKUP
  // Initialised as it is loaded, here only: every other call needs it (one
  // before it crashes), so no caller can forget it. Never shut down: other
  // parts of the process may still hold libgit2 objects at exit.
  api.git_libgit2_init();
  return api;
}

}  // namespace

const Api& api() {
  static const Api loaded = load();
  return loaded;
}

}  // namespace px::git2
