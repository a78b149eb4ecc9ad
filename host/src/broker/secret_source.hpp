#pragma once
// Where a brokered secret comes from, and the checks it passes before a run
// may start: a file, a command the user names (`pass show github/agent`, a
// keychain lookup), a variable of the supervisor's environment, or a value
// the caller already holds (the agent's token store). Every failure is an
// error naming the credential and the source, never the secret: the run does
// not start (fail closed).
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace px::broker {

struct SecretSource {
  enum class Kind { file, command, env, value };
  Kind kind = Kind::value;
  std::filesystem::path file;        // file: one token, mode 0600 (not readable by group or others)
  std::vector<std::string> command;  // command: argv, no shell; the first line of its stdout
  std::string env;                   // env: a variable of the supervisor's environment
  std::string value;                 // value: held by the caller (the agent's store)
  std::string holder;                // value: who holds it, for messages ("the agent's store")

  static SecretSource from_file(std::filesystem::path p);
  static SecretSource from_command(std::vector<std::string> argv);
  static SecretSource from_env(std::string name);
  static SecretSource from_value(std::string v, std::string holder = "the agent's store");
  // "file ~/.x", "command `pass show x`", "variable GITHUB_TOKEN", or the holder of a value.
  std::string describe() const;
};

struct SecretLimits {
  std::chrono::milliseconds command_timeout{10'000};
  std::size_t max_bytes = 16 * 1024;
};

// Reads the secret. `name` is the credential's, for messages.
Result<std::string> read_secret(std::string_view name, const SecretSource& source,
                                const SecretLimits& limits = {});

// The checks every secret passes: one printable token (no whitespace, no
// control bytes), the declared shape if any ("github-token", "anthropic-key",
// "openai-key"), not past `expires`, and, for a JSON Web Token, not past its
// own `exp` claim.
Status check_secret(std::string_view name, std::string_view secret, std::string_view expected_shape,
                    std::optional<std::chrono::system_clock::time_point> expires,
                    std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

// The `exp` claim of a JSON Web Token (three base64url parts), if it is one.
std::optional<std::int64_t> jwt_expiry(std::string_view token);

}  // namespace px::broker
