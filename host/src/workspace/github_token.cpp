#include "workspace/github_token.hpp"

#include "common/read_file.hpp"
#include "common/redact.hpp"

namespace px::workspace {

policy::BrokeredCredential brokered_github_token(const std::filesystem::path& file) {
  policy::BrokeredCredential c;
  c.spec.name = "github";
  c.spec.source = broker::SecretSource::from_value({}, "the project's token (" + file.string() + ")");
  c.spec.hosts = {"github.com", "api.github.com", "uploads.github.com"};
  c.spec.env = {"GH_TOKEN"};
  c.spec.shape = "github-token";
  c.masked_files = {file};
  c.reason = "the project's scoped GitHub token: gh and git push over HTTPS use the placeholder";
  c.origin = policy::Origin{policy::Origin::Kind::project, file.string(), 0};
  return c;
}

namespace {

bool all_of(std::string_view s, bool underscore) {
  for (char c : s) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && !(underscore && c == '_')) return false;
  }
  return true;
}

}  // namespace

std::string check_github_token(std::string_view t) {
  if (t.empty()) return "it is empty";
  // Fine-grained: github_pat_<22>_<59>; classic: ghp_<36>. Lengths are
  // checked loosely (GitHub may lengthen them), characters strictly.
  if (t.rfind("github_pat_", 0) == 0) {
    const auto rest = t.substr(11);
    if (rest.size() < 30 || rest.size() > 255 || !all_of(rest, true))
      return "it starts with github_pat_ but the rest is not a token (letters, digits and _ only)";
    return {};
  }
  if (t.rfind("ghp_", 0) == 0) {
    const auto rest = t.substr(4);
    if (rest.size() < 30 || rest.size() > 255 || !all_of(rest, false))
      return "it starts with ghp_ but the rest is not a token (letters and digits only)";
    return {};
  }
  if (t.find_first_of(" \t\r\n") != std::string_view::npos) return "it holds more than one word or line";
  return "it does not start with github_pat_ (a fine-grained token) or ghp_ (a classic token)";
}

Result<std::optional<std::string>> load_github_token(const std::filesystem::path& file) {
  auto text = read_regular_file(file, {.max_bytes = 64 * 1024});
  if (!text && text.error().kind == ErrorKind::not_found) return std::optional<std::string>{};
  if (!text)
    return Error{text.error().kind, "The GitHub token file " + text.error().message +
                                        ": put the token in a file there, or remove it to work without push "
                                        "and PR access."};
  std::string token = std::move(text).value();
  const auto first = token.find_first_not_of(" \t\r\n");
  const auto last = token.find_last_not_of(" \t\r\n");
  token = first == std::string::npos ? std::string() : token.substr(first, last - first + 1);
  if (auto problem = check_github_token(token); !problem.empty())
    return Error::invalid(
        "The GitHub token file " + file.string() + " is not usable: " + problem +
        ". Put a fine-grained personal access token (github_pat_...) scoped to this repository "
        "in it, alone on one line, or remove the file to work without push and PR access.");
  register_secret(token);
  return std::optional<std::string>(std::move(token));
}

}  // namespace px::workspace
