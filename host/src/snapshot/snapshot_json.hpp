#pragma once
// A snapshot and a rewind as JSON: what `parallex snapshot|agent snapshot|
// snapshots|rewind --json` print and `parallex ui` serves, from one place.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "snapshot/snapshot.hpp"

namespace px::snapshot {

// "2026-12-06 14:00:00", local time.
std::string local_time(std::int64_t ns);
// {id, time, time_ns, kind, label, files, entries, bytes, new_bytes, incomplete, warnings}
nlohmann::json info_json(const SnapshotInfo& info);
// {dry_run, target, undo_snapshot, undo_command, changes, files_written,
// entries_removed, warnings}; `undo_hint`: the command that rewinds to an id, minus the id.
nlohmann::json rewind_json(const RewindResult& result, bool dry_run, const std::string& undo_hint);

}  // namespace px::snapshot
