#include "common/sqlite.hpp"

#include <dlfcn.h>

#include <mutex>

namespace parallex::transcripts::sq {

namespace {

// SQLite's soname has been libsqlite3.so.0 since version 3.0 (Debian: libsqlite3-0).
constexpr const char* kSoname = "libsqlite3.so.0";

struct Loaded {
  Api api;
  std::string why;  // empty when loaded
};

Loaded open_library() {
  Loaded out;
  // RTLD_LOCAL: its symbols stay out of the host's and the other plugins' way.
  void* lib = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = ::dlerror();
    out.why =
        std::string("SQLite is not installed (") + (err ? err : kSoname) + "; apt-get install libsqlite3-0)";
    return out;
  }
#define PX_SQLITE_LOOKUP(name)                                                  \
  out.api.name = reinterpret_cast<decltype(out.api.name)>(::dlsym(lib, #name)); \
  if (!out.api.name) out.why = std::string(kSoname) + " has no " #name;
  PX_SQLITE_FUNCTIONS(PX_SQLITE_LOOKUP)
#undef PX_SQLITE_LOOKUP
  return out;
}

const Loaded& loaded() {
  static const Loaded library = open_library();
  return library;
}

}  // namespace

bool load(std::string& why) {
  why = loaded().why;
  return why.empty();
}

const Api& api() {
  return loaded().api;
}

}  // namespace parallex::transcripts::sq
