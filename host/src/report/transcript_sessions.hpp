#pragma once
// The harness sessions active in a run's window, read through each plugin's
// transcript parser from where that harness keeps transcripts under a home.
#include <filesystem>
#include <string>
#include <vector>

#include "pluginhost/plugin_set.hpp"
#include "report/model.hpp"

namespace px::report {

struct SessionQuery {
  std::filesystem::path home;        // the agent's (or the run's) home
  std::filesystem::path run_folder;  // where the run worked (some harnesses keep history there), or empty
  std::string harness;               // the run's harness plugin; always listed as a source
  std::int64_t since_ms = 0, until_ms = 0;
};

struct Sessions {
  Json sessions = Json::array();  // plugin session objects, each with "harness" first
  std::vector<Source> sources;    // one per plugin looked at
};

// Every plugin that reads transcripts is asked for its folders under `home`; the
// run's own harness is listed even when it left none (as missing), the others
// only when their folders exist (a run of `bash` may still have started claude).
Sessions sessions_in_window(const pluginhost::PluginSet& plugins, const SessionQuery& query);

// Parses the JSON objects a plugin emitted; a malformed one becomes a warning.
Json parse_sessions(const std::string& harness, const std::vector<std::string>& emitted,
                    std::vector<std::string>& warnings);

}  // namespace px::report
