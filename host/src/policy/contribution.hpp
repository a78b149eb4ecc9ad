#pragma once
// What a harness plugin contributed, copied out of the plugin at once by the
// plugin host. Plain data: the plugin's memory is never referenced after the
// call returns.
#include <string>
#include <vector>

#include "policy/policy.hpp"

namespace px::policy {

struct HarnessContribution {
  std::string plugin;   // plugin name
  std::string harness;  // display name, e.g. "Claude Code"

  struct Path {
    // read_write and the state kinds are writable; a state dir or file that
    // is missing is made for the run (an empty one of its own in your home);
    // read_only is never writable, even inside a writable folder; an
    // executable dir is readable and runnable.
    enum class Kind { read, read_write, state_dir, state_file, read_only, executable_dir };
    std::string path;  // absolute or "~/..." (relative to the run's home)
    Kind kind = Kind::read;
    std::string reason;
  };
  struct Env {
    enum class Action { keep, strip, set } action = Action::keep;
    std::string name;  // a pattern for keep/strip
    std::string value;
    std::string reason;
  };
  struct ConfigDir {
    std::string variable;
    std::string path;  // "~/..." under the run's home
    std::string reason;
  };
  struct Nested {
    NestedSandboxSwitch::Kind kind = NestedSandboxSwitch::Kind::env;
    std::string name, value, reason;
  };
  struct Host {
    std::string host, reason;
  };
  // A provider key the broker keeps from the run (ABI 1.2): the variable, the
  // hosts it may go to, the variable of its base URL, its shape.
  struct Credential {
    std::string variable;
    std::vector<std::string> hosts;
    std::string base_url_variable;
    std::string shape;
    std::string reason;
  };

  std::vector<Path> paths;
  std::vector<Env> env;
  std::vector<ConfigDir> config_dirs;
  std::vector<Nested> nested;
  std::vector<Host> suggested_hosts;
  std::vector<Credential> credentials;
};

// Files in a project that a harness runs or trusts when it starts there next
// (its hooks, MCP servers, commands): declared by every loaded plugin, and
// read-only in every run whatever its harness (plugin ABI 1.3).
struct ProjectFiles {
  std::string plugin;   // plugin name
  std::string harness;  // display name
  struct File {
    std::string path;  // relative to the run folder, no ".." (checked by the plugin host)
    std::string reason;
  };
  std::vector<File> files;
};

}  // namespace px::policy
