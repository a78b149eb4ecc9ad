#include "common/lazy_library.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace px {

namespace {

[[noreturn]] void cannot_load(const LibraryNeed& need, const std::string& why) {
  std::fprintf(stderr, "parallex: cannot load %s (%s): %s; install it (apt-get install %s) and try again\n",
               need.name, why.c_str(), need.needed_by, need.package);
  std::exit(4);
}

}  // namespace

LazyLibrary::LazyLibrary(const LibraryNeed& need)
    : need_(need), handle_(::dlopen(need.soname, RTLD_NOW | RTLD_LOCAL)) {
  if (!handle_) {
    const char* err = ::dlerror();
    cannot_load(need_, err ? err : need_.soname);
  }
}

void* LazyLibrary::symbol(const char* symbol) const {
  void* address = ::dlsym(handle_, symbol);
  if (!address) cannot_load(need_, std::string(need_.soname) + " has no " + symbol);
  return address;
}

}  // namespace px
