// `parallex agent github|credential|sign-in`: the agent's GitHub token, its git
// credential helper, and carrying a harness sign-in into its home.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <memory>

#include "agents/credential.hpp"
#include "agents/names.hpp"
#include "agents/store.hpp"
#include "agents/token.hpp"
#include "cli/agents_cli.hpp"
#include "cli/output.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "common/spawn.hpp"
#include "pluginhost/plugin_set.hpp"

namespace px::cli::agent_cmd {

namespace {

// Opens `url` in the user's browser when there is a desktop session; best effort.
void open_in_browser(const std::string& url) {
  if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY")) return;
  const char* path_env = std::getenv("PATH");
  auto opener = find_executable("xdg-open", path_env ? path_env : "");
  if (!opener) return;
  // Its stdin is /dev/null, not the terminal the token is pasted into next.
  if (auto pid = spawn_process({.argv = {opener->string(), url}})) wait_exit_status(pid.value());
}

struct GithubOptions {
  std::string name;
  int expires_days = 90;
  bool no_open = false;
};

int do_github(const GithubOptions& o) {
  auto paths = agents::find_agent(agents::default_agents_root(), o.name);
  if (!paths) return report_error(paths.error());
  auto config = agents::load_config(paths.value());
  if (!config) return report_error(config.error());
  const auto& c = config.value();
  const std::string url = agents::token_page_url(c, o.expires_days);
  std::printf("Make a fine-grained token for agent %s on GitHub:\n\n  %s\n\n", c.name.c_str(), url.c_str());
  std::printf(
      "The page has its name, owner%s, expiry (%d days) and permissions (contents and pull requests: "
      "write; metadata: read) filled in.\n",
      c.repos.empty() ? " (none given: pick it there)" : "", o.expires_days);
  std::printf("Pick its repositories on that page%s: GitHub does not let a link choose them.\n",
              c.repos.empty() ? "" : (" (" + to_json_text(nlohmann::json(c.repos)) + ")").c_str());
  std::printf(
      "Then generate the token and paste it here. It goes to the agent's own gh config (%s), nowhere else.\n",
      paths.value().hosts_yml().c_str());
  std::fflush(stdout);
  if (!o.no_open && ::isatty(STDIN_FILENO)) open_in_browser(url);
  auto token = agents::read_secret_line("Token: ");
  if (!token) return report_error(token.error());
  if (auto s = agents::check_token_shape(token.value()); !s) return report_error(s.error());
  register_secret(token.value());
  if (auto s = agents::store_token(paths.value().gh(), c.name, token.value()); !s)
    return report_error(s.error());
  std::printf(
      "Stored agent %s's token in %s (0600). Its runs hold a placeholder of it (in GH_TOKEN, its gh config "
      "and its git credential helper); their proxy sends the token to %s only.\n",
      c.name.c_str(), paths.value().hosts_yml().c_str(), agents::github_token_hosts_text(c).c_str());
  return 0;
}

struct CredentialOptions {
  std::string name, action, store;
  std::vector<std::string> hosts;  // the token's hosts, from the agent's git config
};

int do_credential(const CredentialOptions& o) {
  // git passes its request on stdin; it must be read even when unanswered.
  std::string request((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  const fs::path root = o.store.empty() ? agents::default_agents_root() : normal_absolute(o.store);
  // Only the gh config is read: inside a run the agent's rules file is out of reach.
  if (auto s = agents::check_name(o.name); !s) return report_error(s.error());
  const auto paths = agents::paths_of(root, o.name);
  auto token = agents::load_token(paths.gh());
  if (!token) return report_error(token.error());
  const std::string answer = agents::credential_answer(
      o.action, request, token.value(), o.hosts.empty() ? agents::github_own_hosts() : o.hosts);
  std::fwrite(answer.data(), 1, answer.size(), stdout);
  return 0;
}

struct SignInOptions {
  std::string name;
  std::optional<std::string> harness;
  bool yes = false;
  bool replace = false;
};

Status copy_sign_in(const pluginhost::SignInStep& step, const agents::AgentPaths& p, bool replace,
                    bool& copied) {
  const fs::path from = normal_absolute(step.from), to = normal_absolute(step.to);
  if (!is_within(to, p.home()))
    return Error::plugin("The plugin asked to copy a sign-in to " + to.string() +
                         ", outside the agent's home " + p.home().string() + "; nothing was copied.");
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(from, ec))) {
    std::printf("  %s: not found (sign in to it first, or sign the agent in inside a run)\n", from.c_str());
    return ok();
  }
  if (fs::exists(fs::symlink_status(to, ec)) && !replace) {
    std::printf("  %s: the agent already has one; kept (--replace to overwrite)\n", to.c_str());
    return ok();
  }
  PX_TRY_ASSIGN(auto data, agents::read_file(from));
  fs::create_directories(to.parent_path(), ec);
  if (ec) return Error::io("create " + to.parent_path().string(), ec.value());
  PX_TRY(agents::write_file_atomic(to, data, 0600));
  copied = true;
  std::printf("  copied %s -> %s (0600)\n", from.c_str(), to.c_str());
  return ok();
}

int do_sign_in(const SignInOptions& o) {
  auto paths = agents::find_agent(agents::default_agents_root(), o.name);
  if (!paths) return report_error(paths.error());
  if (auto c = agents::load_config(paths.value()); !c) return report_error(c.error());
  const auto& p = paths.value();
  auto set = pluginhost::PluginSet::load_default();
  std::vector<const pluginhost::LoadedPlugin*> chosen;
  if (o.harness) {
    auto plugin = set.require(*o.harness);
    if (!plugin) return report_error(plugin.error());
    chosen.push_back(plugin.value());
  } else {
    for (const auto& plugin : set.plugins())
      if (plugin->has_sign_in()) chosen.push_back(plugin.get());
  }
  if (chosen.empty()) {
    std::printf("No harness plugin carries a sign-in; sign the agent in inside a run.\n");
    return 0;
  }
  int status = 0;
  for (const auto* plugin : chosen) {
    auto steps = plugin->sign_in_steps(this_platform(), user_home(), p.home());
    if (!steps) {
      status = report_error(steps.error());
      continue;
    }
    if (steps.value().empty()) continue;
    std::printf("%s:\n", plugin->harness().empty() ? plugin->name().c_str() : plugin->harness().c_str());
    for (const auto& step : steps.value()) {
      if (step.kind == pluginhost::SignInStep::Kind::instruction) {
        std::printf("  %s\n", step.text.c_str());
        continue;
      }
      const std::string what = step.text.empty() ? "the sign-in" : step.text;
      if (!confirm("Copy your " + what + " (" + step.from + ") into agent " + o.name +
                       "'s home? It can then use your account there.",
                   o.yes)) {
        std::printf("  not copied%s\n", ::isatty(STDIN_FILENO) ? "" : " (no terminal to ask; add --yes)");
        continue;
      }
      bool copied = false;
      if (auto s = copy_sign_in(step, p, o.replace, copied); !s) status = report_error(s.error());
    }
  }
  return status;
}

}  // namespace

Action setup_github(CLI::App& s) {
  auto o = std::make_shared<GithubOptions>();
  s.add_option("name", o->name, "The agent")->required();
  s.add_option("--expires-days", o->expires_days, "The token's lifetime in days (GitHub's page may round it)")
      ->check(CLI::Range(1, 366));
  s.add_flag("--no-open", o->no_open, "Only print the page's address");
  return [o] { return do_github(*o); };
}

Action setup_credential(CLI::App& s) {
  auto o = std::make_shared<CredentialOptions>();
  s.add_option("name", o->name, "The agent")->required();
  s.add_option("action", o->action, "get, store or erase (git's credential protocol)")
      ->required()
      ->check(CLI::IsMember({"get", "store", "erase"}));
  s.add_option("--store", o->store,
               "The agents folder (written into its git config; default: the data dir's)");
  s.add_option("--host", o->hosts,
               "A host its token is bound to (written into its git config from agent.yaml; default: "
               "github.com, api.github.com, uploads.github.com)");
  return [o] { return do_credential(*o); };
}

Action setup_sign_in(CLI::App& s) {
  auto o = std::make_shared<SignInOptions>();
  s.add_option("name", o->name, "The agent")->required();
  s.add_option("--harness", o->harness, "Only this harness (default: every plugin that carries a sign-in)");
  s.add_flag("--yes,-y", o->yes, "Copy without asking");
  s.add_flag("--replace", o->replace, "Replace a sign-in the agent already has");
  return [o] { return do_sign_in(*o); };
}

}  // namespace px::cli::agent_cmd
