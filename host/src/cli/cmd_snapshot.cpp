// `parallex snapshot take|list|rewind|prune`: the snapshot store by hand. The
// `agent snapshot/snapshots/rewind` commands wrap the same library calls with
// the agent's home, store and busy check filled in.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/snapshot_output.hpp"
#include "common/redact.hpp"
#include "snapshot/manifest.hpp"
#include "snapshot/snapshot.hpp"

namespace px::cli {
namespace {

namespace snap = px::snapshot;

using namespace snapshot_output;

struct SnapshotOptions {
  std::string source, store, label, to;
  std::vector<std::string> excludes;
  bool json = false, dry_run = false;
  std::size_t keep = 0;
};

int do_take(const SnapshotOptions& o) {
  if (auto st = snap::check_store_location(o.source, o.store); !st) return report_error(st.error());
  auto store = snap::Store::open(o.store);
  if (!store) return report_error(store.error());
  ProgressBar bar;
  snap::TakeOptions t;
  t.source = o.source;
  t.excludes = o.excludes;
  t.label = o.label;
  t.progress = bar.fn();
  auto r = store.value().take(t);
  bar.clear();
  if (!r) return report_error(r.error());
  print_taken(r.value(), o.json);
  return 0;
}

int do_list(const SnapshotOptions& o) {
  auto store = snap::Store::open(o.store, false);
  if (!store) return report_error(store.error());
  auto list = store.value().list();
  if (!list) return report_error(list.error());
  print_list(list.value(), o.json, "No snapshots in " + o.store + ".");
  return 0;
}

int do_rewind(const SnapshotOptions& o) {
  auto store = snap::Store::open(o.store, false);
  if (!store) return report_error(store.error());
  ProgressBar bar;
  snap::RewindOptions r;
  r.source = o.source;
  if (!o.to.empty()) r.to = o.to;
  r.dry_run = o.dry_run;
  r.excludes = o.excludes;
  r.progress = bar.fn();
  auto res = store.value().rewind(r);
  bar.clear();
  if (!res) return report_error(res.error());
  print_rewind(res.value(), o.dry_run, o.source,
               "parallex snapshot rewind --source " + o.source + " --store " + o.store + " --to ", o.json);
  return 0;
}

int do_prune(const SnapshotOptions& o) {
  auto store = snap::Store::open(o.store, false);
  if (!store) return report_error(store.error());
  auto r = store.value().prune(o.keep);
  if (!r) return report_error(r.error());
  print_prune(r.value(), o.json);
  return 0;
}

Action setup_snapshot(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<SnapshotOptions>();
  app.require_subcommand(1);
  auto* take = app.add_subcommand("take", "Snapshot a folder into a store");
  take->add_option("--source", o->source, "Folder to snapshot")->required();
  take->add_option("--store", o->store, "Snapshot store folder (outside the source)")->required();
  take->add_option("--exclude", o->excludes, "Relative path never read nor stored (repeatable)");
  take->add_option("--label", o->label, "Free text kept with the snapshot, e.g. the run id");
  take->add_flag("--json", o->json, "Print the snapshot as JSON");
  auto* list = app.add_subcommand("list", "List the snapshots in a store");
  list->add_option("--store", o->store, "Snapshot store folder")->required();
  list->add_flag("--json", o->json, "Print JSON");
  auto* rewind = app.add_subcommand("rewind", "Put a folder back as it was in a snapshot");
  rewind->add_option("--source", o->source, "Folder to rewind")->required();
  rewind->add_option("--store", o->store, "Snapshot store folder")->required();
  rewind->add_option("--to", o->to,
                     "Snapshot id or unique prefix (default: newest that is not a pre-rewind one)");
  rewind->add_option("--exclude", o->excludes, "Relative path left untouched (repeatable)");
  rewind->add_flag("--dry-run", o->dry_run, "Only list what would change");
  rewind->add_flag("--json", o->json, "Print what changed (or would) as JSON");
  auto* prune = app.add_subcommand("prune", "Keep the newest N snapshots and free unused space");
  prune->add_option("--store", o->store, "Snapshot store folder")->required();
  prune->add_option("--keep", o->keep, "How many snapshots to keep")
      ->required()
      ->check(CLI::Range(0, 1000000));
  prune->add_flag("--json", o->json, "Print what was removed as JSON");
  return [o, take, list, rewind, prune]() -> int {
    if (take->parsed()) return do_take(*o);
    if (list->parsed()) return do_list(*o);
    if (rewind->parsed()) return do_rewind(*o);
    if (prune->parsed()) return do_prune(*o);
    return 2;
  };
}

}  // namespace

PARALLEX_COMMAND("snapshot", "Take, list, rewind and prune snapshots of a folder", 60, setup_snapshot);

}  // namespace px::cli
