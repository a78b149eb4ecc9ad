// The seal on a real agent's day, through the real `parallex` executable
// (issue 16): files other programs run later that a run makes are moved
// aside into its record, .git's other doors are checked, ordinary work runs
// inside (git's everyday commands, npm against the registry, a variable
// passed on purpose), and bad input is refused before anything is made.
// Part of the escape suite, so it runs as root and again as pxtest.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "run_folder_test.hpp"
#include "test_paths.hpp"

namespace {

using namespace px::test;

// Item 1: what a run makes where other programs look later is moved aside,
// nothing is deleted, the user is told what it held (redacted), the record
// and the report keep it.
TEST_F(EscapeFrontDoor, FilesOtherProgramsRunLaterAreMovedAsideIntoTheRecord) {
  const std::string token = "ghp_" + std::string(36, 'A');
  const Ran r =
      px("run -- sh -c " +
         quote("mkdir -p .vscode .claude .husky && printf '{\"label\": \"" + token +
               "\"}' > .vscode/tasks.json && echo '{\"mcpServers\": {}}' > .mcp.json && "
               "echo '{\"hooks\": {}}' > .claude/settings.json && echo 'npm test' > .husky/pre-commit && "
               "mkdir -p .claude/worktrees && echo kept > notes.txt && echo kept > .claude/worktrees/x && "
               "sleep 0.3"));
  ASSERT_EQ(r.status, 0) << r.err;
  // Ordinary work stays; what other programs run is gone from the folder.
  EXPECT_EQ(read_text(repo_ / "notes.txt"), "kept\n");
  EXPECT_EQ(read_text(repo_ / ".claude/worktrees/x"), "kept\n");
  for (const char* gone : {".vscode", ".mcp.json", ".claude/settings.json", ".husky"})
    EXPECT_FALSE(fs::exists(fs::symlink_status(repo_ / gone))) << gone << " stayed in the run folder";
  // Kept in the record folder, said on the terminal, listed in run.json.
  const fs::path q = last_run() / "quarantine";
  EXPECT_NE(read_text(q / ".vscode/tasks.json").find(token), std::string::npos) << "nothing is deleted";
  EXPECT_EQ(read_text(q / ".mcp.json"), "{\"mcpServers\": {}}\n");
  EXPECT_NE(r.err.find("moved aside .vscode"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(token), std::string::npos) << "the preview is redacted";
  const json rec = last_record();
  ASSERT_TRUE(rec.contains("quarantined")) << rec.dump(2);
  std::set<std::string> paths;
  for (const auto& e : rec["quarantined"])
    paths.insert(fs::path(e["path"].get<std::string>()).lexically_relative(repo_));
  EXPECT_EQ(paths, (std::set<std::string>{".vscode", ".mcp.json", ".claude/settings.json", ".husky"}));
  EXPECT_EQ(rec.dump().find(token), std::string::npos) << "a secret reached the record";
  EXPECT_NE(rec.dump().find("[REDACTED"), std::string::npos);
  // The report shows it.
  const Ran report = px("report --runs-dir " + quote((root_ / "data/runs").string()) + " --last --json");
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("\"quarantined\""), std::string::npos);
  EXPECT_NE(report.out.find(".mcp.json"), std::string::npos);
}

// While the run goes on (protect/project_watch.hpp): a file other programs
// run is gone from the folder within moments, not only at the run's end.
TEST_F(EscapeFrontDoor, WhatARunMakesThereIsMovedAsideWhileItRuns) {
  const Ran r = px("run -- sh -c " +
                   quote("echo '{}' > .mcp.json; i=0; while [ -e .mcp.json ] && [ $i -lt 100 ]; do "
                         "sleep 0.05; i=$((i+1)); done; [ -e .mcp.json ] && echo STILL || echo GONE"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "GONE\n") << r.err;
  EXPECT_NE(r.err.find("moved aside .mcp.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("during the run"), std::string::npos) << r.err;
  EXPECT_EQ(read_text(last_run() / "quarantine/.mcp.json"), "{}\n");
}

// Parallex's own files in the project: a run that could write the config
// could turn the seal off for the workspaced runs after it, and the token is
// the supervisor's to hold. Read-only, denied, moved aside when made.
TEST_F(EscapeFrontDoor, ParallexsProjectFilesCannotBeChangedReadOrPlanted) {
  const std::string token = "ghp_" + std::string(36, 'B');
  write_text(repo_ / ".parallex/config.yaml", "allow: [registry.npmjs.org]\n");
  write_text(repo_ / ".parallex/github-token", token + "\n");
  write_text(repo_ / ".parallex/state/ws-1.json", "{}\n");
  const Ran r =
      px("run -- sh -c " +
         quote("cat .parallex/github-token; echo 'sandbox_workspaces: false' > .parallex/config.yaml; "
               "echo '{}' > .parallex/state/ws-2.json; rm -f .parallex/state/ws-1.json; true"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find(token), std::string::npos) << "the run read the project's token";
  EXPECT_EQ(read_text(repo_ / ".parallex/config.yaml"), "allow: [registry.npmjs.org]\n");
  EXPECT_TRUE(fs::exists(repo_ / ".parallex/state/ws-1.json"));
  EXPECT_FALSE(fs::exists(repo_ / ".parallex/state/ws-2.json"));
  // Made by a run where there was none: moved aside, never left for the next run.
  // (The first run's record goes: two runs in one second sort by a random suffix.)
  fs::remove_all(repo_ / ".parallex");
  fs::remove_all(root_ / "data/runs");
  const Ran planted = px("run -- sh -c " + quote("mkdir -p .parallex && echo 'sandbox_workspaces: false' > "
                                                 ".parallex/config.yaml && sleep 0.3"));
  ASSERT_EQ(planted.status, 0) << planted.err;
  EXPECT_FALSE(fs::exists(repo_ / ".parallex/config.yaml"));
  EXPECT_NE(planted.err.find("moved aside .parallex/config.yaml"), std::string::npos) << planted.err;
  EXPECT_EQ(read_text(last_run() / "quarantine/.parallex/config.yaml"), "sandbox_workspaces: false\n");
}

// A config git tracks was written by whoever can commit to the repository:
// it cannot turn the seal off. Refused before anything is made.
TEST_F(EscapeFrontDoor, ACommittedConfigCannotTurnTheSealOff) {
  write_text(repo_ / ".parallex/config.yaml", "sandbox_workspaces: false\n");
  ASSERT_EQ(git(repo_, "add .parallex/config.yaml") + git(repo_, "commit -qm config"), 0);
  const Ran r = px("harness -w -- sh -c 'echo ran'");
  EXPECT_EQ(r.status, 125) << r.err;
  EXPECT_EQ(r.out.find("ran"), std::string::npos) << "the command ran";
  EXPECT_NE(r.err.find(".parallex/config.yaml:1 sets sandbox_workspaces: false, but git tracks the file"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("git rm --cached .parallex/config.yaml"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(repo_ / ".parallex/workspaces")) << "a workspace was made";
  // The user's own (untracked) file is honoured, and said.
  ASSERT_EQ(git(repo_, "rm -q --cached .parallex/config.yaml") + git(repo_, "commit -qm untrack"), 0);
  const Ran own = px("harness -w -- sh -c 'echo ran'");
  EXPECT_EQ(own.status, 0) << own.err;
  EXPECT_NE(own.err.find("UNSEALED"), std::string::npos) << own.err;
}

// A link the run plants on the way to a protected path is what is moved
// aside, never what it points to; a link the user had is put back.
TEST_F(EscapeFrontDoor, ALinkOnTheWayIsMovedAsideAndAUsersLinkPutBack) {
  const fs::path target = repo_ / "elsewhere";
  write_text(target / "settings.json", "{\"the user's\": 1}\n");
  write_text(repo_ / "envrc.real", "export A=1\n");
  fs::create_symlink("envrc.real", repo_ / ".envrc");
  const Ran r =
      px("run -- sh -c " + quote("ln -s elsewhere .claude; rm -f .envrc; echo 'evil' > .envrc; true"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(fs::symlink_status(repo_ / ".claude")));
  EXPECT_EQ(read_text(target / "settings.json"), "{\"the user's\": 1}\n")
      << "what the link named is untouched";
  EXPECT_TRUE(fs::is_symlink(last_run() / "quarantine/.claude"));
  // The link itself is no mount point (what it names is, read-only): the run
  // can replace it, and the user's link is put back after the run.
  ASSERT_TRUE(fs::is_symlink(repo_ / ".envrc"));
  EXPECT_EQ(fs::read_symlink(repo_ / ".envrc"), "envrc.real");
  EXPECT_EQ(read_text(repo_ / "envrc.real"), "export A=1\n");
}

// The explicit opt-out: said as a weakening at the start, kept in the record.
TEST_F(EscapeFrontDoor, TheOptOutIsAWeakeningSaidAndRecorded) {
  const Ran r = px("run --dangerously-writable .vscode -- sh -c " +
                   quote("mkdir -p .vscode && echo '{}' > .vscode/tasks.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_text(repo_ / ".vscode/tasks.json"), "{}\n");
  EXPECT_NE(r.err.find("weaker seal: WEAKENED: dangerously_writable " + (repo_ / ".vscode").string()),
            std::string::npos)
      << r.err;
  const json rec = last_record();
  EXPECT_NE(rec["options"].dump().find("--dangerously-writable .vscode"), std::string::npos)
      << rec["options"];
  EXPECT_NE(rec["policy"]["weakenings"].dump().find("dangerously_writable"), std::string::npos);
  EXPECT_FALSE(rec.contains("quarantined"));
  // A path that is not protected is an error naming it.
  const Ran bad = px("run --dangerously-writable src -- true");
  EXPECT_EQ(bad.status, 125);
  EXPECT_NE(bad.err.find((repo_ / "src").string() + " is not a read-only path"), std::string::npos)
      << bad.err;
}

// Item 4: git's everyday work runs inside (commit, branch, rebase, fetch,
// submodule update --init); what a run leaves in .git that would make git
// outside the seal run a program is moved aside.
TEST_F(EscapeFrontDoor, GitWorksInsideAndItsOtherDoorsAreClosedAfterTheRun) {
  // A remote with a branch, and a library as a submodule (relative URL).
  const fs::path remote = root_ / "remote.git", lib = root_ / "lib";
  ASSERT_EQ(sh("git clone -q --bare " + quote(repo_.string()) + " " + quote(remote.string())), 0);
  write_text(lib / "lib.c", "int x;\n");
  ASSERT_EQ(git(lib, "init -q") + git(lib, "add lib.c") + git(lib, "commit -qm lib"), 0);
  ASSERT_EQ(git(repo_, "remote add origin " + quote(remote.string())), 0);
  ASSERT_EQ(git(repo_, "submodule add -q ../lib lib"), 0);
  ASSERT_EQ(git(repo_, "commit -qm sub"), 0);
  ASSERT_EQ(git(repo_, "push -q origin main"), 0);
  ASSERT_EQ(
      git(repo_, "submodule deinit -q -f lib") + sh("rm -rf " + quote((repo_ / ".git/modules").string())), 0);
  const std::string config_before = read_text(repo_ / ".git/config");
  const std::string g = "git -c user.name=a -c user.email=a@example.com -c protocol.file.allow=always ";
  const Ran work = px(
      "run --grant " + quote(remote.string()) + " --grant " + quote(lib.string()) + " -- sh -c " +
      quote(
          "set -e; echo a > a.txt; " + g + "add a.txt; " + g + "commit -qm a; " + g + "branch feature; " + g +
          "checkout -q feature; echo b > b.txt; " + g + "add b.txt; " + g + "commit -qm b; " + g +
          "rebase -q main; " + g + "fetch -q origin; " + g +
          "submodule update --init -q; test -f lib/lib.c; " +
          // The doors: each would make git outside run `id`.
          "printf '[core]\\n\\tfsmonitor = id\\n' > .git/modules/lib/config.worktree; "
          "mkdir -p .git/modules/evil/hooks .git/info; echo ref > .git/modules/evil/HEAD; "
          "printf '[core]\\n\\tfsmonitor = id\\n' > .git/modules/evil/config; "
          "printf '#!/bin/sh\\nid\\n' > .git/modules/lib/hooks/post-checkout; "
          "echo '* filter=evil' > .git/info/attributes; echo .git/modules/evil > .git/commondir; echo RAN"));
  ASSERT_EQ(work.status, 0) << work.err << work.out;
  EXPECT_NE(work.out.find("RAN"), std::string::npos);
  EXPECT_EQ(read_text(repo_ / ".git/config"), config_before) << ".git/config stays read-only";
  EXPECT_TRUE(fs::exists(repo_ / "lib/lib.c")) << "the submodule was checked out";
  // The doors are closed; the submodule's own (safe) config stays.
  for (const char* door : {".git/commondir", ".git/info/attributes", ".git/modules/evil/config",
                           ".git/modules/lib/hooks/post-checkout", ".git/modules/lib/config.worktree"})
    EXPECT_FALSE(fs::exists(repo_ / door)) << door << " stayed";
  EXPECT_TRUE(fs::exists(repo_ / ".git/modules/lib/config"));
  const json rec = last_record();
  EXPECT_EQ(rec["quarantined"].size(), 5u) << rec["quarantined"].dump(2);
  EXPECT_NE(rec["quarantined"].dump().find("core.fsmonitor"), std::string::npos);
  // git outside works and runs nothing of the run's.
  EXPECT_EQ(git(repo_, "status"), 0);
  EXPECT_EQ(git(repo_, "log --oneline feature"), 0);
}

// Item 4, worktrees: `git worktree add` and work in the worktree run inside;
// a worktree's config.worktree naming a program, and a worktree git dir whose
// commondir names another git dir, are moved aside; the worktree stays usable.
TEST_F(EscapeFrontDoor, WorktreesWorkAndTheirDoorsAreClosed) {
  const std::string g = "git -c user.name=a -c user.email=a@example.com ";
  const Ran work = px("run -- sh -c " +
                      quote("set -e; " + g + "worktree add -q -b side wt; cd wt; echo w > w.txt; " + g +
                            "add w.txt; " + g +
                            "commit -qm w; cd ..; "
                            // The doors: each would make git outside run `id`.
                            "printf '[core]\\n\\tfsmonitor = id\\n' > .git/worktrees/wt/config.worktree; "
                            "mkdir -p .git/worktrees/evil .git/planted/hooks; echo ref > .git/planted/HEAD; "
                            "printf '[core]\\n\\tfsmonitor = id\\n' > .git/planted/config; "
                            "echo ../../planted > .git/worktrees/evil/commondir; echo RAN"));
  ASSERT_EQ(work.status, 0) << work.err << work.out;
  EXPECT_NE(work.out.find("RAN"), std::string::npos);
  EXPECT_FALSE(fs::exists(repo_ / ".git/worktrees/wt/config.worktree")) << "config.worktree stayed";
  EXPECT_FALSE(fs::exists(repo_ / ".git/worktrees/evil/commondir")) << "the planted commondir stayed";
  EXPECT_EQ(read_text(repo_ / ".git/worktrees/wt/commondir"), "../..\n") << "git's own commondir is kept";
  const json rec = last_record();
  std::set<std::string> paths;
  for (const auto& e : rec["quarantined"])
    paths.insert(fs::path(e["path"].get<std::string>()).lexically_relative(repo_));
  EXPECT_EQ(paths,
            (std::set<std::string>{".git/worktrees/wt/config.worktree", ".git/worktrees/evil/commondir"}))
      << rec["quarantined"].dump(2);
  // git outside: the worktree works, its commit is there.
  EXPECT_EQ(git(repo_ / "wt", "status"), 0);
  EXPECT_EQ(git(repo_, "cat-file -e side:w.txt"), 0) << "the commit made in the worktree";
  EXPECT_EQ(read_text(repo_ / "wt/w.txt"), "w\n");
}

// Item 4, a nested repository (a clone inside the run folder, not a
// submodule): work in it runs inside; a hook the run plants and a config it
// changes to name a program are moved aside, and the config as it was is put
// back, so git outside still works there and runs nothing of the run's.
TEST_F(EscapeFrontDoor, ANestedRepositorysDoorsAreMovedAsideAndItsConfigPutBack) {
  const fs::path lib = repo_ / "vendor/lib";
  write_text(lib / "lib.c", "int x;\n");
  ASSERT_EQ(git(lib, "init -q") + git(lib, "add lib.c") + git(lib, "commit -qm lib") +
                git(lib, "config remote.origin.url https://example.com/lib.git"),
            0);
  const std::string config_before = read_text(lib / ".git/config");
  const std::string g = "git -c user.name=a -c user.email=a@example.com ";
  const Ran r =
      px("run -- sh -c " +
         quote("set -e; cd vendor/lib; echo y > y.c; " + g + "add y.c; " + g + "commit -qm y; " +
               "printf '#!/bin/sh\\nid\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
               "printf '[core]\\n\\tfsmonitor = id\\n' >> .git/config; echo RAN"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("RAN"), std::string::npos);
  EXPECT_FALSE(fs::exists(lib / ".git/hooks/pre-commit")) << "the planted hook stayed";
  EXPECT_EQ(read_text(lib / ".git/config"), config_before) << "the config as it was is put back";
  const json rec = last_record();
  std::set<std::string> paths;
  for (const auto& e : rec["quarantined"])
    paths.insert(fs::path(e["path"].get<std::string>()).lexically_relative(repo_));
  EXPECT_EQ(paths, (std::set<std::string>{"vendor/lib/.git/hooks/pre-commit", "vendor/lib/.git/config"}))
      << rec["quarantined"].dump(2);
  EXPECT_NE(rec["quarantined"].dump().find("core.fsmonitor"), std::string::npos);
  EXPECT_NE(rec["quarantined"].dump().find("put back"), std::string::npos);
  // The moved config holds what the run wrote; the commit made inside stays.
  EXPECT_EQ(git(lib, "cat-file -e HEAD:y.c"), 0);
  EXPECT_EQ(git(lib, "status"), 0);
}

// Item 4, repositories the run makes itself, anywhere in the run folder
// (`git init` four levels down, a `git clone` into a sub-folder): checked at
// the end of the run like the top one. What would make git run a program is
// moved aside; a plain `git init` leaves nothing to move; a repository that
// was there before, deeper than the start's look, keeps its owner's hook.
TEST_F(EscapeFrontDoor, RepositoriesTheRunMakesAnywhereAreChecked) {
  const fs::path own = repo_ / "third_party/a/b/own";
  write_text(own / "own.c", "int own;\n");
  ASSERT_EQ(git(own, "init -q") + git(own, "add own.c") + git(own, "commit -qm own"), 0);
  write_text(own / ".git/hooks/pre-commit", "#!/bin/sh\necho the owner's hook\n");
  const std::string g = "git -c user.name=a -c user.email=a@example.com ";
  const Ran r = px(
      "run -- sh -c " +
      quote("set -e; " + g +
            "init -q vendor/a/b/x; printf '#!/bin/sh\\nid\\n' > vendor/a/b/x/.git/hooks/post-checkout; "
            "chmod +x vendor/a/b/x/.git/hooks/post-checkout; " +
            g + "clone -q . deps/c/lib; printf '[core]\\n\\tfsmonitor = id\\n' >> deps/c/lib/.git/config; " +
            g + "init -q plain/y; cd third_party/a/b/own; echo z > z.c; " + g + "add z.c; " + g +
            "commit -qm z; echo RAN"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("RAN"), std::string::npos);
  EXPECT_FALSE(fs::exists(repo_ / "vendor/a/b/x/.git/hooks/post-checkout")) << "the planted hook stayed";
  EXPECT_EQ(read_text(repo_ / "deps/c/lib/.git/config").find("fsmonitor"), std::string::npos)
      << "the cloned repository's config still names a program";
  EXPECT_EQ(read_text(own / ".git/hooks/pre-commit"), "#!/bin/sh\necho the owner's hook\n");
  const json rec = last_record();
  std::set<std::string> paths;
  for (const auto& e : rec["quarantined"])
    paths.insert(fs::path(e["path"].get<std::string>()).lexically_relative(repo_));
  EXPECT_EQ(paths, (std::set<std::string>{"vendor/a/b/x/.git/hooks/post-checkout", "deps/c/lib/.git/config"}))
      << rec["quarantined"].dump(2);
  EXPECT_NE(rec["quarantined"].dump().find("core.fsmonitor"), std::string::npos);
  // git outside still works in what the run made, and runs nothing of the run's.
  EXPECT_EQ(git(repo_ / "plain/y", "status"), 0);
  EXPECT_EQ(git(own, "cat-file -e HEAD:z.c"), 0);
}

// Item 1 when `parallex` itself is killed: what the run made at the
// protected paths while nothing could move it (the supervisor stopped, its
// watch with it) is moved aside by the run's watchdog once the run's
// processes are dead, and `parallex runs`, closing the record as lost, says
// so. As root (a cgroup) and as pxtest (the process-tree fallback).
TEST_F(EscapeFrontDoor, AKilledSupervisorsWatchdogMovesAsideWhatTheRunMade) {
  std::thread run([&] {
    px("run -- sh -c " +
       quote("touch ready; while [ ! -e go ]; do sleep 0.02; done; mkdir -p .vscode .idea/runConfigurations; "
             "echo '{\"runOn\": \"folderOpen\"}' > .vscode/tasks.json; echo 'eval evil' > .envrc; "
             "echo '<configuration/>' > .idea/runConfigurations/x.xml; git init -q vendor/a/b/x; "
             "printf '#!/bin/sh\\nid\\n' > vendor/a/b/x/.git/hooks/post-checkout; touch made; sleep 30"));
  });
  for (int i = 0; i < 300 && !fs::exists(repo_ / "ready"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const json live = first_live_run();
  const pid_t supervisor = live.is_object() ? live.value("pid", 0) : 0;
  if (supervisor <= 0 || ::kill(supervisor, SIGSTOP) != 0) {
    ADD_FAILURE() << "the run's supervisor is not listed";
    sh("touch " + quote((repo_ / "go").string()));
    run.join();
    return;
  }
  write_text(repo_ / "go", "go\n");
  for (int i = 0; i < 300 && !fs::exists(repo_ / "made"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(fs::exists(repo_ / ".envrc")) << "the stopped supervisor's watch moved it";
  ::kill(supervisor, SIGKILL);
  run.join();
  const std::vector<std::string> made{".vscode", ".envrc", ".idea/runConfigurations",
                                      "vendor/a/b/x/.git/hooks/post-checkout"};
  for (const auto& rel : made) {
    for (int i = 0; i < 500 && fs::exists(fs::symlink_status(repo_ / rel)); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(fs::exists(fs::symlink_status(repo_ / rel))) << rel << " stayed in the run folder";
    EXPECT_TRUE(fs::exists(last_run() / "quarantine" / rel)) << rel << " is not in the run's quarantine";
  }
  EXPECT_EQ(read_text(last_run() / "quarantine/.envrc"), "eval evil\n");
  json rec;
  for (int i = 0; i < 250 && !(rec.is_object() && rec["quarantined"].size() == made.size()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    rec = last_record();
  }
  ASSERT_EQ(rec["quarantined"].size(), made.size()) << rec.dump(2);
  for (const auto& q : rec["quarantined"]) EXPECT_EQ(q["when"], "after its supervisor died") << q.dump();
  const Ran runs = px("runs");
  EXPECT_EQ(runs.status, 0) << runs.err;
  for (const auto& rel : made) EXPECT_NE(runs.err.find(rel), std::string::npos) << rel << "\n" << runs.err;
  EXPECT_EQ(last_record()["status"], "lost");
}

// The run's watchdog of a supervisor: its child named px-watchdog, 0 if none.
pid_t watchdog_of(pid_t supervisor) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == supervisor && stat.substr(open + 1, close - open - 1) == "px-watchdog")
      return std::stoi(name);
  }
  return 0;
}

// Item 1 when `parallex` and its watchdog are both killed (`kill -9` of
// both, as `pkill -9 -f parallex` does): nothing of the run is left to sweep,
// so the next `parallex runs` (or `parallex run`) does, from what the
// supervisor kept in the run's record folder, once it knows nothing of the
// run runs any more; while the supervisor lives (stopped here), it does not.
TEST_F(EscapeFrontDoor, ALaterParallexSweepsARunWhoseSupervisorAndWatchdogWereKilled) {
  std::thread run([&] {
    px("run -- sh -c " +
       quote("touch ready; while [ ! -e go ]; do sleep 0.02; done; mkdir -p .vscode; "
             "echo '{\"runOn\": \"folderOpen\"}' > .vscode/tasks.json; echo 'eval evil' > .envrc; "
             "touch made; sleep 30"));
  });
  for (int i = 0; i < 300 && !fs::exists(repo_ / "ready"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const json live = first_live_run();
  const pid_t supervisor = live.is_object() ? live.value("pid", 0) : 0;
  const pid_t watchdog = supervisor > 0 ? watchdog_of(supervisor) : 0;
  if (supervisor <= 0 || watchdog <= 0 || ::kill(supervisor, SIGSTOP) != 0) {
    ADD_FAILURE() << "the run's supervisor or its watchdog is not found";
    if (supervisor > 0) ::kill(supervisor, SIGKILL);
    run.join();
    return;
  }
  write_text(repo_ / "go", "go\n");
  for (int i = 0; i < 300 && !fs::exists(repo_ / "made"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fs::exists(repo_ / ".envrc")) << "the stopped supervisor's watch moved it";
  // The supervisor lives (stopped): a later parallex leaves its run alone.
  EXPECT_EQ(px("runs").status, 0);
  EXPECT_TRUE(fs::exists(repo_ / ".envrc")) << "swept while the run's supervisor was alive";
  ::kill(watchdog, SIGKILL);
  ::kill(supervisor, SIGKILL);
  run.join();
  // Nothing sweeps by itself now: the files stay until a later parallex.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(fs::exists(repo_ / ".vscode/tasks.json")) << "something swept after both were killed";
  Ran runs;
  for (int i = 0; i < 100 && fs::exists(fs::symlink_status(repo_ / ".envrc")); ++i) {
    runs = px("runs");  // the run's processes die with their parent: at most a moment
    if (fs::exists(fs::symlink_status(repo_ / ".envrc")))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (const std::string rel : {".vscode", ".envrc"}) {
    EXPECT_FALSE(fs::exists(fs::symlink_status(repo_ / rel))) << rel << " stayed in the run folder";
    EXPECT_TRUE(fs::exists(last_run() / "quarantine" / rel)) << rel << " is not in the run's quarantine";
    EXPECT_NE(runs.err.find(rel), std::string::npos) << rel << " was not said\n" << runs.err;
  }
  EXPECT_EQ(read_text(last_run() / "quarantine/.envrc"), "eval evil\n");
  const json rec = last_record();
  ASSERT_EQ(rec["quarantined"].size(), 2u) << rec.dump(2);
  for (const auto& q : rec["quarantined"]) EXPECT_EQ(q["when"], "after its supervisor and its watchdog died");
  EXPECT_EQ(rec["status"], "lost");
  EXPECT_FALSE(fs::exists(last_run() / "sweep-state")) << "the sweep's state outlived the sweep";
  // Swept once: the next parallex has nothing to say about it.
  const Ran again = px("runs");
  EXPECT_EQ(again.err.find("moved aside"), std::string::npos) << again.err;
}

// A pause moves aside what the run left in .git at once (every process of
// the run is frozen, so none is halfway through a write), before the user
// works in the folder while the run waits.
TEST_F(EscapeFrontDoor, APauseMovesAsideWhatTheRunLeftInGit) {
  const fs::path hook = repo_ / ".git/modules/evil/hooks/pre-commit";
  std::thread run([&] {
    px("run -- sh -c " + quote("mkdir -p .git/modules/evil/hooks; echo ref > .git/modules/evil/HEAD; "
                               "printf '#!/bin/sh\\nid\\n' > .git/modules/evil/hooks/pre-commit; "
                               "touch ready; sleep 20"));
  });
  for (int i = 0; i < 300 && !fs::exists(repo_ / "ready"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(fs::exists(repo_ / "ready"));
  EXPECT_TRUE(fs::exists(hook)) << "the run is still going: nothing of .git is moved yet";
  const json live = first_live_run();
  const std::string id = live.is_object() ? live.value("id", "") : "";
  if (id.empty()) {
    ADD_FAILURE() << "the run is not listed";
    run.join();
    return;
  }
  const Ran paused = px("pause " + id);
  EXPECT_EQ(paused.status, 0) << paused.err;
  EXPECT_FALSE(fs::exists(hook)) << "a pause moves it aside at once";
  px("kill " + id);
  run.join();
  const json rec = last_record();
  ASSERT_EQ(rec["quarantined"].size(), 1u) << rec.dump(2);
  EXPECT_EQ(rec["quarantined"][0]["when"], "when the run was paused");
}

// A run started during `pause --all` starts paused: listed by `runs`, ended
// by `kill --all` before its command ran a step, and never runs it after a
// later `resume --all`.
TEST_F(EscapeFrontDoor, ARunStartedDuringAGlobalPauseIsListedAndKillable) {
  ASSERT_EQ(px("pause --all").status, 0);
  Ran held;
  std::thread run([&] { held = px("run -- sh -c " + quote("touch ran; sleep 20")); });
  const json live = first_live_run();
  EXPECT_TRUE(live.is_object() && live.value("state", "") == "paused") << live.dump();
  const Ran killed = px("kill --all");
  EXPECT_EQ(killed.status, 0) << killed.err;
  run.join();
  EXPECT_EQ(px("resume --all").status, 0);
  EXPECT_EQ(held.status, 137) << held.err;
  EXPECT_NE(held.err.find("this run starts paused"), std::string::npos) << held.err;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(fs::exists(repo_ / "ran")) << "the command ran";
}

// A workspace is not removed while a run works in it, --force or not.
TEST_F(EscapeFrontDoor, AWorkspaceIsNotRemovedUnderItsRun) {
  std::thread run([&] { px("harness -w --name busy -- sleep 20"); });
  const json live = first_live_run();
  const std::string id = live.is_object() ? live.value("id", "") : "";
  const Ran refused = px("workspace rm busy --force");
  EXPECT_EQ(refused.status, 5) << refused.err;
  EXPECT_NE(refused.err.find("is working in workspace busy"), std::string::npos) << refused.err;
  EXPECT_TRUE(fs::is_directory(repo_ / ".parallex/workspaces/busy"));
  if (!id.empty()) px("kill " + id);
  run.join();
  const Ran removed = px("workspace rm busy --force");
  EXPECT_EQ(removed.status, 0) << removed.err;
  EXPECT_FALSE(fs::exists(repo_ / ".parallex/workspaces/busy"));
}

// Item 3: a variable passed on purpose reaches the run; a credential only
// when named so; the record names it, never its value.
TEST_F(EscapeFrontDoor, AVariablePassedOnPurposeIsRecordedByName) {
  const std::string secret = "px-canary-value-7f3a9c";
  const Ran r = px("run --env GITHUB_TOKEN --env PX_SET=" + secret + " -- /usr/bin/env",
                   "GITHUB_TOKEN=" + secret + "-gh GH_TOKEN=" + secret + "-other");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("GITHUB_TOKEN=" + secret + "-gh"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PX_SET=" + secret), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("GH_TOKEN="), std::string::npos) << "a credential not named is stripped";
  const std::string rec = read_text(last_run() / "run.json");
  EXPECT_EQ(rec.find(secret), std::string::npos) << "a passed value reached the record";
  const json j = json::parse(rec);
  std::set<std::string> names;
  for (const auto& e : j["env_passed"]) names.insert(e["name"].get<std::string>());
  EXPECT_EQ(names, (std::set<std::string>{"GITHUB_TOKEN", "PX_SET"}));
}

// Bad input: a clear error naming it, exit 125, nothing made in the user's tree.
TEST_F(EscapeFrontDoor, BadInputIsRefusedBeforeAnythingIsMade) {
  const auto before = listing(repo_);
  const Ran env = px("run --env 1BAD=x -- true");
  EXPECT_EQ(env.status, 125) << env.err;
  EXPECT_NE(env.err.find("'1BAD' is not a variable name"), std::string::npos) << env.err;

  write_text(root_ / "caches.yaml", "version: 1\ntool_caches: " + (root_ / "no-such-cache").string() + "\n");
  const Ran cache = px("run --profile " + quote((root_ / "caches.yaml").string()) + " -- true");
  EXPECT_EQ(cache.status, 125) << cache.err;
  EXPECT_NE(cache.err.find((root_ / "no-such-cache").string() + " (profile"), std::string::npos) << cache.err;
  EXPECT_NE(cache.err.find("does not exist"), std::string::npos) << cache.err;
  EXPECT_FALSE(fs::exists(root_ / "no-such-cache"));

  // A protected name that is a link leading out runs, protected as it is
  // (limits_test.cpp): nothing is written through it, nothing is made.
  write_text(root_ / "outside/real-envrc", "x\n");
  fs::create_symlink(root_ / "outside/real-envrc", repo_ / ".envrc");
  const auto with_link = listing(repo_);
  const Ran link = px("run -- sh -c 'echo evil > .envrc'");
  EXPECT_NE(link.status, 0) << link.err;
  EXPECT_NE(link.err.find("protected as they are"), std::string::npos) << link.err;
  EXPECT_EQ(read_text(root_ / "outside/real-envrc"), "x\n");
  EXPECT_EQ(listing(repo_), with_link) << "something was made in the user's tree";
  fs::remove(repo_ / ".envrc");
  EXPECT_EQ(listing(repo_), before);

  const Ran inside = px("run --in " + quote((root_ / "data").string()) + " -- true");
  EXPECT_EQ(inside.status, 125) << inside.err;
  EXPECT_NE(inside.err.find("inside Parallex's own state"), std::string::npos) << inside.err;

  const Ran ports = px("run --local-servers=30x0 --allow example.com -- true");
  EXPECT_EQ(ports.status, 125) << ports.err;
  EXPECT_NE(ports.err.find("'30x0' is not a port"), std::string::npos) << ports.err;
}

// Item 4: Parallex's own state is denied to every run whatever the grants:
// another agent's token and rules, this agent's rules, the runs' records.
TEST_F(EscapeFrontDoor, ParallexsOwnStateIsDeniedWhateverTheGrants) {
  ASSERT_EQ(px("agent new other --email o@example.com").status, 0);
  ASSERT_EQ(px("agent new me --email m@example.com").status, 0);
  const fs::path data = root_ / "data";
  write_text(data / "agents/other/gh/hosts.yml", "oauth_token: SECRET\n");
  // Granted writable, the state is refused outright (the run could add a
  // plugins/ folder there: RunFolder.AGrantADenyOverridesIsSaid); granted to
  // read, its entries stay denied.
  const Ran refused = px("agent run me --grant " + quote(data.string()) + ":rw -- true");
  EXPECT_EQ(refused.status, 125) << refused.err;
  EXPECT_NE(refused.err.find("Parallex's own state"), std::string::npos) << refused.err;
  const Ran r = px("agent run me --grant " + quote(data.string()) + " -- sh -c " +
                   quote("cat " + (data / "agents/other/gh/hosts.yml").string() +
                         " 2>/dev/null && echo READ; "
                         "echo x >> " +
                         (data / "agents/me/agent.yaml").string() +
                         " 2>/dev/null && echo WROTE; "
                         "ls " +
                         (data / "agents/me/runs").string() +
                         " >/dev/null 2>&1 && echo LISTED; "
                         "test -r " +
                         (data / "agents/me/keys/id_ed25519").string() +
                         " && echo OWN-KEY; "
                         "echo x > $HOME/own-home && echo OWN-HOME"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("READ"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("WROTE"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("LISTED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OWN-KEY"), std::string::npos) << "the agent's own key stays readable: " << r.out;
  EXPECT_NE(r.out.find("OWN-HOME"), std::string::npos) << "the agent's own home stays writable: " << r.out;
}

// Item 4, a grant around the state: a writable grant of a folder that holds
// Parallex's own state (here the folder holding the data and runtime dirs,
// with the config dir not made yet) adds nothing there that the next
// `parallex` reads: no plugin, no agent, no profile. Where the state holds a
// path the run keeps (the agent's home, the run's temp dir) its entries are
// fixed and the kept path stays writable; where it holds none, it is denied.
TEST_F(EscapeFrontDoor, AWritableGrantAroundParallexsOwnStatePlantsNothingThere) {
  // Parallex's data, state, runtime and config dirs in one folder the runs
  // are granted (its XDG folders there, no PARALLEX_HOME). Short names: a
  // control socket's path beneath the runtime dir has 108 bytes at most.
  const fs::path around = root_ / "g", data = around / "share/parallex", runtime = around / "r",
                 config = around / "config/parallex";
  fs::create_directories(runtime);
  fs::permissions(runtime, fs::perms::owner_all);
  const std::string env = "PARALLEX_HOME= XDG_DATA_HOME=" + quote((around / "share").string()) +
                          " XDG_STATE_HOME=" + quote((around / "state").string()) +
                          " XDG_CONFIG_HOME=" + quote((around / "config").string()) +
                          " XDG_RUNTIME_DIR=" + quote(runtime.string());
  ASSERT_EQ(px("agent new me --email m@example.com", env).status, 0);
  ASSERT_FALSE(fs::exists(config)) << "the config dir is to be made by the run itself";
  const std::string plant =
      "mkdir -p " + quote((data / "plugins/evil").string()) + " 2>/dev/null && echo PLUGIN; " + "mkdir " +
      quote((data / "agents/intruder").string()) + " 2>/dev/null && echo AGENT; " + "mv " +
      quote((data / "agents/me").string()) + " " + quote((data / "agents/me-away").string()) +
      " 2>/dev/null && echo MOVED; " + "mkdir -p " + quote((config / "profiles").string()) +
      " 2>/dev/null && echo PROFILE; " + "touch " + quote((runtime / "parallex/planted").string()) +
      " 2>/dev/null && echo RUNTIME; ";
  const std::string grant = " --grant " + quote(around.string()) + ":rw -- sh -c ";
  const Ran agent =
      px("agent run me" + grant + quote(plant + "echo x > $HOME/own-home && echo OWN-HOME"), env);
  ASSERT_EQ(agent.status, 0) << agent.err;
  EXPECT_NE(agent.out.find("OWN-HOME"), std::string::npos)
      << "the agent's own home stays writable: " << agent.out;
  const Ran adhoc = px("run" + grant + quote(plant + "echo x > /tmp/own-tmp && echo OWN-TMP"), env);
  ASSERT_EQ(adhoc.status, 0) << adhoc.err;
  EXPECT_NE(adhoc.out.find("OWN-TMP"), std::string::npos) << adhoc.out;
  for (const Ran* r : {&agent, &adhoc})
    for (const char* planted : {"PLUGIN", "AGENT", "MOVED", "PROFILE", "RUNTIME"})
      EXPECT_EQ(r->out.find(planted), std::string::npos) << planted << ": " << r->out;
  EXPECT_FALSE(fs::exists(data / "plugins/evil"));
  EXPECT_FALSE(fs::exists(data / "agents/intruder"));
  EXPECT_TRUE(fs::exists(data / "agents/me/agent.yaml"));
  EXPECT_FALSE(fs::exists(config / "profiles"));
  EXPECT_FALSE(fs::exists(runtime / "parallex/planted"));
  // The user's follow-up: the next parallex finds what it had.
  const Ran agents = px("agent list", env);
  EXPECT_EQ(agents.out.find("intruder"), std::string::npos) << agents.out;
  EXPECT_NE(agents.out.find("me"), std::string::npos) << agents.out;
  const Ran show = px("policy show --grant " + quote(around.string()) + ":rw -- true", env);
  EXPECT_NE(show.out.find("fixed      " + (runtime / "parallex").string()), std::string::npos)
      << show.out << show.err;
}

// Item 3: a package manager in an ad-hoc run, with the real npm against the
// registry; the user's own cache is never written.
TEST_F(EscapeFrontDoor, NpmInstallWorksInAnAdhocRun) {
  if (::access("/usr/bin/npm", X_OK) != 0) GTEST_SKIP() << "npm is not installed";
  if (sh("curl -sS -o /dev/null --max-time 10 https://registry.npmjs.org/left-pad") != 0)
    GTEST_SKIP() << "registry.npmjs.org is not reachable from here";
  const Ran r = px("run --allow registry.npmjs.org -- npm install --no-audit --no-fund left-pad");
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_TRUE(fs::exists(repo_ / "node_modules/left-pad/package.json"));
  EXPECT_FALSE(fs::exists(home_ / ".npm")) << "the user's own npm cache was written";
}

// Item 3, the developer profile: the user's own npm cache is shown read-only
// beneath the run's (tool_caches: overlay). The real npm installs from it with
// no network at all, and what the run writes or deletes there stays in the run.
TEST_F(EscapeFrontDoor, TheDeveloperProfileInstallsFromTheUsersCacheAndNeverWritesIt) {
  if (::access("/usr/bin/npm", X_OK) != 0) GTEST_SKIP() << "npm is not installed";
  if (sh("curl -sS -o /dev/null --max-time 10 https://registry.npmjs.org/left-pad") != 0)
    GTEST_SKIP() << "registry.npmjs.org is not reachable from here";
  // The user's cache, filled outside any seal as the user's own npm would.
  const fs::path cache = home_ / ".npm";
  ASSERT_EQ(sh("cd " + quote(root_.string()) + " && env HOME=" + quote(home_.string()) +
               " npm cache add left-pad@1.3.0 >/dev/null 2>&1"),
            0);
  ASSERT_TRUE(fs::is_directory(cache / "_cacache"));
  auto snapshot = [&] {
    std::string all;
    for (const auto& name : listing(cache)) {
      std::error_code ec;
      const fs::path p = cache / name;
      const auto size = fs::is_regular_file(fs::symlink_status(p, ec)) ? fs::file_size(p, ec) : 0;
      all += name + " " + std::to_string(size) + "\n";
    }
    return all;
  };
  const std::string before = snapshot();

  const auto show = px("policy show --profile developer -- true");
  EXPECT_NE(show.out.find("cache      " + cache.string() + " at /tmp/tool-caches/npm"), std::string::npos)
      << show.out;
  // --offline: npm may not touch the network, so it can only install from the
  // user's cache, seen through the layer.
  const Ran r =
      px("run --profile developer -- sh -c 'npm install --offline --no-audit --no-fund left-pad@1.3.0 "
         "&& echo planted > \"$npm_config_cache/planted\" && rm -rf \"$npm_config_cache/_cacache\" "
         "&& test ! -e \"$npm_config_cache/_cacache\" && echo DONE'");
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("DONE"), std::string::npos) << r.out << r.err;
  EXPECT_TRUE(fs::exists(repo_ / "node_modules/left-pad/package.json"));
  EXPECT_EQ(snapshot(), before) << "the user's npm cache changed";
  EXPECT_FALSE(fs::exists(cache / "planted"));

  // The default profile keeps the run's cache empty: the same install fails offline.
  fs::remove_all(repo_ / "node_modules");
  const Ran plain = px("run -- npm install --offline --no-audit --no-fund left-pad@1.3.0");
  EXPECT_NE(plain.status, 0) << plain.out;
  EXPECT_FALSE(fs::exists(repo_ / "node_modules/left-pad/package.json"));
}

// Item 4: Local servers is off for agents unless turned on, and can name its ports.
TEST_F(EscapeFrontDoor, LocalServersIsOffForAgentsAndNamesItsPorts) {
  ASSERT_EQ(px("agent new dev --email d@example.com --allow example.com").status, 0);
  const fs::path yaml = root_ / "data/agents/dev/agent.yaml";
  EXPECT_NE(read_text(yaml).find("local_servers: false"), std::string::npos) << read_text(yaml);
  const Ran old = px("agent set dev --local-servers on");
  ASSERT_EQ(old.status, 0) << old.err;
  EXPECT_NE(old.err.find("old spelling"), std::string::npos) << old.err;
  EXPECT_NE(read_text(yaml).find("local_servers: true"), std::string::npos);
  ASSERT_EQ(px("agent set dev --local-servers=5432,3000").status, 0);
  EXPECT_NE(read_text(yaml).find("local_servers: [3000, 5432]"), std::string::npos) << read_text(yaml);
  const Ran show = px("policy show --local-servers=8080 --allow example.com -- true");
  EXPECT_NE(show.out.find("local servers on, ports 8080"), std::string::npos) << show.out;
}

}  // namespace
