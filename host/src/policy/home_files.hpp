#pragma once
// A harness's files in a home, as its plugin declares them (plugin ABI 1.4,
// docs/plugins.md): each its own data, which a run under the user's own home
// writes back there, or a setting that runs or approves commands (MCP
// servers, hooks, plugins, `notify`), which a run sees but the user's home
// gets only when the user applies it (`parallex runs apply`). Inside JSON and
// TOML files the kind goes down to keys.
//
// One definition, used twice: the seal and the supervisor of a run in the
// user's home (protect/home_settings.hpp), and the check of an agent's
// home before an unsealed run (agents/run_inputs.hpp).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/origin.hpp"

namespace px::policy {

namespace fs = std::filesystem;

// scratch: a folder or whole file the harness writes and runs from within a
// session only (plugin ABI 1.6); the run gets its own, dropped when it ends.
enum class HomeKind { data, settings, scratch };
enum class HomeFormat { whole, json, toml };
const char* to_string(HomeKind kind);
const char* to_string(HomeFormat format);

// "projects.*.mcpServers": the keys on the way, `*` for any one. The
// plugin's "{run_folder}" is the run's folder by the time a Policy holds it.
struct HomeKeyRule {
  std::vector<std::string> pattern;
  HomeKind kind = HomeKind::settings;
  std::string reason;
  std::string text;  // as the plugin wrote it, for display
};

struct HomeFile {
  fs::path path;  // absolute
  bool directory = false;
  HomeKind kind = HomeKind::data;
  HomeFormat format = HomeFormat::whole;
  std::vector<HomeKeyRule> keys;  // the first that matches decides
  std::string reason;
  Origin origin;

  // A setting, a scratch folder, or a data file with keys that are settings:
  // what a run must not change in the user's home.
  bool guarded() const;
};

// What a plugin declared, before the run's home and folder are known:
// paths as "~/...", patterns with "{run_folder}" (LoadedPlugin::home_files).
struct DeclaredHomeFiles {
  std::string plugin;
  std::string harness;
  struct Key {
    std::string pattern;
    HomeKind kind = HomeKind::settings;
    std::string reason;
  };
  struct File {
    std::string path;
    bool directory = false;
    HomeKind kind = HomeKind::data;
    HomeFormat format = HomeFormat::whole;
    std::vector<Key> keys;
    std::string reason;
  };
  std::vector<File> files;
};

// The declarations for a home and a run folder: paths under `home`, the
// run folder in the patterns. An error names the plugin and the entry.
std::vector<HomeFile> resolve_home_files(const DeclaredHomeFiles& declared, const fs::path& home,
                                         const fs::path& run_folder);

// "a.*.b" -> {"a", "*", "b"}; "{run_folder}" becomes `run_folder` whole.
std::vector<std::string> split_key_pattern(std::string_view pattern, const fs::path& run_folder);

// The declared entry that speaks for `path`: the deepest one at or above it.
const HomeFile* home_file_for(const std::vector<HomeFile>& files, const fs::path& path);

// What a key (the keys on the way to it) of `file` is, and the rule that said
// so (null: the file's own kind).
struct KeyVerdict {
  HomeKind kind = HomeKind::data;
  const HomeKeyRule* rule = nullptr;
};
KeyVerdict kind_of_key(const HomeFile& file, const std::vector<std::string>& key);
// Whether a rule could still match a key below `prefix` (the diff walks on).
bool rules_below(const HomeFile& file, const std::vector<std::string>& prefix);

// "projects[\"/w/p\"].mcpServers.x": a key path as a user reads it.
std::string describe_key(const std::vector<std::string>& key);

}  // namespace px::policy
