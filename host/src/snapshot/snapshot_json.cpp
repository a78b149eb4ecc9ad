#include "snapshot/snapshot_json.hpp"

#include <ctime>

namespace px::snapshot {

std::string local_time(std::int64_t ns) {
  std::time_t t = static_cast<std::time_t>(ns / 1000000000);
  struct tm tm {};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

nlohmann::json info_json(const SnapshotInfo& i) {
  return {{"id", i.id},
          {"time", local_time(i.time_ns)},
          {"time_ns", i.time_ns},
          {"kind", i.kind},
          {"label", i.label},
          {"files", i.files},
          {"entries", i.entries},
          {"bytes", i.bytes},
          {"new_bytes", i.new_bytes},
          {"incomplete", i.incomplete},
          {"warnings", i.warnings}};
}

nlohmann::json rewind_json(const RewindResult& v, bool dry_run, const std::string& undo_hint) {
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : v.changes)
    changes.push_back({{"kind", to_string(c.kind)}, {"path", c.path}, {"note", c.note}});
  return {{"dry_run", dry_run},
          {"target", v.target_id},
          {"undo_snapshot", v.undo_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.undo_id)},
          {"undo_command", v.undo_id.empty() ? "" : undo_hint + v.undo_id},
          {"changes", changes},
          {"files_written", v.files_written},
          {"entries_removed", v.entries_removed},
          {"warnings", v.warnings}};
}

}  // namespace px::snapshot
