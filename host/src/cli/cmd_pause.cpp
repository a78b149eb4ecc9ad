// The kill switch: `parallex pause --all | NAME | RUN-ID`, `parallex resume
// --all | NAME | RUN-ID`, `parallex kill --all | NAME | RUN-ID`. Each asks the runs'
// supervisors over their control sockets; the supervisors hold the pause, so
// only a resume from outside every run undoes it.
#include <cstdio>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "common/paths.hpp"
#include "common/shown.hpp"
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

// `verb` is the operation ("pause", "resume", "kill"); `done` how a run acted on is said.
int act(const PauseOptions& o, const char* verb, const char* done) {
  auto sel = selection_of(o, verb);
  if (!sel) return report_error(sel.error());
  const auto result = killswitch::kill_switch_act(parallex_runtime_dir(), verb, sel.value());
  if (!result) return report_error(result.error());
  const auto& d = result.value();
  if (o.json) {
    print_json(d.json);
    return d.all_ok ? 0 : 1;
  }
  for (const auto& r : d.outcomes) {
    if (r.ok)
      std::printf("%s %s%s%s\n", done, shown(r.run.id).c_str(),
                  r.run.agent.empty() ? "" : (" (" + shown(r.run.agent) + ")").c_str(),
                  r.direct.empty() ? "" : (": " + shown(r.direct)).c_str());
    else
      say("run " + r.run.id + ": " + r.error);
  }
  if (!d.note.empty()) std::printf("%s\n", d.note.c_str());
  return d.all_ok ? 0 : 1;
}

int pause(const PauseOptions& o) {
  return act(o, "pause", "paused");
}
int resume(const PauseOptions& o) {
  return act(o, "resume", "resumed");
}
int kill(const PauseOptions& o) {
  return act(o, "kill", "killed");
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
