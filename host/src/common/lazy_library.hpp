#pragma once
// A shared library loaded on first use instead of linked: the commands that
// never call it do not pay for its loading and relocation at start. Used by
// openssl.cpp and git2.cpp, each of which looks up its own list of functions.
//
// The library is opened with RTLD_LOCAL, so its symbols stay out of the global
// scope (where plugins' own copies of a library would bind to them). When the
// library or one of its functions is missing, the process cannot do what the
// user asked: it says which library, what needs it and which Debian package to
// install, and exits 4 (a missing dependency, as for every command).
namespace px {

struct LibraryNeed {
  const char* soname;     // "libssl.so.3"
  const char* name;       // "OpenSSL", as a user knows it
  const char* needed_by;  // "TLS, signing keys and snapshots need it"
  const char* package;    // "libssl3"
};

// Never closed: what `symbol` returns stays valid for the life of the process.
class LazyLibrary {
 public:
  explicit LazyLibrary(const LibraryNeed& need);
  // The address of `symbol` in the library; exits as above when it has none.
  void* symbol(const char* symbol) const;

 private:
  LibraryNeed need_;
  void* handle_ = nullptr;
};

}  // namespace px
