// The run's activity over all its sessions (docs/reports.md, "activity").
// Commands are kept whole and in order, session after session, each with its
// time ("at", from the session's action_times); a file change names the
// command that made it by its index in that list, where a session linked them
// (its own `command` index counts in its own `commands` only).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "report/report.hpp"

namespace px::report {

namespace {

std::string activity_text(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const Json& activity_list(const Json& session, const char* key) {
  static const Json none = Json::array();
  auto it = session.find(key);
  return it != session.end() && it->is_array() ? *it : none;
}

// The time of entry `index` of a session's `list` ("commands" or
// "files_changed"): the parsers put it beside the lists, in the session's
// `action_times` (docs/transcripts.md); an entry's own "at" (a plugin that
// writes it there, a report's kept copy) counts too. Null when neither has one.
Json activity_time(const Json& session, const char* list, std::size_t index, const Json& entry) {
  if (auto it = entry.find("at"); it != entry.end() && it->is_string()) return *it;
  if (auto times = session.find("action_times"); times != session.end() && times->is_object())
    if (auto in = times->find(list);
        in != times->end() && in->is_array() && index < in->size() && (*in)[index].is_string())
      return (*in)[index];
  return nullptr;
}

}  // namespace

Json aggregate_activity(const Json& sessions) {
  Json read = Json::array(), changed = Json::array(), commands = Json::array(), urls = Json::array(),
       searches = Json::array();
  std::set<std::string> seen_read, seen_urls, seen_searches;
  std::map<std::string, std::size_t> changed_at;  // path, tool, action -> its place in `changed`
  std::vector<std::set<std::string>> changed_by;  // per command: the paths it changed, once each
  const auto add_unique = [](Json& list, std::set<std::string>& seen, const Json& value) {
    if (value.is_string() && seen.insert(value.get<std::string>()).second) list.push_back(value);
  };
  for (const auto& s : sessions) {
    const std::string session = activity_text(s, "session_id");
    for (const auto& p : activity_list(s, "files_read")) add_unique(read, seen_read, p);
    // This session's commands go after those of the sessions before it; `run_index`
    // maps each of its own indices to the run's (none for an entry that is no command).
    const Json& session_commands = activity_list(s, "commands");
    std::vector<std::optional<std::size_t>> run_index(session_commands.size());
    for (std::size_t i = 0; i < session_commands.size(); ++i) {
      const Json& c = session_commands[i];
      if (!c.is_object()) continue;
      run_index[i] = commands.size();
      Json command = c;
      command["at"] = activity_time(s, "commands", i, c);
      command["session_id"] = session;
      command["files_changed"] = Json::array();
      commands.push_back(std::move(command));
      changed_by.emplace_back();
    }
    const Json& session_changes = activity_list(s, "files_changed");
    for (std::size_t j = 0; j < session_changes.size(); ++j) {
      const Json& c = session_changes[j];
      if (!c.is_object()) continue;
      const Json at = activity_time(s, "files_changed", j, c);
      // The session's index, checked against its own commands, as one into the run's.
      Json by = nullptr;
      const auto link = c.find("command");
      const std::int64_t own = link != c.end() && link->is_number_integer() ? link->get<std::int64_t>() : -1;
      if (own >= 0 && static_cast<std::uint64_t>(own) < run_index.size() &&
          run_index[static_cast<std::size_t>(own)]) {
        const std::size_t index = *run_index[static_cast<std::size_t>(own)];
        by = index;
        const std::string path = activity_text(c, "path");
        if (!path.empty() && changed_by[index].insert(path).second)
          commands[index]["files_changed"].push_back(path);
      }
      const std::string key =
          activity_text(c, "path") + '\0' + activity_text(c, "tool") + '\0' + activity_text(c, "action");
      if (auto known = changed_at.find(key); known != changed_at.end()) {
        // The same change again (a later session, or Codex's record of it): the
        // first keeps its place, and takes a time or a command it lacked.
        Json& first = changed[known->second];
        if (first["at"].is_null()) first["at"] = at;
        if (first["command"].is_null()) first["command"] = by;
        continue;
      }
      Json change = c;
      change["at"] = at;
      change["command"] = by;
      changed_at.emplace(key, changed.size());
      changed.push_back(std::move(change));
    }
    for (const auto& u : activity_list(s, "urls")) add_unique(urls, seen_urls, u);
    for (const auto& q : activity_list(s, "web_searches")) add_unique(searches, seen_searches, q);
  }
  return Json{{"files_read", read},
              {"files_changed", changed},
              {"commands", commands},
              {"urls", urls},
              {"web_searches", searches}};
}

}  // namespace px::report
