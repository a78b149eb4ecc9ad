// The kill switch: `parallex pause --all | NAME | RUN-ID`, `parallex resume
// --all | NAME | RUN-ID`, `parallex kill --all | NAME | RUN-ID`. Each asks the runs'
// supervisors over their control sockets; the supervisors hold the pause, so
// only a resume from outside every run undoes it.
#include <cstdio>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "common/paths.hpp"
#include "common/shown.hpp"
#include "killswitch/global_pause.hpp"
#include "killswitch/kill_switch_client.hpp"

namespace px::cli {
namespace {

struct PauseOptions {
  bool all = false;
  bool json = false;
  std::string target;
};

Result<killswitch::RunSelection> selection_of(const PauseOptions& o, const char* verb) {
  if (o.all && !o.target.empty())
    return Error::invalid(std::string("give --all or a run, not both, to ") + verb + ".");
  if (!o.all && o.target.empty())
    return Error::invalid(std::string("say which runs to ") + verb +
                          ": --all, an agent name or a run id (see `parallex runs`).");
  return killswitch::RunSelection{o.all, o.target};
}

int report(const Result<std::vector<killswitch::RunOpOutcome>>& result, const PauseOptions& o,
           const char* done, const std::string& extra) {
  if (!result) return report_error(result.error());
  int status = 0;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : result.value()) {
    if (!r.ok) status = 1;
    rows.push_back({{"id", r.run.id},
                    {"agent", r.run.agent},
                    {"ok", r.ok},
                    {"error", r.error},
                    {"state", r.reply.contains("run") ? r.reply["run"].value("state", "") : ""},
                    {"direct", r.direct}});
    if (o.json) continue;
    if (r.ok)
      std::printf("%s %s%s%s\n", done, shown(r.run.id).c_str(),
                  r.run.agent.empty() ? "" : (" (" + shown(r.run.agent) + ")").c_str(),
                  r.direct.empty() ? "" : (": " + shown(r.direct)).c_str());
    else
      say("run " + r.run.id + ": " + r.error);
  }
  if (o.json)
    print_json({{"runs", rows}, {"note", extra}});
  else if (!extra.empty())
    std::printf("%s\n", extra.c_str());
  return status;
}

int pause(const PauseOptions& o) {
  auto sel = selection_of(o, "pause");
  if (!sel) return report_error(sel.error());
  const auto result = killswitch::pause_runs(parallex_runtime_dir(), sel.value());
  std::string extra;
  if (o.all && result) {
    extra = result.value().empty() ? "no run is going; " : "";
    extra += "new runs start paused until `parallex resume --all`; the network of paused runs is cut";
  }
  return report(result, o, "paused", extra);
}

int resume(const PauseOptions& o) {
  auto sel = selection_of(o, "resume");
  if (!sel) return report_error(sel.error());
  const auto result = killswitch::resume_runs(parallex_runtime_dir(), sel.value());
  std::string extra;
  if (!o.all && result && killswitch::global_pause_since(parallex_runtime_dir()))
    extra = "a global pause is still on: new runs start paused until `parallex resume --all`";
  return report(result, o, "resumed", extra);
}

int kill(const PauseOptions& o) {
  auto sel = selection_of(o, "kill");
  if (!sel) return report_error(sel.error());
  return report(killswitch::kill_runs(parallex_runtime_dir(), sel.value()), o, "killed", "");
}

// `all_help`: what --all does for this verb, in its own words.
Action setup_common(CLI::App& app, const char* all_help, int (*fn)(const PauseOptions&)) {
  auto o = std::make_shared<PauseOptions>();
  app.add_flag("--all", o->all, all_help);
  app.add_flag("--json", o->json, "Print JSON");
  app.add_option("run", o->target, "A run id (or the start of one) or an agent name");
  return [o, fn] { return fn(*o); };
}

Action setup_pause(CLI::App& app, GlobalOptions&) {
  return setup_common(app, "Pause every run, and hold back new ones until `parallex resume --all`", pause);
}
Action setup_resume(CLI::App& app, GlobalOptions&) {
  return setup_common(app, "Resume every run, and let new runs start again (undoes `pause --all`)", resume);
}
Action setup_kill(CLI::App& app, GlobalOptions&) {
  return setup_common(
      app, "Kill every run going now (new runs may still start; `pause --all` holds them back)", kill);
}

}  // namespace

PARALLEX_COMMAND("pause", "Freeze runs and cut their network (--all: every run, and hold back new ones)", 31,
                 setup_pause);
PARALLEX_COMMAND("resume", "Undo a pause (from outside every run)", 32, setup_resume);
PARALLEX_COMMAND("kill", "End a run's whole process tree (--all: every run)", 33, setup_kill);

}  // namespace px::cli
