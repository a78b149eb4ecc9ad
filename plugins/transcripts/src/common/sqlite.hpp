#pragma once
// SQLite, loaded the first time a parser reads a database (opencode keeps
// its sessions in one; no other harness does). The opencode plugin is loaded
// by every run, and linking SQLite made every run map and relocate it too
// (0.3 ms, docs/linux-seal.md) for what only transcript parsing needs. Code
// calls SQLite's functions through this namespace, with their own signatures
// (sq::sqlite3_open_v2(...)), once load() said yes. A function is added to
// PX_SQLITE_FUNCTIONS before it is used.
#include <sqlite3.h>

#include <string>

namespace parallex::transcripts::sq {

#define PX_SQLITE_FUNCTIONS(X) \
  X(sqlite3_busy_timeout)      \
  X(sqlite3_close)             \
  X(sqlite3_column_bytes)      \
  X(sqlite3_column_count)      \
  X(sqlite3_column_int64)      \
  X(sqlite3_column_name)       \
  X(sqlite3_column_text)       \
  X(sqlite3_column_type)       \
  X(sqlite3_errcode)           \
  X(sqlite3_errmsg)            \
  X(sqlite3_finalize)          \
  X(sqlite3_open_v2)           \
  X(sqlite3_prepare_v2)        \
  X(sqlite3_step)

struct Api {
#define PX_SQLITE_MEMBER(name) decltype(&::name) name = nullptr;
  PX_SQLITE_FUNCTIONS(PX_SQLITE_MEMBER)
#undef PX_SQLITE_MEMBER
};

// Loads the library once; false with why (not installed) when it cannot: the
// caller says so where it would have read a database, nothing else changes.
bool load(std::string& why);
// The loaded library: only after load() said true.
const Api& api();

#define PX_SQLITE_FORWARD(name)                            \
  template <class... A>                                    \
  inline auto name(A... args)->decltype(::name(args...)) { \
    return api().name(args...);                            \
  }
PX_SQLITE_FUNCTIONS(PX_SQLITE_FORWARD)
#undef PX_SQLITE_FORWARD

}  // namespace parallex::transcripts::sq
