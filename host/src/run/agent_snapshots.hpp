#pragma once
// An agent's home snapshots: `parallex agent snapshot|snapshots|rewind` and
// `parallex ui` (/api/agents/{name}/snapshot, /snapshots, /rewind) call
// these, so both check and do the same. Its signing key and token live
// beside the home, never in it: never snapshotted, kept by a rewind.
#include <string>
#include <vector>

#include "common/error.hpp"
#include "snapshot/snapshot.hpp"

namespace px::run {

// A snapshot of agent `name`'s home now. `said`: a sentence when the agent is
// running (the snapshot holds its home as it is at that moment).
Result<snapshot::SnapshotInfo> snapshot_agent_home(const std::string& name,
                                                   const snapshot::ProgressFn& progress,
                                                   std::vector<std::string>& said);
// Its snapshots, oldest first.
Result<std::vector<snapshot::SnapshotInfo>> agent_snapshots(const std::string& name);
// Puts its home back as snapshot `to` (empty: the newest that is not a
// pre-rewind one) had it; with `dry_run`, only says what would change.
// Refused while the agent runs. Before a real rewind, the reports of its past
// runs keep the transcripts they read (the rewind takes them out of the home).
Result<snapshot::RewindResult> rewind_agent_home(const std::string& name, const std::string& to, bool dry_run,
                                                 const snapshot::ProgressFn& progress);
// The command that rewinds agent `name` to an id, minus the id (for "undo").
std::string agent_rewind_hint(const std::string& name);

}  // namespace px::run
