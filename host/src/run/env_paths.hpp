#pragma once
// A variable the run gets that names a file or folder the run may not read
// (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, the key in GIT_SSH_COMMAND): the
// program inside fails later with an error of its own, far from the cause.
// Said at the start, with the grant that fixes it (or the rule no grant lifts).
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "policy/policy.hpp"
#include "run/notice.hpp"

namespace px::run {

// The absolute paths a variable's value names: the whole value, the items of
// a ':' list (NODE_PATH), or the words of a command (GIT_SSH_COMMAND="ssh -i
// ~/keys/deploy"), '~' expanded. Only paths that exist: a word that merely
// starts with '/' is not said.
std::vector<std::filesystem::path> paths_named(const std::string& value);

// The variables passed with --env (NAME or NAME=VALUE).
void say_unreadable_env_paths(const std::vector<std::string>& env_flags, const policy::Policy& policy,
                              std::vector<Notice>& notices);

// The variables the run keeps from the user's environment as they are (a
// profile's or a plugin's keep: the default profile keeps the CA bundles a
// user exported), but those in `already_said` (passed with --env), PATH
// (the command is looked up on it, with its own advice) and HOME. Files
// only, and SSL_CERT_DIR's folder.
void say_unreadable_kept_paths(const std::map<std::string, std::string>& run_env,
                               const std::map<std::string, std::string>& host_env,
                               const std::set<std::string>& already_said, const policy::Policy& policy,
                               std::vector<Notice>& notices);

}  // namespace px::run
