// `parallex runs [--json]`: the live runs of this user (id, agent, command,
// pid, state, since), from the registry; entries of dead supervisors are
// cleaned up on the way, and so are the records they left without an end
// (closed as lost, their end marked unknown).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "common/shown.hpp"
#include "killswitch/control_socket.hpp"
#include "killswitch/direct_control.hpp"
#include "killswitch/registry.hpp"
#include "protect/home_settings.hpp"
#include "protect/unswept.hpp"
#include "run/private_dir.hpp"
#include "run/record.hpp"
#include "run/runs_folders.hpp"
#include "run/runs_listing.hpp"
#include "run/stage.hpp"

namespace px::cli {
namespace {

namespace fs = std::filesystem;

struct RunsOptions {
  bool json = false;
};

struct ApplyOptions {
  std::string id;
  bool yes = false;
  bool dry_run = false;
};

std::string join_command(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

int run(const RunsOptions& o) {
  const auto listing = run::list_live_runs();
  for (const auto& line : listing.said) say(line);
  if (o.json) {
    print_json(listing.json);
    return 0;
  }
  const auto& rows = listing.json["runs"];
  if (rows.empty()) {
    std::printf("no run is going\n");
    return 0;
  }
  std::printf("%-26s %-14s %-8s %-9s %-6s %-20s %s\n", "ID", "AGENT", "PID", "STATE", "PROCS", "SINCE",
              "COMMAND");
  for (const auto& r : rows) {
    const std::string agent = r.value("agent", "");
    // What the registry holds came from the run's supervisor: shown, as every name (common/shown.hpp).
    std::printf("%-26s %-14s %-8d %-9s %-6s %-20s %s\n", shown(r.value("id", "")).c_str(),
                agent.empty() ? "-" : shown(agent).c_str(), r.value("pid", 0),
                shown(r.value("state", "")).c_str(),
                r.contains("processes") ? std::to_string(r["processes"].get<int>()).c_str() : "?",
                shown(r.value("since", "")).c_str(),
                redact(shown(join_command(r.value("command", std::vector<std::string>{})))).c_str());
    if (r.contains("supervisor"))
      std::printf(
          "  its supervisor (pid %d) %s: `parallex pause`, `resume` and `kill` act on the run without it\n",
          r.value("pid", 0), r.value("supervisor", "").c_str());
  }
  return 0;
}

// The record folder of run `id`, in any runs folder of this user.
std::optional<fs::path> find_run(const std::string& id) {
  if (id.empty() || id.size() > 64 ||
      id.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyz-") != std::string::npos)
    return std::nullopt;
  std::error_code ec;
  for (const auto& folder : run::every_runs_folder())
    if (fs::is_regular_file(folder.dir / id / "run.json", ec)) return folder.dir / id;
  return std::nullopt;
}

bool ask(const std::string& question) {
  std::fprintf(stderr, "%s [y/N] ", question.c_str());
  std::fflush(stderr);
  char line[16] = {};
  if (!std::fgets(line, sizeof line, stdin)) return false;
  return line[0] == 'y' || line[0] == 'Y';
}

// `parallex runs apply ID`: the changes a run made to a harness's
// command-running settings in your home, held back at its end
// (protect/home_settings.hpp), shown and, once you agree, applied.
int apply(const ApplyOptions& o) {
  const auto dir = find_run(o.id);
  if (!dir) {
    say("no run " + o.id + " (see `parallex report --last` for the latest run's id)");
    return 2;
  }
  auto record = run::read_record(*dir);
  if (!record) {
    say(record.error().message);
    return 1;
  }
  std::vector<run::HeldChange> changes = record.value().home_changes;
  const auto pending =
      std::count_if(changes.begin(), changes.end(), [](const auto& c) { return c.applied_at.empty(); });
  if (pending == 0) {
    std::printf("run %s holds no change to apply%s\n", shown(o.id).c_str(),
                changes.empty() ? "" : " (every change it held was applied)");
    return 0;
  }
  for (const auto& c : changes) {
    if (!c.applied_at.empty()) continue;
    // What a run wrote, and the record it is read from: shown (common/shown.hpp).
    std::printf("%s (%s%s):\n", shown(c.path.string()).c_str(), shown(c.what).c_str(),
                c.reason.empty() ? "" : ("; " + shown(c.reason)).c_str());
    for (const auto& line : protect::preview_held_change(*dir, c)) std::printf("  %s\n", shown(line).c_str());
    if (!c.note.empty()) std::printf("  (%s)\n", redact(shown(c.note)).c_str());
  }
  if (o.dry_run) return 0;
  if (!o.yes) {
    if (::isatty(0) != 1) {
      say("nothing applied: confirm with --yes (no terminal to ask)");
      return 1;
    }
    if (!ask("Apply these changes to your home? The harness runs them the next time it starts")) {
      say("nothing applied");
      return 1;
    }
  }
  int status = 0;
  for (auto& c : changes) {
    if (!c.applied_at.empty()) continue;
    auto done = protect::apply_held_change(*dir, c, false);
    if (!done) {
      say(done.error().message);
      status = 1;
      continue;
    }
    for (const auto& line : done.value()) std::printf("%s\n", shown(line).c_str());
  }
  auto written = run::update_record(*dir, [&](run::RunRecord& r) {
    r.home_changes = changes;
    return true;
  });
  if (!written) {
    say(written.error().message);
    return 1;
  }
  return status;
}

Action setup_runs(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<RunsOptions>();
  app.add_flag("--json", o->json, "Print JSON");
  auto a = std::make_shared<ApplyOptions>();
  CLI::App* sub = app.add_subcommand(
      "apply",
      "Show and apply what a run changed in a harness's command-running settings (held back at its end)");
  sub->add_option("id", a->id, "The run's id (printed at its end)")->required();
  sub->add_flag("--yes,-y", a->yes, "Apply without asking");
  sub->add_flag("--dry-run", a->dry_run, "Only show what would change");
  return [o, a, sub] { return sub->parsed() ? apply(*a) : run(*o); };
}

}  // namespace

PARALLEX_COMMAND("runs", "List the runs going now (id, agent, command, pid, state, since)", 30, setup_runs);

}  // namespace px::cli
