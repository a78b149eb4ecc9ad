// Parallex plugin SDK — what a harness plugin needs beyond detection, the
// same pieces the bundled plugins use: is this an agent run, does argv[0]
// run the harness itself, where is the harness installed (its executable
// dirs inside your home), and how a sign-in file is carried into an agent's
// home.
//
// Header-only, C++17's <filesystem>.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <parallex/plugin.hpp>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace parallex::sdk {

inline std::string without_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// An agent run has a home of its own. Config-dir variables are set only then:
// in a run under the user's own home they would name the default location
// anyway, and the host makes a config dir writable as a whole, which for
// ~/.claude or ~/.config is far more than the harness's state.
inline bool is_agent_run(const ContributeInput& in) {
  if (in.run_home.empty() || in.user_home.empty()) return false;
  return without_trailing_slashes(in.run_home) != without_trailing_slashes(in.user_home);
}

// Programs that start another program: an argument inserted after their
// argv[0] would reach them, not the harness.
inline bool is_launcher(std::string_view program) {
  for (std::string_view l :
       {"env", "node", "nodejs", "bun", "deno",  "npx",  "bunx", "pnpx",  "npm",  "pnpm", "yarn", "pipx",
        "uvx", "uv",   "poetry", "pdm", "hatch", "sudo", "nice", "nohup", "time", "sh",   "bash", "zsh"})
    if (program == l) return true;
  return is_python(program);
}

// The command reduced to argv[0] and its resolved paths.
inline Command head_of(const Command& command) {
  Command head;
  if (!command.argv.empty()) head.argv.push_back(command.argv.front());
  head.resolved_path = command.resolved_path;
  head.resolved_real = command.resolved_real;
  return head;
}

// The absolute script a node/bun/deno launcher runs, or empty.
inline std::string launched_script(const Command& command) {
  const auto& argv = command.argv;
  std::size_t i = skip_env(argv);
  if (i >= argv.size()) return {};
  const std::string_view program = basename_of(argv[i]);
  if (program != "node" && program != "nodejs" && program != "bun" && program != "deno") return {};
  for (++i; i < argv.size(); ++i) {
    if (argv[i] == "run" || argv[i] == "x") continue;
    if (argv[i].rfind('-', 0) == 0) continue;
    return argv[i].rfind('/', 0) == 0 ? argv[i] : std::string();
  }
  return {};
}

// "/h/.nvm/.../node_modules/@openai/codex/bin/codex.js" -> "/h/.nvm/.../node_modules/@openai/codex".
// The outermost match wins, so a platform package nested inside stays covered.
inline std::optional<std::string> package_root(std::string_view path, std::string_view package) {
  const std::string needle = "/node_modules/" + std::string(package);
  for (std::size_t at = path.find(needle); at != std::string_view::npos; at = path.find(needle, at + 1)) {
    const std::size_t end = at + needle.size();
    if (end == path.size() || path[end] == '/') return std::string(path.substr(0, end));
  }
  return std::nullopt;
}

inline bool lexically_within(const std::filesystem::path& path, const std::filesystem::path& root) {
  auto p = path.lexically_normal(), r = root.lexically_normal();
  auto pi = p.begin();
  for (auto ri = r.begin(); ri != r.end(); ++ri, ++pi) {
    if (ri->empty()) continue;  // a trailing separator
    if (pi == p.end() || *pi != *ri) return false;
  }
  return true;
}

inline std::filesystem::path canonical_or_self(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path out = std::filesystem::weakly_canonical(path, ec);
  return ec ? path.lexically_normal() : out;
}

// Where a harness may be installed. `packages` are its npm packages;
// `platform_prefixes` name the per-platform packages npm installs beside it
// ("@openai/codex-linux-" ...); `home_dirs` are install dirs of its own
// installers, relative to the user's home (".opencode/bin").
struct InstallSpec {
  std::vector<std::string> packages;
  std::vector<std::string> platform_prefixes;
  std::vector<std::string> home_dirs;
  std::string what;  // "Claude Code"
};

// The harness's install dirs inside the user's home, found from the resolved
// argv[0] and the script a node wrapper runs. Outside the home they are
// system paths, readable anyway; the home itself is never offered.
inline void contribute_install_dirs(const ContributeInput& in, const InstallSpec& spec, Contribution& out) {
  if (in.user_home.empty() || !in.command) return;
  const std::filesystem::path home = canonical_or_self(in.user_home);
  std::vector<std::string> seen;
  auto offer = [&](const std::filesystem::path& dir, const std::string& reason) {
    const std::filesystem::path real = canonical_or_self(dir);
    if (!lexically_within(real, home) || lexically_within(home, real)) return;
    const std::string s = without_trailing_slashes(real.string());
    for (const auto& d : seen)
      if (d == s) return;
    seen.push_back(s);
    out.executable_dir(s, reason);
  };
  const Command& cmd = *in.command;
  for (const std::string& candidate : {cmd.resolved_real, cmd.resolved_path, launched_script(cmd)}) {
    if (candidate.empty()) continue;
    for (const auto& package : spec.packages) {
      auto root = package_root(candidate, package);
      if (!root) continue;
      offer(*root, spec.what + "'s own install (npm package " + package +
                       "), readable and runnable, never writable");
      // Per-platform packages npm put beside it (hoisted, or in a pnpm store).
      const std::filesystem::path scope_dir = std::filesystem::path(*root).parent_path();
      std::error_code ec;
      for (const auto& entry : std::filesystem::directory_iterator(scope_dir, ec)) {
        const std::string name = entry.path().filename().string();
        const std::string scoped =
            package.find('/') == std::string::npos ? name : package.substr(0, package.find('/') + 1) + name;
        for (const auto& prefix : spec.platform_prefixes)
          if (scoped.rfind(prefix, 0) == 0 && entry.is_directory(ec))
            offer(entry.path(), spec.what + "'s native binary (npm package " + scoped +
                                    "), readable and runnable, never writable");
      }
    }
    for (const auto& rel : spec.home_dirs) {
      const std::filesystem::path dir = home / rel;
      if (lexically_within(canonical_or_self(candidate), dir))
        offer(dir, spec.what + "'s own install (~/" + rel + "), readable and runnable, never writable");
    }
  }
}

// Claude Code's scratch dir is named after the uid the run has, which is the
// user's own: an agent is an identity, not a Unix account.
inline std::string uid_string() {
  return std::to_string(static_cast<unsigned long>(::getuid()));
}

inline bool path_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// Asks the host to copy a sign-in file from the user's home into the agent's,
// or, when the user has none, says how to sign the agent in.
inline void carry_file(const SignInInput& in, SignIn& out, const std::string& relative,
                       const std::string& what, const std::string& when_missing) {
  const std::string from = without_trailing_slashes(in.user_home) + "/" + relative;
  if (path_exists(from))
    out.copy_file(from, without_trailing_slashes(in.agent_home) + "/" + relative, what);
  else
    out.instruction("No " + what + " was found at " + from + ". " + when_missing);
}

}  // namespace parallex::sdk
