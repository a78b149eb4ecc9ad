// `parallex report --agent NAME [--run ID | --last | --since TIME] [--json | --html FILE]`
// (`parallex agent report NAME ...` is the same command): what an agent did in
// its runs, from its transcripts, its proxy log and git. `--runs-dir DIR` reads
// the records of ad-hoc runs instead of an agent's.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <memory>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/report_cli.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"
#include "report/report.hpp"
#include "report/time_text.hpp"
#include "report/views.hpp"
#include "run/stage.hpp"

namespace px::cli {
namespace {

struct ReportOptions {
  std::string agent;
  std::string runs_dir;
  std::string home;
  std::string run_id;
  bool last = false;
  std::string since;
  bool json = false;
  std::string html;
};

bool plain_name(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name.front() != '.';
}

Status write_html(const fs::path& file, const std::string& page) {
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << page;
    if (!out) return Error::io("write the report to " + tmp.string(), errno);
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) return Error::io("write the report to " + file.string(), ec.value());
  return ok();
}

int run(const ReportOptions& o) {
  report::ReportRequest req;
  if (!o.agent.empty()) {
    if (!plain_name(o.agent))
      return report_error(Error::invalid("\"" + o.agent + "\" is not an agent name."));
    const fs::path root = parallex_data_dir() / "agents" / o.agent;
    std::error_code ec;
    if (!fs::is_directory(root, ec))
      return report_error(Error::not_found("There is no agent named " + o.agent + " (no folder " +
                                           root.string() + "); `parallex agent list` shows the agents."));
    req = report::agent_request(o.agent, root);
    if (!o.runs_dir.empty()) {
      req.runs_dir = o.runs_dir;
      req.older_runs_dirs.clear();
    }
  } else if (!o.runs_dir.empty()) {
    req.runs_dir = o.runs_dir;
  } else {
    // The ad-hoc runs (`parallex run`), and those an older Parallex recorded under the data folder.
    req.runs_dir = run::adhoc_runs_dir();
    req.older_runs_dirs.push_back(parallex_data_dir() / "runs");
  }
  if (!o.home.empty()) req.home = fs::path(o.home);
  if (!o.run_id.empty()) req.selection.run_id = o.run_id;
  if (!o.since.empty()) {
    auto since = report::parse_since(o.since, report::now_ms());
    if (!since) return report_error(since.error());
    req.selection.since_ms = since.value();
  }
  req.selection.last = o.last || (o.run_id.empty() && o.since.empty());
  const auto plugins = pluginhost::PluginSet::load_default();
  req.plugins = &plugins;

  const report::Json rep = report::build_report(req);
  for (const auto& p : rep["problems"]) say(p.get<std::string>());
  // A run asked for and not found is an error; missing sources are not (they are marked).
  const bool nothing_found = rep["runs"].empty() && !rep["problems"].empty();
  if (nothing_found && !o.json) return 3;  // said above, once; no empty report after it
  if (o.json) {
    std::printf("%s\n", to_json_text(rep, 2).c_str());
  } else if (!o.html.empty()) {
    if (auto written = write_html(o.html, report::render_html(rep)); !written)
      return report_error(written.error());
    std::printf("wrote the report of %zu run(s) to %s\n", rep["runs"].size(), redact(o.html).c_str());
  } else {
    std::fputs(report::render_terminal(rep, colour_on_stdout()).c_str(), stdout);
  }
  return nothing_found ? 3 : 0;
}

}  // namespace

namespace report_cmd {

Action setup_report(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  auto* agent = app.add_option("--agent", o->agent, "The agent whose runs to report");
  app.add_option("name", o->agent, "The agent (same as --agent)")->excludes(agent);
  app.add_option(
      "--runs-dir", o->runs_dir,
      "A folder of run records (RUN-ID/run.json); without it and without an agent, the ad-hoc runs");
  app.add_option("--home", o->home, "Where to look for the harness transcripts (default: the run's home)");
  auto* run_id = app.add_option("--run", o->run_id, "One run, by id");
  auto* last = app.add_flag("--last", o->last, "The last run (the default)");
  auto* since =
      app.add_option("--since", o->since, "Every run since TIME (2026-11-29, 2026-11-29T14:00Z, or 2h, 3d)");
  run_id->excludes(last)->excludes(since);
  last->excludes(since);
  auto* json = app.add_flag("--json", o->json, "Print the report as JSON (docs/reports.md)");
  app.add_option("--html", o->html, "Write the report as one self-contained HTML page to FILE")
      ->excludes(json);
  return [o] { return run(*o); };
}

}  // namespace report_cmd

namespace {

Action setup_report(CLI::App& app, GlobalOptions&) {
  return report_cmd::setup_report(app);
}

}  // namespace

PARALLEX_COMMAND("report", "What an agent did in its runs: files, commands, hosts, commits", 22,
                 setup_report);
PARALLEX_SUBCOMMAND("agent", "report", "What the agent did in its runs: files, commands, hosts, commits", 40,
                    report_cmd::setup_report);

}  // namespace px::cli
