#include "agents/git_config.hpp"

#include "agents/token.hpp"
#include "common/host_rule.hpp"

namespace px::agents {

namespace {

// A value in git's config syntax: quoted, with '\' and '"' escaped. A newline
// cannot be written, so paths holding one are refused by the caller.
std::string git_value(const std::string& value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

bool has_line_break(const std::string& s) {
  return s.find_first_of("\r\n") != std::string::npos;
}

bool allows_github_ssh(const AgentConfig& c) {
  if (c.network != policy::NetworkMode::allowlist) return false;
  for (const auto& text : c.allow) {
    const auto rule = parse_host_rule(text);
    if (rule && rule.value().port == 22 && host_rule_matches("github.com", rule.value().pattern)) return true;
  }
  return false;
}

}  // namespace

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string credential_helper_command(const fs::path& parallex_exe, const fs::path& agents_root,
                                      const std::string& name, const std::vector<std::string>& hosts) {
  std::string command = "!" + shell_quote(parallex_exe.string()) + " agent credential --store " +
                        shell_quote(agents_root.string());
  for (const auto& h : hosts) command += " --host " + shell_quote(h);
  return command + " " + name;
}

Result<std::string> render_gitconfig(const AgentPaths& p, const AgentConfig& c, const fs::path& exe) {
  // The hosts come from agent.yaml, which its runs cannot read: the helper
  // learns them from this file, rebuilt before each run and read-only in it.
  const std::string helper =
      credential_helper_command(exe, p.root.parent_path(), c.name, github_token_hosts(c));
  for (const std::string& s : {p.root.string(), exe.string()})
    if (has_line_break(s))
      return Error::invalid("The path '" + s +
                            "' holds a line break, which git's config cannot hold; move it.");
  std::string t;
  t += "# Written by Parallex for the agent '" + c.name + "'. Rebuilt before every run from agent.yaml:\n";
  t += "# change it with `parallex agent set`. None of your own git config is read in its runs.\n";
  t += "[user]\n";
  t += "\tname = " + git_value(c.name + " (agent)") + "\n";
  t += "\temail = " + git_value(c.email) + "\n";
  // The private key file: ssh-keygen signs with it directly (no SSH agent in a run).
  t += "\tsigningkey = " + git_value(p.private_key().string()) + "\n";
  t += "[gpg]\n\tformat = ssh\n";
  t += "[gpg \"ssh\"]\n\tallowedSignersFile = " + git_value(p.allowed_signers().string()) + "\n";
  t += "[commit]\n\tgpgsign = true\n";
  t += "[tag]\n\tgpgsign = true\n";
  // An empty folder: its git runs no hooks.
  t += "[core]\n\thooksPath = " + git_value(p.no_hooks().string()) + "\n";
  // No config file, no agent, only its own key: none of the user's. Host keys
  // are trusted on first use and kept in its home (its ~/.ssh stays hidden).
  for (const fs::path& f : {p.private_key(), p.known_hosts()})
    if (f.string().find_first_of(" '\"\\") != std::string::npos)
      return Error::invalid(
          "The path '" + f.string() +
          "' holds a space or a quote, which ssh's command line in git's config cannot hold; "
          "move the agent store.");
  t += "\tsshCommand = " +
       git_value("ssh -F /dev/null -o IdentitiesOnly=yes -o IdentityAgent=none -i " +
                 p.private_key().string() + " -o UserKnownHostsFile=" + p.known_hosts().string() +
                 " -o StrictHostKeyChecking=accept-new") +
       "\n";
  // The empty value drops every helper configured before this one.
  t += "[credential]\n\thelper = \"\"\n\thelper = " + git_value(helper) + "\n";
  // GitHub's SSH addresses go over HTTPS, with its own token, unless its rules
  // open GitHub's SSH port (github.com:22): then over SSH, with its own key.
  if (!allows_github_ssh(c)) {
    t += "[url \"https://github.com/\"]\n";
    t += "\tinsteadOf = " + git_value("git@github.com:") + "\n";
    t += "\tinsteadOf = " + git_value("ssh://git@github.com/") + "\n";
  }
  return t;
}

std::string render_allowed_signers(const std::string& email, const std::string& public_key_line) {
  std::string key = public_key_line;
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  return email + " namespaces=\"git\" " + key + "\n";
}

Status write_git_identity(const AgentPaths& paths, const AgentConfig& config, const fs::path& exe) {
  // ssh makes the known-hosts file, not its folder.
  std::error_code ec;
  fs::create_directories(paths.known_hosts().parent_path(), ec);
  PX_TRY_ASSIGN(auto text, render_gitconfig(paths, config, exe));
  PX_TRY_ASSIGN(auto pub, read_file(paths.public_key()));
  PX_TRY(write_file_atomic(paths.allowed_signers(), render_allowed_signers(config.email, pub), 0600));
  return write_file_atomic(paths.gitconfig(), text, 0644);
}

}  // namespace px::agents
