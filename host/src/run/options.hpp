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
  std::optional<bool> local_servers;   // --local-servers (on for this run)
  std::vector<std::string> publish;    // --publish PORT[:HOSTPORT]
  bool unsealed = false;               // --unsealed: no seal at all
  bool accept_weaker_seal = false;     // --allow-weaker-seal: run where a guarantee is missing

  // "--allow example.com --local-servers": what was given, for the record.
  std::vector<std::string> describe() const;
};

}  // namespace px::run
