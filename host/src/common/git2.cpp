#include "common/git2.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace px::git2 {

namespace {

[[noreturn]] void cannot_load(const std::string& why) {
  std::fprintf(stderr,
               "parallex: cannot load libgit2 (%s), which reading git repositories needs; install it "
               "(apt-get install %s) and try again\n",
               why.c_str(), PX_LIBGIT2_PACKAGE);
  std::exit(4);
}

Api load() {
  // RTLD_LOCAL: its symbols stay out of the way of plugins'.
  void* lib = ::dlopen(PX_LIBGIT2_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = ::dlerror();
    cannot_load(err ? err : PX_LIBGIT2_SONAME);
  }
  Api api;
#define PX_GIT2_LOOKUP(name)                                            \
  api.name = reinterpret_cast<decltype(api.name)>(::dlsym(lib, #name)); \
  if (!api.name) cannot_load(std::string(PX_LIBGIT2_SONAME) + " has no " #name);
  PX_GIT2_FUNCTIONS(PX_GIT2_LOOKUP)
#undef PX_GIT2_LOOKUP
  return api;
}

}  // namespace

const Api& api() {
  static const Api loaded = load();
  return loaded;
}

}  // namespace px::git2
