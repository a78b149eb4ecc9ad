#include "policy/tool_caches.hpp"

#include "common/paths.hpp"
#include "policy/policy_builder.hpp"

namespace px::policy {

const std::vector<ToolCacheVariable>& tool_cache_variables() {
  // Each tool's own variable for its cache (or, for cargo and gradle, the
  // home holding it; cargo then does not read ~/.cargo/config.toml).
  static const std::vector<ToolCacheVariable> kVariables = {
      {"npm", "npm_config_cache", "npm"},
      {"yarn", "YARN_CACHE_FOLDER", "yarn"},
      {"yarn", "YARN_GLOBAL_FOLDER", "yarn-global"},
      {"pnpm", "npm_config_store_dir", "pnpm-store"},
      {"pnpm", "npm_config_cache_dir", "pnpm-cache"},
      {"pip", "PIP_CACHE_DIR", "pip"},
      {"uv", "UV_CACHE_DIR", "uv"},
      {"cargo", "CARGO_HOME", "cargo"},
      {"go", "GOMODCACHE", "go-mod"},
      {"go", "GOCACHE", "go-build"},
      {"gradle", "GRADLE_USER_HOME", "gradle"},
      {"maven", "MAVEN_OPTS", "-Dmaven.repo.local={}/m2"},
      {"bun", "BUN_INSTALL_CACHE_DIR", "bun"},
      {"deno", "DENO_DIR", "deno"},
      {"node-gyp", "npm_config_devdir", "node-gyp"},
      {"pre-commit", "PRE_COMMIT_HOME", "pre-commit"},
  };
  return kVariables;
}

std::vector<fs::path> users_own_tool_caches(const fs::path& home) {
  return {home / ".npm", home / ".yarn",   home / ".cache",        home / ".cargo",
          home / "go",   home / ".gradle", home / ".m2",           home / ".local/share/pnpm",
          home / ".bun", home / ".deno",   home / "Library/Caches"};
}

Status apply_tool_caches(PolicyBuilder& b, const fs::path& root_on_host, const fs::path& root_inside,
                         bool in_temp, const fs::path& user_home, const Origin& origin) {
  const fs::path root = normal_absolute(root_on_host);
  if (!in_temp) {
    std::error_code ec;
    if (!fs::is_directory(root, ec))
      return Error::invalid("the tool caches folder " + root.string() + " (" + origin.describe() +
                            ") does not exist; create it, or set tool_caches: per_run");
    if (root == normal_absolute(user_home) || is_within(normal_absolute(user_home), root))
      return Error::policy("the tool caches folder " + root.string() + " (" + origin.describe() +
                           ") holds your whole home; give a folder of its own");
    for (const auto& own : users_own_tool_caches(normal_absolute(user_home)))
      if (is_within(root, own) || is_within(own, root))
        return Error::policy(
            "the tool caches folder " + root.string() + " (" + origin.describe() +
            ") holds your own tool caches (" + own.string() +
            "); a run may never write them, since a poisoned cache would reach your builds outside "
            "the seal. Give a folder of its own");
    b.allow(root, Access::write, "the run's tool caches (npm, pip, cargo, go...)", origin);
  }
  for (const auto& v : tool_cache_variables()) {
    std::string value = v.value;
    if (const auto at = value.find("{}"); at != std::string::npos)
      value.replace(at, 2, root_inside.string());
    else
      value = (root_inside / value).string();
    b.set_env(v.variable, value, std::string("the run's own cache for ") + v.tool, origin);
  }
  return ok();
}

}  // namespace px::policy
