// The run's activity over all its sessions (docs/reports.md, "activity").
// Commands are kept whole and in order, session after session; a file change
// names the command that made it by its index in that list, where a session
// linked them (its own `command` index counts in its own `commands` only).
#include <cstdint>
#include <map>
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

// A time as the parsers write it (ISO 8601), or null.
Json activity_time(const Json& item) {
  auto it = item.find("at");
  return it != item.end() && it->is_string() ? *it : Json(nullptr);
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
    // This session's commands go after those of the sessions before it.
    const std::size_t first_command = commands.size();
    for (const auto& c : activity_list(s, "commands")) {
      if (!c.is_object()) continue;
      Json command = c;
      command["at"] = activity_time(c);
      command["session_id"] = session;
      command["files_changed"] = Json::array();
      commands.push_back(std::move(command));
      changed_by.emplace_back();
    }
    const std::size_t session_commands = commands.size() - first_command;
    for (const auto& c : activity_list(s, "files_changed")) {
      if (!c.is_object()) continue;
      // The session's index, checked against its own commands, as one into the run's.
      Json by = nullptr;
      if (auto it = c.find("command");
          it != c.end() && it->is_number_integer() && it->get<std::int64_t>() >= 0 &&
          static_cast<std::uint64_t>(it->get<std::int64_t>()) < session_commands) {
        const std::size_t index = first_command + static_cast<std::size_t>(it->get<std::int64_t>());
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
        if (first["at"].is_null()) first["at"] = activity_time(c);
        if (first["command"].is_null()) first["command"] = by;
        continue;
      }
      Json change = c;
      change["at"] = activity_time(c);
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
