#include "report/transcript_sessions.hpp"

#include <unistd.h>

#include "common/json_io.hpp"

namespace px::report {

namespace fs = std::filesystem;

namespace {

const char* kTranscriptLimits =
    "Only what the harness did through its own tools (files its Read/Write/Edit tools touched, commands its "
    "shell "
    "tool ran, URLs its fetch tool opened). A command it ran can read or change files and reach the network "
    "without that showing here. The transcripts are the agent's own files: it could have changed or removed "
    "them.";

}  // namespace

Json parse_sessions(const std::string& harness, const std::vector<std::string>& emitted,
                    std::vector<std::string>& warnings) {
  Json out = Json::array();
  for (const auto& text : emitted) {
    auto parsed = parse_json_input(text);
    if (parsed.is_discarded() || !parsed.is_object()) {
      warnings.push_back("The " + harness +
                         " plugin returned a session that is not a JSON object; it was skipped.");
      continue;
    }
    Json session{{"harness", harness}};
    for (auto& [k, v] : parsed.items())
      if (k != "harness") session[k] = std::move(v);
    out.push_back(std::move(session));
  }
  return out;
}

Sessions sessions_in_window(const pluginhost::PluginSet& plugins, const SessionQuery& q) {
  Sessions result;
  std::error_code ec;
  const bool home_ok = !q.home.empty() && fs::is_directory(q.home, ec);
  for (const auto& plugin : plugins.plugins()) {
    if (!plugin->has_transcripts()) continue;
    const bool is_harness = plugin->name() == q.harness;
    Source source;
    source.name = "transcripts (" + plugin->name() + ")";
    source.cannot_show = kTranscriptLimits;
    if (!home_ok) {
      if (!is_harness) continue;
      source.status = "missing";
      source.location = q.home.string();
      source.message = q.home.empty() ? "The run record names no home, so its transcripts cannot be found."
                                      : "The home " + q.home.string() + " does not exist or is not a folder.";
      result.sources.push_back(std::move(source));
      continue;
    }
    auto roots = plugin->transcript_roots(q.home, q.run_folder);
    if (!roots) {
      if (!is_harness) continue;
      source.status = "missing";
      source.message = roots.error().message;
      result.sources.push_back(std::move(source));
      continue;
    }
    std::vector<std::string> present, unreadable;
    std::string locations;
    for (const auto& root : roots.value()) {
      locations += (locations.empty() ? "" : ", ") + root;
      if (!fs::exists(root, ec)) continue;
      if (::access(root.c_str(), R_OK) != 0)
        unreadable.push_back(root);
      else
        present.push_back(root);
    }
    source.location = locations;
    if (present.empty()) {
      if (!is_harness && unreadable.empty()) continue;
      source.status = "missing";
      source.message =
          unreadable.empty()
              ? "No transcripts of " + plugin->name() + " under " + q.home.string() + " (" + locations +
                    " does not exist): it wrote none there, or they were removed."
              : "The transcript folder " + unreadable.front() + " cannot be read; check its permissions.";
      result.sources.push_back(std::move(source));
      continue;
    }
    auto parsed = plugin->parse_transcripts(present, q.since_ms, q.until_ms);
    if (!parsed) {
      source.status = "missing";
      source.message = parsed.error().message;
      result.sources.push_back(std::move(source));
      continue;
    }
    std::vector<std::string> problems;
    for (const auto& dir : unreadable) problems.push_back(dir + ": cannot be read; check its permissions.");
    for (const auto& [path, message] : parsed.value().warnings)
      problems.push_back(path.empty() ? message : path + ": " + message);
    for (auto& s : parse_sessions(plugin->name(), parsed.value().sessions, problems))
      result.sessions.push_back(s);
    if (!problems.empty()) {
      source.status = "partial";
      for (const auto& p : problems) source.message += (source.message.empty() ? "" : " ") + p;
    }
    result.sources.push_back(std::move(source));
  }
  if (plugins.find(q.harness) == nullptr && !q.harness.empty() && q.harness != "generic") {
    Source source{"transcripts (" + q.harness + ")", "", "missing",
                  "No plugin named " + q.harness + " is loaded, so its transcripts cannot be read.",
                  kTranscriptLimits};
    result.sources.push_back(std::move(source));
  }
  return result;
}

}  // namespace px::report
