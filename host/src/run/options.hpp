#pragma once
// The options every command that runs something takes, with the same
// spelling and meaning (`run`, `agent run`, `harness -w`, `agent -w`): per-run
// overrides of the profile's and the agent's settings, printed and kept in
// the run's record.
#include <optional>
#include <string>
#include <vector>

namespace px::run {

struct RunOptions {
  std::optional<std::string> harness;  // --harness PLUGIN (default: detected from the command)
  std::optional<std::string> profile;  // --profile NAME|FILE, over the default profile
  std::string in;                      // --in DIR (default: the current directory)
  std::vector<std::string> grants;     // --grant PATH[:ro|:rw]
  bool online = false;                 // --online
  bool offline = false;                // --offline
  std::vector<std::string> allow;      // --allow HOST
  // --local-servers[=PORTS|off]: "every" (the bare switch), "off", "3000,5432"; empty: not given.
  std::string local_servers;
  std::vector<std::string> publish;  // --publish PORT[:HOSTPORT]
  std::string ask;                   // --ask[=SECONDS|off]: "on" (the bare switch); empty: not given
  std::vector<std::string> env;      // --env NAME | --env NAME=VALUE
  std::vector<std::string> dangerously_writable;  // --dangerously-writable PATH (relative: to the run folder)
  bool unsealed = false;                          // --unsealed: no seal at all
  bool allow_weaker_seal = false;                 // --allow-weaker-seal: run where a guarantee is missing
  bool allow_system_folder = false;  // --allow-system-folder: work in /etc, /usr, ... (run/run_folder.hpp)

  // "--allow example.com --local-servers": what was given, for the record
  // (an --env value never: only its name).
  std::vector<std::string> describe() const;
};

}  // namespace px::run
