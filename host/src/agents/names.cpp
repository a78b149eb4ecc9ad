#include "agents/names.hpp"

namespace px::agents {

namespace {

bool lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

}  // namespace

Status check_name(std::string_view name) {
  const std::string shown(name);
  if (name.empty())
    return Error::invalid("An agent needs a name, e.g. `parallex agent new reviewer --email ...`.");
  if (name.size() > max_name_length)
    return Error::invalid("The agent name '" + shown +
                          "' is longer than 64 characters; choose a shorter one.");
  if (!lower_alnum(name[0]))
    return Error::invalid("The agent name '" + shown +
                          "' must start with a lowercase letter or a digit (a-z, 0-9).");
  for (char c : name) {
    if (!lower_alnum(c) && c != '-' && c != '_' && c != '.')
      return Error::invalid("The agent name '" + shown +
                            "' may hold only lowercase letters, digits, '-', '_' and '.' (no '/', spaces or "
                            "capitals).");
  }
  return ok();
}

Status check_email(std::string_view email) {
  const std::string shown(email);
  auto bad = [&](const std::string& why) {
    return Error::invalid(
        "The email '" + shown + "' is not usable for the agent's commits: " + why +
        ". Give the address GitHub has verified for the account, e.g. reviewer@example.com.");
  };
  if (email.empty()) return bad("it is empty");
  if (email.size() > 254) return bad("it is longer than 254 characters");
  for (unsigned char c : email) {
    if (c <= 0x20 || c == 0x7f) return bad("it holds a space or a control character");
    if (c == '<' || c == '>' || c == '"' || c == '\\' || c == ',') return bad("it holds one of < > \" \\ ,");
  }
  const auto at = email.find('@');
  if (at == std::string_view::npos || at == 0 || email.find('@', at + 1) != std::string_view::npos)
    return bad("it needs exactly one '@' with a name before it");
  const auto domain = email.substr(at + 1);
  const auto dot = domain.rfind('.');
  if (domain.empty() || dot == std::string_view::npos || dot == 0 || dot + 1 == domain.size() ||
      domain.find("..") != std::string_view::npos)
    return bad("its domain needs a dot, like example.com");
  return ok();
}

Status check_repo(std::string_view repo) {
  const std::string shown(repo);
  const auto slash = repo.find('/');
  auto ok_part = [](std::string_view part) {
    if (part.empty() || part.size() > 100 || part == "." || part == "..") return false;
    for (char c : part)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
            c == '_' || c == '.'))
        return false;
    return true;
  };
  if (slash == std::string_view::npos || !ok_part(repo.substr(0, slash)) || !ok_part(repo.substr(slash + 1)))
    return Error::invalid("--repo " + shown + ": give a GitHub repository as OWNER/REPO, e.g. acme/api.");
  return ok();
}

}  // namespace px::agents
