#include "broker/placeholder.hpp"

#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace px::broker {
namespace {

// Longest first: the first that matches is kept.
constexpr std::array<std::string_view, 15> kPrefixes = {"github_pat_",
                                                        "sk-ant-admin01-",
                                                        "sk-ant-api03-",
                                                        "sk-ant-oat01-",
                                                        "sk-ant-ort01-",
                                                        "sk-svcacct-",
                                                        "sk-admin-",
                                                        "sk-proj-",
                                                        "sk-ant-",
                                                        "ghp_",
                                                        "gho_",
                                                        "ghu_",
                                                        "ghs_",
                                                        "ghr_",
                                                        "sk-"};

constexpr std::string_view kDigits = "0123456789";
constexpr std::string_view kLowerHex = "0123456789abcdef";
constexpr std::string_view kUpperHex = "0123456789ABCDEF";
constexpr std::string_view kBase62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
constexpr std::string_view kBase64 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/";

bool is_separator(char c) {
  return c == '-' || c == '_' || c == '.' || c == '=';
}

// The smallest alphabet that holds every non-separator character, so the
// placeholder tells nothing about the secret beyond its format.
std::string_view alphabet_for(std::string_view body) {
  const auto all_in = [&](std::string_view set) {
    return std::all_of(body.begin(), body.end(),
                       [&](char c) { return is_separator(c) || set.find(c) != std::string_view::npos; });
  };
  for (const auto set : {kDigits, kLowerHex, kUpperHex, kBase62, kBase64}) {
    if (all_in(set)) return set;
  }
  return {};
}

// A uniform index below n (rejection sampling: no modulo bias).
Result<std::size_t> random_below(std::size_t n) {
  const unsigned limit = 256 - (256 % static_cast<unsigned>(n));
  for (;;) {
    unsigned char b = 0;
    if (RAND_bytes(&b, 1) != 1) return Error::internal("the system's random generator failed (RAND_bytes)");
    if (b < limit) return static_cast<std::size_t>(b % n);
  }
}

// A JSON Web Token (header.payload.signature, base64url, a header naming an
// algorithm): only its signature makes it a credential. Its claims are kept
// (clients such as Codex read the account and plan from them, and they are
// not secret: anyone holding the token can decode them); the signature is
// drawn at random, so the placeholder is a well-formed token no server accepts.
std::size_t jwt_signature_start(std::string_view token) {
  const std::size_t d1 = token.find('.');
  if (d1 == std::string_view::npos || token.substr(0, 3) != "eyJ") return 0;
  const std::size_t d2 = token.find('.', d1 + 1);
  if (d2 == std::string_view::npos || token.find('.', d2 + 1) != std::string_view::npos) return 0;
  const auto b64url = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  };
  if (!std::all_of(token.begin(), token.end(), [&](char c) { return c == '.' || b64url(c); })) return 0;
  return d2 + 1;
}

}  // namespace

std::string_view known_prefix(std::string_view secret) {
  for (const auto p : kPrefixes) {
    if (secret.substr(0, p.size()) == p) return p;
  }
  return {};
}

std::string_view shape_of(std::string_view secret) {
  const std::string_view p = known_prefix(secret);
  if (p.empty()) return jwt_signature_start(secret) > 0 ? "jwt" : "opaque";
  if (p.substr(0, 2) == "gh" || p == "github_pat_") return "github-token";
  if (p.substr(0, 7) == "sk-ant-") return "anthropic-key";
  return "openai-key";
}

Result<std::string> make_placeholder(std::string_view name, std::string_view secret,
                                     const std::vector<std::string>& avoid) {
  if (const std::size_t sig = jwt_signature_start(secret); sig > 0) {
    const std::string_view signature = secret.substr(sig);
    if (signature.size() < 22) {
      return Error::invalid("the token of credential \"" + std::string(name) +
                            "\" has a signature too short to broker (an unsigned or test token?)");
    }
    for (int attempt = 0; attempt < 8; ++attempt) {
      std::string out(secret.substr(0, sig));
      static constexpr std::string_view kBase64Url =
          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
      for (std::size_t i = 0; i < signature.size(); ++i) {
        PX_TRY_ASSIGN(const std::size_t k, random_below(kBase64Url.size()));
        out += kBase64Url[k];
      }
      if (out != secret && std::find(avoid.begin(), avoid.end(), out) == avoid.end()) return out;
    }
    return Error::internal("could not draw a placeholder different from the token of \"" + std::string(name) +
                           "\"");
  }
  const std::string_view prefix = known_prefix(secret);
  const std::string_view body = secret.substr(prefix.size());
  const std::string_view alphabet = alphabet_for(body);
  if (alphabet.empty()) {
    return Error::invalid("the secret of credential \"" + std::string(name) +
                          "\" holds characters no token has (spaces, quotes, control or non-ASCII bytes): "
                          "is the source one token on one line?");
  }
  const auto randomized =
      static_cast<double>(std::count_if(body.begin(), body.end(), [](char c) { return !is_separator(c); }));
  const double bits = randomized * std::log2(static_cast<double>(alphabet.size()));
  if (bits < 80.0) {
    return Error::invalid(
        "the secret of credential \"" + std::string(name) + "\" is too short to broker (" +
        std::to_string(static_cast<int>(bits)) +
        " random bits after its prefix, 80 needed): a placeholder that short could be guessed");
  }
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string out(prefix);
    for (const char c : body) {
      if (is_separator(c)) {
        out += c;
        continue;
      }
      PX_TRY_ASSIGN(const std::size_t i, random_below(alphabet.size()));
      out += alphabet[i];
    }
    if (out != secret && std::find(avoid.begin(), avoid.end(), out) == avoid.end()) return out;
  }
  return Error::internal("could not draw a placeholder different from the secret of \"" + std::string(name) +
                         "\"");
}

}  // namespace px::broker
