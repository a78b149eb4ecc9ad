// `parallex demo`: a sealed run with the embedded default profile that tries
// ordinary work and a series of ways out, then shows which were allowed and
// which the seal refused. A run of the real thing, not a simulation: a shell
// script inside the seal does each step, with the seal's probes where one
// says the step exactly.
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "agents/git_config.hpp"
#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/run_command.hpp"
#include "common/paths.hpp"

namespace px::cli {
namespace {

// How a step's outcome is judged. Most by the step's exit status inside; the
// two that touch the home on the host, because a home under /tmp (a CI
// machine's, a container's) names the run's own /tmp inside the seal, where
// a write succeeds and a listing shows only the view's own folders.
enum class Judge {
  inside,        // exit 0 = it worked
  home_listing,  // it worked if the listing shows every entry the home really has
  home_file,     // it worked if the file appeared in the real home
};

// A step is a probe of the seal's catalog (probes/catalog.hpp: the one
// `check --sealed` and the escape suite try) where one says it exactly, or a
// shell line where the shell is the thing tried: a user's own tools (git,
// curl through the proxy, sudo, ls, cat of a glob) and what only the shell
// says (a comparison of /proc/1/comm).
struct Step {
  const char* label;
  bool expect_allowed;
  const char* probe;  // the catalog's probe, run as `parallex check --probe PROBE ARGS`
  const char* args;   // the probe's arguments, or the shell line (sh -c); exit 0 = it worked
  Judge judge = Judge::inside;
};

constexpr const char* kHomeListing = ".demo-home-listing";
constexpr const char* kHomeFile = "parallex-demo-escape";

// Hosts: the npm registry is reachable wherever Parallex is built (its tests
// install clients from it); example.com is outside the demo's rule.
constexpr const char* kAllowedHost = "registry.npmjs.org";

constexpr const char* kShell = nullptr;

const Step kSteps[] = {
    {"write a file in the run folder", true, kShell, "echo hello > notes.txt"},
    {"commit with git in the run folder", true, kShell,
     "git add notes.txt && git -c user.name=demo -c user.email=demo@example.com commit -qm demo"},
    {"read a system file (/etc/os-release)", true, kShell, "cat /etc/os-release"},
    {"run a program from /usr/bin", true, kShell, "/usr/bin/env true"},
    {"write in the run's private /tmp", true, kShell, "echo x > /tmp/scratch && cat /tmp/scratch"},
    {"reach registry.npmjs.org through the run's proxy", true, kShell,
     "curl -sS -o /dev/null --max-time 15 https://registry.npmjs.org/"},
    {"list your home folder", false, kShell, "ls -A \"$HOME\" > .demo-home-listing", Judge::home_listing},
    // Every key there, whatever its name: a glob the shell expands.
    {"read your SSH keys (~/.ssh)", false, kShell, "cat \"$HOME\"/.ssh/*"},
    {"write a file in your home folder", false, "write", "\"$HOME/parallex-demo-escape\"", Judge::home_file},
    {"write outside the run folder (/usr/local/bin)", false, "write", "/usr/local/bin/parallex-demo"},
    {"plant a git hook (.git/hooks/pre-commit)", false, "write", ".git/hooks/pre-commit"},
    {"rewrite .git/config", false, "write", ".git/config"},
    {"move .git aside to plant another", false, "rename", ".git .git-moved"},
    {"connect straight to the internet (1.1.1.1:443)", false, "tcp", "1.1.1.1 443"},
    {"look up a name without the proxy", false, "resolve", "example.com"},
    {"reach example.com, outside the rule, through the proxy", false, kShell,
     "curl -sS -o /dev/null --max-time 15 https://example.com/"},
    {"see a process outside the run (pid 1 of the machine)", false, kShell,
     "test \"$(cat /proc/1/comm)\" != parallex && test \"$(cat /proc/1/comm)\" != sh"},
    {"gain privileges with sudo", false, kShell, "sudo -n true"},
    {"undo the seal from a new user namespace", false, "unshare-user", ""},
};

Result<fs::path> prepare_demo_folder() {
  const fs::path folder = parallex_scratch_dir() / "demo" / "run-folder";
  std::error_code ec;
  fs::remove_all(folder, ec);
  fs::create_directories(folder, ec);
  if (ec) return Error::io("cannot create the demo folder " + folder.string(), ec.value());
  const std::string init =
      "cd '" + folder.string() +
      "' && git init -q && git -c user.name=demo -c user.email=demo@example.com commit -q "
      "--allow-empty -m start";
  if (std::system(init.c_str()) != 0)
    return Error::unsupported("the demo needs git to make its run folder; install git (apt-get install git)");
  std::ofstream script(folder / "probe.sh");
  script << "#!/bin/sh\n# Each step: what the run tries. The seal decides.\n"
         << "probe() { " << agents::shell_quote(parallex_executable().string())
         << " check --probe \"$@\"; }\n";
  int i = 0;
  for (const auto& step : kSteps) {
    const std::string tried = step.probe ? std::string("probe ") + step.probe + " " + step.args : step.args;
    script << "if ( " << tried << " ) >/dev/null 2>&1; then echo " << i << " ok; else echo " << i
           << " no; fi >> results.txt\n";
    ++i;
  }
  return folder;
}

int run_demo() {
  auto folder = prepare_demo_folder();
  if (!folder) return report_error(folder.error());
  // The folder is the demo's own: gone when the demo ends, whatever the
  // outcome (its record keeps what the run did).
  struct RemovedAtEnd {
    fs::path folder;
    ~RemovedAtEnd() {
      std::error_code ec;
      fs::remove_all(folder, ec);
      fs::remove(folder.parent_path(), ec);  // scratch/demo, when nothing else is in it
    }
  } removed_at_end{folder.value()};

  std::error_code ec;
  const fs::path home = user_home();
  const bool home_file_before = fs::exists(home / kHomeFile, ec);
  run::RunInputs inputs;
  inputs.kind = run::RunKind::demo;
  inputs.options.in = folder.value().string();
  inputs.options.allow = {kAllowedHost};
  // The probes are parallex itself (check --probe), read-only as for check --sealed.
  inputs.options.grants.push_back(parallex_executable().string() + ":ro");
  inputs.command = {"/bin/sh", "probe.sh"};
  std::printf("Parallex demo: a sealed run with the default profile, allowing %s\n", kAllowedHost);
  std::printf("  run folder  %s\n\n", folder.value().c_str());
  fs::path record_dir;
  RunCommandHooks hooks;
  hooks.finished = [&record_dir](const supervisor::RunResult& r) { record_dir = r.record_dir; };
  const int status = run_command(std::move(inputs), hooks);
  if (record_dir.empty()) return status;

  std::ifstream results(folder.value() / "results.txt");
  std::vector<int> seen(std::size(kSteps), -1);
  for (std::string line; std::getline(results, line);) {
    std::istringstream in(line);
    std::size_t index = 0;
    std::string verdict;
    if (in >> index >> verdict && index < seen.size()) seen[index] = verdict == "ok" ? 1 : 0;
  }
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (seen[i] != 1) continue;
    if (kSteps[i].judge == Judge::home_file) {
      // Seen from the host: a file the run wrote in its own view only is not in the home.
      if (home_file_before || !fs::exists(home / kHomeFile, ec))
        seen[i] = 0;
      else
        fs::remove(home / kHomeFile, ec);  // a hole: said below, and the home left as it was
    } else if (kSteps[i].judge == Judge::home_listing) {
      std::set<std::string> listed;
      std::ifstream in(folder.value() / kHomeListing);
      for (std::string name; std::getline(in, name);) listed.insert(name);
      for (fs::directory_iterator it(home, ec), end; !ec && it != end; it.increment(ec))
        if (!listed.count(it->path().filename().string())) seen[i] = 0;
    }
  }
  int surprises = 0;
  std::printf("%-58s %-9s %s\n", "WHAT THE RUN TRIED", "RESULT", "");
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const auto& step = kSteps[i];
    const char* result = seen[i] < 0 ? "not run" : seen[i] ? "allowed" : "refused";
    const bool as_expected = seen[i] >= 0 && (seen[i] == 1) == step.expect_allowed;
    if (!as_expected) ++surprises;
    std::printf("%-58s %-9s %s\n", step.label, result,
                as_expected           ? ""
                : step.expect_allowed ? "(expected allowed: see below)"
                                      : "(EXPECTED REFUSED)");
  }
  std::printf("\nRun record: %s\n", record_dir.c_str());
  if (surprises) {
    std::printf(
        "\n%d step(s) did not go as expected. An allowed step can fail for reasons outside the seal "
        "(no network on this machine, curl or git missing); a refused step that was allowed is a hole: "
        "see `parallex check`.\n",
        surprises);
    return 1;
  }
  std::printf("\nEvery way out was refused, and the ordinary work was allowed.\n");
  return 0;
}

Action setup_demo(CLI::App&, GlobalOptions&) {
  return [] { return run_demo(); };
}

}  // namespace

PARALLEX_COMMAND("demo", "Run a sealed demo: ordinary work allowed, ways out refused", 1, setup_demo);

}  // namespace px::cli
