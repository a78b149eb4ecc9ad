#pragma once
// The project's error type and Result<T>. Library exceptions (yaml-cpp, CLI11,
// Asio, plugin calls) are caught at the edges and become an Error there, so the
// rest of the code passes errors as values.
// basic_result, not result: result.hpp brings Boost.System's error codes
// (60,000 lines every file including this one compiled) for a default this
// project never uses.
#include <boost/outcome/basic_result.hpp>
#include <boost/outcome/policy/terminate.hpp>
#include <boost/outcome/success_failure.hpp>

#include <string>
#include <string_view>
#include <system_error>

namespace px {

enum class ErrorKind {
  invalid_input,   // the user gave something we cannot use (flag, file, name)
  not_found,       // a named thing does not exist
  io,              // the operating system refused an operation
  plugin,          // a plugin misbehaved or failed
  policy,          // a policy rule was refused (e.g. a plugin widening the seal)
  unsupported,     // the kernel or platform lacks a needed feature
  conflict,        // exists already, busy, running
  internal,        // a bug of ours
};

struct Error {
  ErrorKind kind = ErrorKind::internal;
  // A full sentence for the user: names the input and says what to do.
  std::string message;

  static Error invalid(std::string m) { return {ErrorKind::invalid_input, std::move(m)}; }
  static Error not_found(std::string m) { return {ErrorKind::not_found, std::move(m)}; }
  static Error plugin(std::string m) { return {ErrorKind::plugin, std::move(m)}; }
  static Error policy(std::string m) { return {ErrorKind::policy, std::move(m)}; }
  static Error unsupported(std::string m) { return {ErrorKind::unsupported, std::move(m)}; }
  static Error conflict(std::string m) { return {ErrorKind::conflict, std::move(m)}; }
  static Error internal(std::string m) { return {ErrorKind::internal, std::move(m)}; }
  // "<what>: <strerror(err)>", e.g. io("open /etc/x", errno).
  static Error io(const std::string& what, int err);
};

const char* to_string(ErrorKind kind);
// The kind whose to_string is `text`; anything else reads as internal.
ErrorKind error_kind_from_string(std::string_view text);

template <class T>
using Result = boost::outcome_v2::basic_result<T, Error, boost::outcome_v2::policy::terminate>;
using Status = Result<void>;

inline Status ok() { return boost::outcome_v2::success(); }

}  // namespace px

// PX_TRY(expr): return the error of a Status/Result early.
// PX_TRY_ASSIGN(auto x, expr): the same, binding the value on success.
// (Our own macros: Boost.Outcome's TRY changed syntax between Boost versions.)
#define PX_TRY_CAT2(a, b) a##b
#define PX_TRY_CAT(a, b) PX_TRY_CAT2(a, b)
#define PX_TRY(expr)                                          \
  do {                                                        \
    if (auto px_try_result = (expr); !px_try_result)          \
      return std::move(px_try_result).error();                \
  } while (0)
#define PX_TRY_ASSIGN(decl, expr)                                              \
  auto PX_TRY_CAT(px_try_, __LINE__) = (expr);                                 \
  if (!PX_TRY_CAT(px_try_, __LINE__)) return std::move(PX_TRY_CAT(px_try_, __LINE__)).error(); \
  decl = std::move(PX_TRY_CAT(px_try_, __LINE__)).value()
