#include "report/timeline.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "common/clock.hpp"

namespace px::report {

namespace {

std::string timeline_text(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Which lane an event of the run's record goes to.
std::string timeline_kind(const std::string& type) {
  if (type.rfind("network.", 0) == 0 || type.rfind("request.", 0) == 0 || type.rfind("credential.", 0) == 0 ||
      type == "rule.changed")
    return "network";
  if (type.rfind("file.", 0) == 0 || type.rfind("decoy.", 0) == 0) return "file";
  return "command";
}

}  // namespace

Timeline run_timeline(const Json& run, const std::vector<Json>& events) {
  Timeline out;
  // Kept with their times, so that the items are put in order once, at the end.
  std::vector<std::pair<std::int64_t, Json>> items;
  const auto add = [&items](const std::string& t, Json item) {
    const auto ms = parse_iso_ms(t);
    if (ms) items.emplace_back(*ms, std::move(item));
  };

  // From the transcripts: the report's own lists (aggregate_activity), so the
  // timeline and the lists cannot disagree.
  const Json activity = run.value("activity", Json::object());
  const Json commands = activity.value("commands", Json::array());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const auto& c = commands[i];
    const std::string at = timeline_text(c, "at");
    if (at.empty()) continue;
    add(at, {{"t", at},
             {"kind", "command"},
             {"text", timeline_text(c, "command")},
             {"detail",
              {{"command", i},
               {"exit_code", c.value("exit_code", Json())},
               {"status", c.value("status", Json())},
               {"cwd", c.value("cwd", Json())},
               {"tool", c.value("tool", Json())},
               {"files_changed", c.value("files_changed", Json::array())}}}});
  }
  for (const auto& f : activity.value("files_changed", Json::array())) {
    const std::string at = timeline_text(f, "at");
    if (at.empty()) continue;
    const std::string from = timeline_text(f, "from");
    const std::string path = timeline_text(f, "path");
    Json detail{{"action", f.value("action", Json())},
                {"tool", f.value("tool", Json())},
                {"path", path},
                {"command", f.value("command", Json())}};
    if (const Json by = detail["command"];  // a copy: detail grows below
        by.is_number_integer() && by.get<std::int64_t>() >= 0 && by.get<std::uint64_t>() < commands.size())
      detail["by_command"] = timeline_text(commands[by.get<std::size_t>()], "command");
    add(at, {{"t", at},
             {"kind", "file"},
             {"text", timeline_text(f, "action") + " " + (from.empty() ? path : from + " -> " + path)},
             {"detail", std::move(detail)}});
  }

  // From the run's record: its events, and its requests counted per host.
  std::map<std::string, std::uint64_t> per_host;
  for (const auto& e : events) {
    const std::string type = e.value("type", "");
    const std::string host = e.contains("host") && e["host"].is_string() ? e["host"].get<std::string>() : "";
    std::string text = type;
    if (!host.empty()) {
      text += " " + host;
      if (type.rfind("network.", 0) == 0 || type.rfind("request.", 0) == 0) ++per_host[host];
    }
    if (e.contains("path") && e["path"].is_string()) text += " " + e["path"].get<std::string>();
    add(e.value("time", ""),
        {{"t", e.value("time", "")}, {"kind", timeline_kind(type)}, {"text", text}, {"detail", e}});
  }

  std::stable_sort(items.begin(), items.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [ms, item] : items) out.items.push_back(std::move(item));
  for (const auto& [host, n] : per_host) out.hosts.push_back({{"host", host}, {"requests", n}});
  return out;
}

}  // namespace px::report
