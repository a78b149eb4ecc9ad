#include "policy/tool_caches.hpp"

#include "common/paths.hpp"
#include "policy/policy_builder.hpp"

namespace px::policy {

const std::vector<ToolCacheVariable>& tool_cache_variables() {
  // Each tool's own variable for its cache (or, for cargo and gradle, the
  // home holding it; cargo then does not read ~/.cargo/config.toml). Never a
  // variable npm does not know under npm's prefix: npm warns about each on
  // every command (pnpm reads its own pnpm_config_ prefix; node-gyp has only
  // npm_config_devdir, so it keeps its default cache, ~/.cache/node-gyp).
  static const std::vector<ToolCacheVariable> kVariables = {
      {"npm", "npm_config_cache", "npm", "{}", ".npm"},
      {"yarn", "YARN_CACHE_FOLDER", "yarn", "{}", ".cache/yarn"},
      {"yarn", "YARN_GLOBAL_FOLDER", "yarn-global", "{}", nullptr},
      {"pnpm", "pnpm_config_store_dir", "pnpm-store", "{}", ".local/share/pnpm/store"},
      {"pnpm", "pnpm_config_cache_dir", "pnpm-cache", "{}", nullptr},
      {"pip", "PIP_CACHE_DIR", "pip", "{}", ".cache/pip"},
      {"uv", "UV_CACHE_DIR", "uv", "{}", ".cache/uv"},
      {"cargo", "CARGO_HOME", "cargo", "{}", nullptr},
      {"go", "GOMODCACHE", "go-mod", "{}", "go/pkg/mod"},
      {"go", "GOCACHE", "go-build", "{}", ".cache/go-build"},
      {"gradle", "GRADLE_USER_HOME", "gradle", "{}", nullptr},
      {"maven", "MAVEN_OPTS", "m2", "-Dmaven.repo.local={}", ".m2/repository"},
      {"bun", "BUN_INSTALL_CACHE_DIR", "bun", "{}", ".bun/install/cache"},
      {"deno", "DENO_DIR", "deno", "{}", ".cache/deno"},
      {"pre-commit", "PRE_COMMIT_HOME", "pre-commit", "{}", ".cache/pre-commit"},
  };
  return kVariables;
}

std::vector<fs::path> users_own_tool_caches(const fs::path& home) {
  return {home / ".npm", home / ".yarn",   home / ".cache",        home / ".cargo",
          home / "go",   home / ".gradle", home / ".m2",           home / ".local/share/pnpm",
          home / ".bun", home / ".deno",   home / "Library/Caches"};
}

Status apply_tool_caches(PolicyBuilder& b, const fs::path& root_on_host, const fs::path& root_inside,
                         bool in_temp, bool layered, const fs::path& user_home, const Origin& origin) {
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
    const fs::path folder = root_inside / v.folder;
    std::string value = v.format;
    value.replace(value.find("{}"), 2, folder.string());
    b.set_env(v.variable, value, std::string("the run's own cache for ") + v.tool, origin);
    if (!layered || !in_temp || v.users_cache == nullptr) continue;
    // The user's cache as it is now: a folder of theirs (not a link, which
    // could lead anywhere), shown read-only beneath the run's writable layer.
    const fs::path own = normal_absolute(user_home) / v.users_cache;
    std::error_code ec;
    if (fs::is_directory(fs::symlink_status(own, ec)))
      b.cache_layer(own, folder,
                    std::string("your ") + v.tool + " cache, read-only beneath the run's own layer", origin);
  }
  return ok();
}

}  // namespace px::policy
