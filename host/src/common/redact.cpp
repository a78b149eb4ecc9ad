#include "common/redact.hpp"

#include <array>
#include <cstring>
#include <mutex>
#include <regex>
#include <vector>

namespace px {
namespace {

bool has(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

// gh[pousr]_ : the GitHub token prefixes.
bool has_github_prefix(std::string_view text) {
  if (has(text, "github_pat_")) return true;
  for (std::size_t at = text.find("gh"); at != std::string_view::npos && at + 3 < text.size();
       at = text.find("gh", at + 1))
    if (std::strchr("pousr", text[at + 2]) && text[at + 2] != '\0' && text[at + 3] == '_') return true;
  return false;
}

struct Shape {
  // A cheap test that the text could hold the shape: most text holds none, and
  // std::regex is slow to compile (each shape is compiled on first need) and to run.
  bool (*maybe)(std::string_view);
  const char* pattern;
  // regex_replace format: shapes with a kept prefix (a header name, a URL's
  // user) keep it through $1/$2 and replace only the secret part.
  const char* replacement;
};

constexpr std::array<Shape, 8> kShapes{{
    {[](std::string_view t) { return has(t, "PRIVATE KEY-----"); },
     "-----BEGIN [A-Z ]*PRIVATE KEY-----[\\s\\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)", "[REDACTED:private-key]"},
    {has_github_prefix, "\\b(gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255})",
     "[REDACTED:github-token]"},
    {[](std::string_view t) { return has(t, "sk-ant-"); }, "\\bsk-ant-[A-Za-z0-9_\\-]{16,}",
     "[REDACTED:anthropic-key]"},
    {[](std::string_view t) { return has(t, "sk-"); }, "\\bsk-(proj-|svcacct-|admin-)?[A-Za-z0-9_\\-]{20,}",
     "[REDACTED:openai-key]"},
    {[](std::string_view t) { return has(t, "AKIA") || has(t, "ASIA"); }, "\\b(AKIA|ASIA)[0-9A-Z]{16}\\b",
     "[REDACTED:aws-access-key]"},
    {[](std::string_view t) { return has(t, "aws_secret_access_key") || has(t, "AWS_SECRET_ACCESS_KEY"); },
     "(aws_secret_access_key|AWS_SECRET_ACCESS_KEY)([\"']?\\s*[:=]\\s*[\"']?)[A-Za-z0-9/+=]{40}",
     "$1$2[REDACTED:aws-secret-key]"},
    {[](std::string_view t) { return has(t, "uthorization:"); },
     "((Proxy-)?Authorization:\\s*(Bearer|Basic|token)\\s+)[A-Za-z0-9._~+/=\\-]{8,}", "$1[REDACTED:credential]"},
    {[](std::string_view t) { return has(t, "://") && has(t, "@"); }, "(://[^/\\s:@]+:)[^@\\s/]+(@)",
     "$1[REDACTED:url-password]$2"},
}};

const std::regex& compiled(std::size_t i) {
  static std::array<std::once_flag, kShapes.size()> once;
  static std::array<std::regex, kShapes.size()> regexes;
  std::call_once(once[i], [i] { regexes[i] = std::regex(kShapes[i].pattern, std::regex::ECMAScript); });
  return regexes[i];
}

std::mutex secrets_mutex;
std::vector<std::string>& literal_secrets() {
  static std::vector<std::string> secrets;
  return secrets;
}

void replace_all(std::string& text, const std::string& needle, const std::string& with) {
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + with.size()))
    text.replace(at, needle.size(), with);
}

}  // namespace

void register_secret(std::string_view secret) {
  if (secret.size() < 8) return;
  std::lock_guard lock(secrets_mutex);
  literal_secrets().emplace_back(secret);
}

std::string redact(std::string_view input) {
  std::string text(input);
  {
    std::lock_guard lock(secrets_mutex);
    for (const auto& secret : literal_secrets()) replace_all(text, secret, "[REDACTED:secret]");
  }
  for (std::size_t i = 0; i < kShapes.size(); ++i)
    if (kShapes[i].maybe(text)) text = std::regex_replace(text, compiled(i), kShapes[i].replacement);
  return text;
}

}  // namespace px
