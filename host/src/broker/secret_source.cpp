#include "broker/secret_source.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "broker/placeholder.hpp"
#include "common/base64.hpp"
#include "common/clock.hpp"
#include "common/json_io.hpp"
#include "common/redact.hpp"
#include "common/spawn.hpp"
#include "common/unique_fd.hpp"

namespace px::broker {
namespace {

std::string credential(std::string_view name) {
  return "credential \"" + std::string(name) + "\"";
}

// A word that could be an opaque secret: long, of the characters tokens are
// made of, with both letters and digits (an error message's words are not).
bool looks_like_a_secret(std::string_view word) {
  if (word.size() < 16) return false;
  bool letter = false, digit = false;
  for (const char c : word) {
    if (std::isalpha(static_cast<unsigned char>(c)))
      letter = true;
    else if (std::isdigit(static_cast<unsigned char>(c)))
      digit = true;
    else if (std::string_view("-_+/=.~").find(c) == std::string_view::npos)
      return false;
  }
  return letter && digit;
}

// stderr of a failed secret command goes into an error message: one line,
// printable, short, redacted (a failing helper may still print the token,
// in a known shape or as an opaque word).
std::string tidy(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  text = redact(text);
  std::string masked;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find(' ', at), text.size());
    const std::string_view word(text.data() + at, end - at);
    masked += looks_like_a_secret(word) ? std::string("[REDACTED]") : std::string(word);
    if (end < text.size()) masked += ' ';
    at = end + 1;
  }
  OPENSSL_cleanse(text.data(), text.size());
  text = std::move(masked);
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (text.size() > 200) text = text.substr(0, 200) + "...";
  return text;
}

// The token is the first line; a trailing CR LF or LF is not part of it.
std::string first_line(std::string text) {
  const std::size_t nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

Result<std::string> read_file_secret(std::string_view name, const std::filesystem::path& path,
                                     std::size_t max) {
  const std::string where = credential(name) + ": the secret file " + path.string();
  // O_NONBLOCK: a FIFO with no writer must not hang the run (fstat refuses it).
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) return Error::io(where + " cannot be opened; check the path in the credential's source", errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error::io(where, errno);
  if (!S_ISREG(st.st_mode)) return Error::invalid(where + " is not a regular file.");
  if ((st.st_mode & 077) != 0) {
    return Error::invalid(where + " is readable by other users (mode " +
                          std::to_string((st.st_mode >> 6) & 7) + std::to_string((st.st_mode >> 3) & 7) +
                          std::to_string(st.st_mode & 7) + "): run chmod 600 on it.");
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::io(where, errno);
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max) {
      OPENSSL_cleanse(text.data(), text.size());
      return Error::invalid(where + " is larger than " + std::to_string(max) +
                            " bytes: it should hold one token.");
    }
  }
  // A token file holds one line; a second non-empty line means the file is
  // something else (a config file, several tokens) and the first line is a guess.
  std::string line = first_line(text);
  const std::string rest = text.substr(std::min(text.size(), line.size() + 1));
  const bool more = std::any_of(rest.begin(), rest.end(), [](char c) { return c != '\r' && c != '\n'; });
  OPENSSL_cleanse(text.data(), text.size());
  if (more) {
    OPENSSL_cleanse(line.data(), line.size());
    return Error::invalid(where + " holds more than one line; it should hold the token alone.");
  }
  return line;
}

Result<std::string> run_secret_command(std::string_view name, const std::vector<std::string>& argv,
                                       const SecretLimits& limits) {
  if (argv.empty() || argv[0].empty())
    return Error::invalid(credential(name) + ": the secret command is empty.");
  const std::string what = credential(name) + ": the secret command `" + tidy(argv[0]) + "`";
  // Its own process group, so a timeout kills what it started too (gpg-agent
  // helpers excepted: those detach on purpose).
  auto ran = spawn_capture({.argv = argv, .own_process_group = true},
                           {.timeout = limits.command_timeout, .max_bytes = limits.max_bytes});
  if (!ran)
    return Error{ErrorKind::io, what + " could not be started; check that it is installed and on PATH (" +
                                    ran.error().message + ")"};
  Captured& got = ran.value();
  std::string line = first_line(got.out);
  OPENSSL_cleanse(got.out.data(), got.out.size());
  const auto fail = [&](std::string message) -> Result<std::string> {
    OPENSSL_cleanse(line.data(), line.size());
    return Error::invalid(std::move(message));
  };
  if (got.timed_out) {
    return fail(what + " did not finish within " + std::to_string(limits.command_timeout.count() / 1000) +
                " s (does it wait for a passphrase or a touch?); the run is not started.");
  }
  if (got.too_big) return fail(what + " printed more than " + std::to_string(limits.max_bytes) + " bytes.");
  if (got.exit_status != 0) {
    const std::string code = got.exit_status > 128 ? "signal " + std::to_string(got.exit_status - 128)
                                                   : "exit status " + std::to_string(got.exit_status);
    // What it printed on stdout may be the secret (a helper that prints it,
    // then fails): taken out of stderr before stderr is quoted, whatever its
    // shape (the redactor knows the shapes of tokens, not an opaque secret).
    if (line.size() >= 8)
      for (std::size_t at = got.err.find(line); at != std::string::npos; at = got.err.find(line, at))
        got.err.replace(at, line.size(), "[REDACTED]");
    const std::string said = tidy(got.err);
    OPENSSL_cleanse(got.err.data(), got.err.size());
    return fail(what + " failed (" + code + ")" + (said.empty() ? std::string() : ": " + said) +
                "; the run is not started.");
  }
  if (line.empty()) return fail(what + " printed nothing on its first line; the run is not started.");
  return line;
}

}  // namespace

