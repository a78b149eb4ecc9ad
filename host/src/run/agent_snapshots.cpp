#include "run/agent_snapshots.hpp"

#include "agents/store.hpp"
#include "common/paths.hpp"
#include "killswitch/registry.hpp"
#include "pluginhost/plugin_set.hpp"
#include "report/report.hpp"

namespace px::run {

namespace snap = px::snapshot;

Result<snap::SnapshotInfo> snapshot_agent_home(const std::string& name, const snap::ProgressFn& progress,
                                               std::vector<std::string>& said) {
  PX_TRY_ASSIGN(auto p, agents::find_agent(agents::default_agents_root(), name));
  PX_TRY_ASSIGN(auto store, snap::Store::open(p.snapshots()));
  if (killswitch::agent_has_live_run(parallex_runtime_dir(), name))
    said.push_back("agent " + name + " is running; the snapshot holds its home as it is this moment");
  snap::TakeOptions t;
  t.source = p.home();
  t.label = "by hand";
  t.kind = "manual";
  t.progress = progress;
  return store.take(t);
}

Result<std::vector<snap::SnapshotInfo>> agent_snapshots(const std::string& name) {
  PX_TRY_ASSIGN(auto p, agents::find_agent(agents::default_agents_root(), name));
  // The agent's store is made with the agent; opening it makes its layout if no snapshot was taken yet.
  PX_TRY_ASSIGN(auto store, snap::Store::open(p.snapshots()));
  return store.list();
}

Result<snap::RewindResult> rewind_agent_home(const std::string& name, const std::string& to, bool dry_run,
                                             const snap::ProgressFn& progress) {
  PX_TRY_ASSIGN(auto p, agents::find_agent(agents::default_agents_root(), name));
  PX_TRY_ASSIGN(auto store, snap::Store::open(p.snapshots()));
  PX_TRY_ASSIGN(auto existing, store.list());
  if (existing.empty())
    return Error::not_found("Agent " + name + " has no snapshots yet, so there is nothing to rewind to.");
  snap::RewindOptions r;
  r.source = p.home();
  if (!to.empty()) r.to = to;
  r.is_busy = [name] { return killswitch::agent_has_live_run(parallex_runtime_dir(), name); };
  if (!dry_run) {
    // The rewind takes the transcripts of the runs after the snapshot out of
    // the home, where their reports read them: each run's report keeps a copy first.
    const auto plugins = pluginhost::PluginSet::load_default();
    report::ReportRequest req = report::agent_request(name, p.root);
    req.plugins = &plugins;
    if (auto kept = report::keep_sessions(req); !kept)
      return Error{kept.error().kind, "the transcripts the reports of " + name +
                                          "'s past runs read could not be kept (" + kept.error().message +
                                          "), so nothing was rewound"};
  }
  r.dry_run = dry_run;
  r.progress = progress;
  return store.rewind(r);
}

std::string agent_rewind_hint(const std::string& name) {
  return "parallex agent rewind " + name + " --yes --to ";
}

}  // namespace px::run
