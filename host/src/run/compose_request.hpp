#pragma once
// From a command line's run options to a composed Policy: the profiles, the
// agent, the harness plugin's contribution and the flags, through
// policy::compose. Used by every run (prepare_run) and by the commands that
// only show what a run would get (`policy show`, `detect`).
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "pluginhost/detection.hpp"
#include "pluginhost/plugin_set.hpp"
#include "policy/compose.hpp"
#include "policy/policy.hpp"
#include "policy/profile.hpp"
#include "run/notice.hpp"
#include "run/options.hpp"

namespace px::run {

struct ComposeRequest {
  RunOptions options;
  std::vector<std::string> command;
  policy::Platform platform = policy::Platform::linux_host;
  std::filesystem::path temp_dir;                  // the run's private temp dir
  std::filesystem::path opener_dir;                // the run's opener (run/opener_protocol.hpp), or empty
  std::optional<policy::AgentInputs> agent;        // agent runs
  std::shared_ptr<pluginhost::PluginSet> plugins;  // loaded once by the caller, or loaded here
  // Profiles composed after --profile (a workspace's git paths and variables),
  // and the names of variables they set whose values are secret.
  std::vector<policy::Profile> extra_profiles;
  std::set<std::string> secret_env;
  // Parallex's own state denied to the run (policy/own_state.hpp): every run,
  // and `policy show` to show what a run would get.
  bool deny_own_state = true;
  // Credentials parallex holds for the run (brokered by default).
  std::vector<policy::BrokeredCredential> default_credentials;
};

struct ComposedPolicy {
  std::shared_ptr<pluginhost::PluginSet> plugins;
  pluginhost::HarnessChoice harness;
  pluginhost::CommandLine command;
  policy::Policy policy;
  std::vector<Notice> notices;  // e.g. "granted /x as /y (it is a symlink)"
};

Result<ComposedPolicy> compose_policy(const ComposeRequest& request);

// "PATH[:ro|:rw]" -> PathFlag; the path must exist; a symlink is resolved and noted.
Result<policy::PathFlag> parse_grant(const std::string& text, std::vector<Notice>& notices);

}  // namespace px::run
