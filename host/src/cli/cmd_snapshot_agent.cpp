// `parallex agent snapshot|snapshots|rewind NAME`: the snapshot store of an
// agent's home (its git and gh settings, sign-ins, harness config and
// history). Its signing key and token live beside the home, never in it, so
// they are never snapshotted and a rewind keeps the ones it has.
#include <unistd.h>

#include <memory>
#include <optional>

#include "agents/store.hpp"
#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/snapshot_output.hpp"
#include "common/paths.hpp"
#include "run/agent_snapshots.hpp"
#include "snapshot/snapshot.hpp"

namespace px::cli {
namespace {

namespace snap = px::snapshot;
using namespace snapshot_output;

int do_snapshot(const std::string& name, bool json) {
  ProgressBar bar;
  std::vector<std::string> said;
  auto r = run::snapshot_agent_home(name, bar.fn(), said);
  bar.clear();
  for (const auto& line : said) say(line);
  if (!r) return report_error(r.error());
  print_taken(r.value(), json);
  return 0;
}

struct ListOptions {
  std::string name;
  bool json = false, prune = false;
  std::optional<std::size_t> keep;
};

int do_snapshots(const ListOptions& o) {
  if (o.prune != o.keep.has_value())
    return report_error(Error::invalid("--prune and --keep N go together: `parallex agent snapshots " +
                                       o.name + " --prune --keep N` keeps the newest N."));
  if (o.prune) {
    auto p = agents::find_agent(agents::default_agents_root(), o.name);
    if (!p) return report_error(p.error());
    auto store = snap::Store::open(p.value().snapshots());
    if (!store) return report_error(store.error());
    auto r = store.value().prune(*o.keep);
    if (!r) return report_error(r.error());
    print_prune(r.value(), o.json);
    return 0;
  }
  auto list = run::agent_snapshots(o.name);
  if (!list) return report_error(list.error());
  print_list(list.value(), o.json,
             "Agent " + o.name + " has no snapshots yet; one is taken before every `parallex agent run`.");
  return 0;
}

struct RewindOptions {
  std::string name, to;
  bool dry_run = false, yes = false, json = false;
};

int do_rewind(const RewindOptions& o) {
  const std::string what = "agent " + o.name + "'s home";
  std::string to = o.to;
  // A rewind replaces files in the agent's home: at a terminal it shows what
  // it would replace and asks (as the MCP tool does); elsewhere it needs --yes.
  if (!o.dry_run && !o.yes) {
    // The dry run first: no agent or no snapshot is said before there being no terminal.
    auto preview = run::rewind_agent_home(o.name, to, true, {});
    if (!preview) return report_error(preview.error());
    if (!::isatty(STDIN_FILENO))
      return report_error(
          Error::invalid("`parallex agent rewind " + o.name + "` replaces files in " + what +
                         " and there is no terminal to ask, so nothing was changed. Add --yes to "
                         "rewind, or --dry-run to see what it would change."));
    std::fprintf(stderr, "Rewinding %s to snapshot %s: %s", what.c_str(), preview.value().target_id.c_str(),
                 rewind_preview(preview.value(), 10).c_str());
    if (!confirm("Rewind it? The state before is kept as a snapshot you can rewind back to.", false)) {
      say(what + " was not rewound.");
      return 1;
    }
    to = preview.value().target_id;  // the snapshot shown, even if another was taken meanwhile
  }
  ProgressBar bar;
  auto res = run::rewind_agent_home(o.name, to, o.dry_run, bar.fn());
  bar.clear();
  if (!res) return report_error(res.error());
  print_rewind(res.value(), o.dry_run, what, run::agent_rewind_hint(o.name), o.json);
  return 0;
}

Action setup_snapshot(CLI::App& app) {
  auto name = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  app.add_option("name", *name, "The agent")->required();
  app.add_flag("--json", *json, "Print the snapshot as JSON");
  return [name, json] { return do_snapshot(*name, *json); };
}

Action setup_snapshots(CLI::App& app) {
  auto o = std::make_shared<ListOptions>();
  app.add_option("name", o->name, "The agent")->required();
  app.add_flag("--json", o->json, "Print JSON");
  app.add_flag("--prune", o->prune, "Remove all but the newest --keep N snapshots and free their space");
  app.add_option("--keep", o->keep, "How many snapshots --prune keeps")->check(CLI::Range(0, 1000000));
  return [o] { return do_snapshots(*o); };
}

Action setup_rewind(CLI::App& app) {
  auto o = std::make_shared<RewindOptions>();
  app.add_option("name", o->name, "The agent")->required();
  app.add_option("--to", o->to,
                 "Snapshot id or unique prefix (default: the newest that is not a pre-rewind one)");
  app.add_flag("--dry-run", o->dry_run, "Only list what would change");
  app.add_flag("--yes,-y", o->yes, "Do not ask (needed where there is no terminal)");
  app.add_flag("--json", o->json, "Print what changed (or would) as JSON");
  return [o] { return do_rewind(*o); };
}

}  // namespace

PARALLEX_SUBCOMMAND("agent", "snapshot", "Snapshot an agent's home now (one is taken before every run)", 30,
                    setup_snapshot);
PARALLEX_SUBCOMMAND("agent", "snapshots", "List an agent's snapshots, or prune them (--prune --keep N)", 31,
                    setup_snapshots);
PARALLEX_SUBCOMMAND("agent", "rewind", "Put an agent's home back as a snapshot had it (undoable)", 32,
                    setup_rewind);

}  // namespace px::cli
