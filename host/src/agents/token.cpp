#include "agents/token.hpp"

#include <termios.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <iostream>

#include "agents/credential.hpp"
#include "common/host_rule.hpp"
#include "common/redact.hpp"

namespace px::agents {

namespace {

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::string url_encode(std::string_view s) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

Status write_hosts(const fs::path& gh_dir, const std::string& name, std::string_view token) {
  // gh migrates an old-style config by rewriting it; in a run gh/ is read-only,
  // so both files are written in the migrated form from the start.
  if (!fs::exists(gh_dir / "config.yml"))
    PX_TRY(write_file_atomic(gh_dir / "config.yml", "version: \"1\"\ngit_protocol: https\n", 0600));
  const std::string user = name + "-agent";
  std::string text;
  text += "github.com:\n";
  text += "    users:\n";
  text += "        " + user + ":\n";
  text += "            oauth_token: " + std::string(token) + "\n";
  text += "    git_protocol: https\n";
  text += "    oauth_token: " + std::string(token) + "\n";
  text += "    user: " + user + "\n";
  return write_file_atomic(gh_dir / "hosts.yml", text, 0600);
}

}  // namespace

std::vector<std::string> github_token_hosts(const AgentConfig& config) {
  std::vector<std::string> hosts = github_own_hosts();
  for (const auto& c : config.broker.credentials) {
    if (c.spec.name != "github" || c.off || (c.amends && !c.given.count("hosts"))) continue;
    hosts.clear();
    // A name that is not one is left out here; the run's policy refuses it, naming its line.
    for (const auto& h : c.spec.hosts)
      if (auto name = parse_exact_host(h)) hosts.push_back(std::move(name).value());
  }
  return hosts;
}

std::string github_token_hosts_text(const AgentConfig& config) {
  const auto hosts = github_token_hosts(config);
  std::string text;
  for (std::size_t i = 0; i < hosts.size(); ++i)
    text += (i == 0 ? "" : i + 1 == hosts.size() ? " and " : ", ") + hosts[i];
  return text;
}

bool is_github_enterprise_host(std::string_view host) {
  constexpr std::string_view own = "github.com";
  if (host == own) return false;
  return !(host.size() > own.size() && host.substr(host.size() - own.size()) == own &&
           host[host.size() - own.size() - 1] == '.');
}

Status check_token_shape(std::string_view token) {
  auto all_word = [](std::string_view s) {
    for (char c : s)
      if (!word_char(c)) return false;
    return true;
  };
  const std::string_view fine = "github_pat_", classic = "ghp_";
  if (token.starts_with(fine) && token.size() >= fine.size() + 40 && token.size() <= 255 &&
      all_word(token.substr(fine.size())))
    return ok();
  if (token.starts_with(classic) && token.size() == classic.size() + 36 &&
      all_word(token.substr(classic.size())))
    return ok();
  std::string what =
      token.empty() ? "nothing was pasted" : "it is " + std::to_string(token.size()) + " characters";
  return Error::invalid("That is not a GitHub token (" + what +
                        "): a fine-grained token starts with github_pat_ and a classic one with ghp_. Copy "
                        "the whole token from "
                        "GitHub's page and run `parallex agent github` again.");
}

std::string token_page_url(const AgentConfig& c, int expires_days) {
  std::string url =
      "https://github.com/settings/personal-access-tokens/new?name=" + url_encode("parallex " + c.name);
  std::string description = "Parallex agent " + c.name + " (" + c.email + ")";
  if (!c.repos.empty()) {
    description += " for ";
    for (std::size_t i = 0; i < c.repos.size(); ++i) description += (i ? ", " : "") + c.repos[i];
  }
  url += "&description=" + url_encode(description);
  if (!c.repos.empty())
    url += "&target_name=" + url_encode(c.repos.front().substr(0, c.repos.front().find('/')));
  url += "&expires_in=" + std::to_string(expires_days);
  url += "&contents=write&pull_requests=write&metadata=read";
  return url;
}

Status store_token(const fs::path& gh_dir, const std::string& name, std::string_view token) {
  PX_TRY(check_token_shape(token));
  register_secret(token);
  return write_hosts(gh_dir, name, token);
}

Status store_placeholder(const fs::path& gh_dir, const std::string& name) {
  return write_hosts(gh_dir, name, placeholder_token);
}

Result<std::optional<std::string>> load_token(const fs::path& gh_dir) {
  const fs::path file = gh_dir / "hosts.yml";
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) return std::optional<std::string>{};
  PX_TRY_ASSIGN(auto text, read_file(file));
  std::string token;
  try {
    const YAML::Node root = YAML::Load(text);
    const YAML::Node host = root["github.com"];
    if (host && host["oauth_token"]) token = host["oauth_token"].as<std::string>();
  } catch (const YAML::Exception&) {
    // The parser's message could quote the token, so it is not shown.
    return Error::invalid("The agent's gh config " + file.string() +
                          " is not valid YAML; store the token again with `parallex agent github`.");
  }
  if (token.empty() || token == placeholder_token) return std::optional<std::string>{};
  register_secret(token);
  return std::optional<std::string>{token};
}

Result<std::string> read_secret_line(const std::string& prompt) {
  std::string line;
  if (isatty(STDIN_FILENO)) {
    std::fprintf(stderr, "%s", prompt.c_str());
    std::fflush(stderr);
    termios old{};
    if (tcgetattr(STDIN_FILENO, &old) != 0) return Error::io("read the terminal's settings", errno);
    termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    quiet.c_lflag |= ECHONL;
    if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) != 0)
      return Error::io("turn off the terminal's echo", errno);
    std::getline(std::cin, line);
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
  } else {
    std::getline(std::cin, line);
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  std::size_t start = line.find_first_not_of(" \t");
  return start == std::string::npos ? std::string() : line.substr(start);
}

}  // namespace px::agents
