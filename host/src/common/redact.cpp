#include "common/redact.hpp"

#include <mutex>
#include <regex>
#include <vector>

namespace px {
namespace {

struct Shape {
  std::regex pattern;
  // regex_replace format: shapes with a kept prefix (a header name, a URL's
  // user) keep it through $1/$2 and replace only the secret part.
  std::string replacement;
};

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> all = [] {
    auto re = [](const char* p) { return std::regex(p, std::regex::ECMAScript | std::regex::optimize); };
    return std::vector<Shape>{
        {re("-----BEGIN [A-Z ]*PRIVATE KEY-----[\\s\\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)"),
         "[REDACTED:private-key]"},
        {re("\\b(gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255})"), "[REDACTED:github-token]"},
        {re("\\bsk-ant-[A-Za-z0-9_\\-]{16,}"), "[REDACTED:anthropic-key]"},
        {re("\\bsk-(proj-|svcacct-|admin-)?[A-Za-z0-9_\\-]{20,}"), "[REDACTED:openai-key]"},
        {re("\\b(AKIA|ASIA)[0-9A-Z]{16}\\b"), "[REDACTED:aws-access-key]"},
        {re("(aws_secret_access_key|AWS_SECRET_ACCESS_KEY)([\"']?\\s*[:=]\\s*[\"']?)[A-Za-z0-9/+=]{40}"),
         "$1$2[REDACTED:aws-secret-key]"},
        {re("((Proxy-)?Authorization:\\s*(Bearer|Basic|token)\\s+)[A-Za-z0-9._~+/=\\-]{8,}"),
         "$1[REDACTED:credential]"},
        {re("(://[^/\\s:@]+:)[^@\\s/]+(@)"), "$1[REDACTED:url-password]$2"},
    };
  }();
  return all;
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
  for (const auto& shape : shapes()) text = std::regex_replace(text, shape.pattern, shape.replacement);
  return text;
}

}  // namespace px