SecretSource SecretSource::from_file(std::filesystem::path p) {
  SecretSource s;
  s.kind = Kind::file;
  s.file = std::move(p);
  return s;
}
SecretSource SecretSource::from_command(std::vector<std::string> argv) {
  SecretSource s;
  s.kind = Kind::command;
  s.command = std::move(argv);
  return s;
}
SecretSource SecretSource::from_env(std::string name) {
  SecretSource s;
  s.kind = Kind::env;
  s.env = std::move(name);
  return s;
}
SecretSource SecretSource::from_value(std::string v, std::string holder) {
  SecretSource s;
  s.kind = Kind::value;
  s.value = std::move(v);
  s.holder = std::move(holder);
  return s;
}

std::string SecretSource::describe() const {
  switch (kind) {
    case Kind::file:
      return "file " + file.string();
    case Kind::command: {
      std::string c;
      for (const auto& a : command) c += (c.empty() ? "" : " ") + a;
      return "command `" + tidy(c) + "`";
    }
    case Kind::env:
      return "variable " + env;
    case Kind::value:
      return holder.empty() ? std::string("the agent's store") : holder;
  }
  return {};
}

Result<std::string> read_secret(std::string_view name, const SecretSource& source,
                                const SecretLimits& limits) {
  switch (source.kind) {
    case SecretSource::Kind::file:
      return read_file_secret(name, source.file, limits.max_bytes);
    case SecretSource::Kind::command:
      return run_secret_command(name, source.command, limits);
    case SecretSource::Kind::env: {
      const char* v = std::getenv(source.env.c_str());
      if (v == nullptr || *v == '\0') {
        return Error::invalid(credential(name) + ": the variable " + source.env +
                              " is not set in parallex's environment; set it or name another source.");
      }
      return std::string(v);
    }
    case SecretSource::Kind::value:
      if (source.value.empty())
        return Error::invalid(credential(name) + ": " + source.describe() + " holds no secret.");
      return source.value;
  }
  return Error::internal("unknown secret source");
}

std::optional<std::int64_t> jwt_expiry(std::string_view token) {
  const std::size_t d1 = token.find('.');
  if (d1 == std::string_view::npos) return std::nullopt;
  const std::size_t d2 = token.find('.', d1 + 1);
  if (d2 == std::string_view::npos || token.find('.', d2 + 1) != std::string_view::npos) return std::nullopt;
  const std::string_view part = token.substr(d1 + 1, d2 - d1 - 1);
  if (part.size() > 8192) return std::nullopt;
  const auto payload = base64url_decode(part);
  if (!payload) return std::nullopt;
  const auto j = parse_json_input(*payload);
  if (!j.is_object() || !j.contains("exp") || !j["exp"].is_number()) return std::nullopt;
  // As a double first: a hostile claim (1e300) must not overflow the cast.
  const double exp = std::clamp(j["exp"].get<double>(), 0.0, 1e13);
  return static_cast<std::int64_t>(exp);
}

Status check_secret(std::string_view name, std::string_view secret, std::string_view expected_shape,
                    std::optional<std::chrono::system_clock::time_point> expires,
                    std::chrono::system_clock::time_point now) {
  const std::string who = credential(name);
  if (secret.empty()) return Error::invalid(who + ": the secret is empty.");
  for (const char c : secret) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) {
      return Error::invalid(
          who + ": the secret holds whitespace, control or non-ASCII bytes; a token is one word.");
    }
  }
  if (!expected_shape.empty() && expected_shape != "any" && shape_of(secret) != expected_shape) {
    return Error::invalid(who + ": the secret is not shaped like a " + std::string(expected_shape) +
                          " (it looks " + std::string(shape_of(secret)) + ", " +
                          std::to_string(secret.size()) +
                          " characters); check that the source holds the right token.");
  }
  const auto to_ms = [](std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  };
  if (expires && *expires <= now) {
    return Error::invalid(who + ": the secret expired at " + iso_utc_ms(to_ms(*expires)) +
                          "; renew it and update its source.");
  }
  if (const auto exp = jwt_expiry(secret); exp && *exp * 1000 <= to_ms(now)) {
    return Error::invalid(who + ": the token expired at " + iso_utc_ms(*exp * 1000) +
                          " (its exp claim); sign in again to renew it.");
  }
  return ok();
}

}  // namespace px::broker
