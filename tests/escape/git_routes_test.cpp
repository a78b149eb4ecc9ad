// Every way a run could make the user's own git (or `parallex workspace rm`)
// act outside the run folder or run the run's program, done for real from
// inside a seal, then the user's real follow-up outside it: `git status`,
// `git rebase --continue`, `git checkout`, `parallex workspace rm`. Each
// planted program would write a marker outside the run folder; it must stay
// absent, and nothing outside (a victim folder) may change. Part of the
// escape suite: it runs as root and again as pxtest.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "run_folder_test.hpp"

namespace {

using namespace px::test;

class EscapeGitRoutes : public RunFolderTest {
 protected:
  void SetUp() override {
    RunFolderTest::SetUp();
    marker_ = root_ / "RAN";
    victim_ = root_ / "victim";
    write_text(victim_ / "precious.txt", "the user's\n");
    ASSERT_EQ(git(victim_, "init -q"), 0);
  }

  // A program the run plants: run by anyone, it leaves the marker.
  std::string plant_program(const std::string& rel) const {
    return "printf '#!/bin/sh\\ntouch " + marker_.string() + "\\n' > " + rel + "; chmod +x " + rel + "; ";
  }
  bool ran() const { return fs::exists(marker_); }
  bool victim_intact() const {
    return read_text(victim_ / "precious.txt") == "the user's\n" && fs::is_directory(victim_ / ".git");
  }
  std::set<std::string> quarantined(const json& rec) const {
    std::set<std::string> out;
    for (const auto& e : rec.value("quarantined", json::array())) {
      const fs::path p = e["path"].get<std::string>();
      out.insert(p.lexically_relative(repo_).string());
    }
    return out;
  }

  fs::path marker_, victim_;
  const std::string g_ = "git -c user.name=a -c user.email=a@example.com -c protocol.file.allow=always ";
};

// A gitfile naming a git dir the run made, whose config names a program, and
// a gitlink committed for its folder: the user's `git status` at the root
// recurses into the folder and would run the program.
TEST_F(EscapeGitRoutes, AGitfileAndAGitlinkNeverMakeGitStatusRunTheRunsProgram) {
  const Ran r =
      px("run -- sh -c " + quote("set -e; " + plant_program("evil.sh") + g_ + "init -q --bare .cache/gd; " +
                                 g_ + "--git-dir=.cache/gd config core.bare false; " + g_ +
                                 "--git-dir=.cache/gd config core.fsmonitor \"$PWD/evil.sh\"; mkdir lib; "
                                 "echo 'gitdir: ../.cache/gd' > lib/.git; " +
                                 g_ + "update-index --add --cacheinfo 160000,$(git rev-parse HEAD),lib; " +
                                 g_ + "commit -qm lib; echo DONE"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  ASSERT_NE(r.out.find("DONE"), std::string::npos) << r.out;
  const auto moved = quarantined(last_record());
  EXPECT_TRUE(moved.count(".cache/gd/config")) << last_record()["quarantined"].dump(2);
  EXPECT_TRUE(moved.count("lib/.git")) << "the gitfile goes with what it named";
  EXPECT_NE(r.err.find("core.fsmonitor"), std::string::npos) << r.err;
  // The user's follow-up: git status at the root (it recurses into lib).
  sh("cd " + quote(repo_.string()) + " && git status >/dev/null 2>&1");
  sh("cd " + quote(repo_.string()) + " && git status --ignore-submodules=none >/dev/null 2>&1");
  EXPECT_FALSE(ran()) << "the user's git status ran the run's program";
  EXPECT_TRUE(fs::exists(last_run() / "quarantine/.cache/gd/config")) << "nothing is deleted";
}

// A gitlinked folder the end's walk did not reach (the run made more folders
// than a walk reads): the index names it, and its .git is checked all the same.
TEST_F(EscapeGitRoutes, AGitlinkBeyondTheWalksBoundIsStillChecked) {
  const Ran r =
      px("run -- sh -c " +
         quote("set -e; mkdir -p $(seq -f a/%g/s 1 600); " + plant_program("evil.sh") + g_ +
               "init -q --bare .cache/gd; " + g_ + "--git-dir=.cache/gd config core.bare false; " + g_ +
               "--git-dir=.cache/gd config core.fsmonitor \"$PWD/evil.sh\"; mkdir -p a/300/s/lib; "
               "echo 'gitdir: ../../../../.cache/gd' > a/300/s/lib/.git; " +
               g_ + "update-index --add --cacheinfo 160000,$(git rev-parse HEAD),a/300/s/lib; " + g_ +
               "commit -qm lib; echo DONE"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  ASSERT_NE(r.err.find("not looked into"), std::string::npos) << "the walk reached everything\n" << r.err;
  const auto moved = quarantined(last_record());
  EXPECT_TRUE(moved.count("a/300/s/lib/.git")) << last_record()["quarantined"].dump(2);
  sh("cd " + quote(repo_.string()) + " && git status >/dev/null 2>&1");
  EXPECT_FALSE(ran()) << "the user's git status ran the run's program";
}

// The same through node_modules: a real .git folder there (npm's tree is
// no exception) with a gitlink for it.
TEST_F(EscapeGitRoutes, ARepositoryInNodeModulesIsCheckedToo) {
  const Ran r = px("run -- sh -c " +
                   quote("set -e; " + plant_program("evil.sh") + g_ + "init -q node_modules/pkg; " + g_ +
                         "-C node_modules/pkg config core.fsmonitor \"$PWD/evil.sh\"; " + g_ +
                         "update-index --add --cacheinfo 160000,$(git rev-parse HEAD),node_modules/pkg; " +
                         g_ + "commit -qm pkg; echo DONE"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_TRUE(quarantined(last_record()).count("node_modules/pkg/.git/config"))
      << last_record()["quarantined"].dump(2);
  sh("cd " + quote(repo_.string()) + " && git status >/dev/null 2>&1");
  EXPECT_FALSE(ran()) << "the user's git status ran the run's program";
}

// A submodule of the user's whose gitfile the run rewrites to name a git dir
// it made; and one naming a repository outside the run folder, which the
// user's git would take the config and hooks of, and change.
TEST_F(EscapeGitRoutes, ARewrittenSubmoduleGitfileIsMovedAsideAndTheUsersPutBack) {
  const fs::path lib = root_ / "lib";
  write_text(lib / "lib.c", "int x;\n");
  ASSERT_EQ(git(lib, "init -q") + git(lib, "add lib.c") + git(lib, "commit -qm lib"), 0);
  ASSERT_EQ(git(repo_, "submodule add -q ../lib lib") + git(repo_, "commit -qm sub"), 0);
  const std::string gitfile = read_text(repo_ / "lib/.git");
  ASSERT_NE(gitfile.find("gitdir: "), std::string::npos);
  const Ran r =
      px("run -- sh -c " + quote("set -e; " + plant_program("evil.sh") + g_ + "init -q --bare .cache/gd; " +
                                 g_ + "--git-dir=.cache/gd config core.bare false; " + g_ +
                                 "--git-dir=.cache/gd config core.fsmonitor \"$PWD/evil.sh\"; "
                                 "echo 'gitdir: ../.cache/gd' > lib/.git; mkdir -p other; "
                                 "echo 'gitdir: " +
                                 (victim_ / ".git").string() + "' > other/.git; echo DONE"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  const auto moved = quarantined(last_record());
  EXPECT_TRUE(moved.count("lib/.git")) << last_record()["quarantined"].dump(2);
  EXPECT_TRUE(moved.count("other/.git")) << "a gitfile naming a git dir outside the run folder stayed";
  sh("cd " + quote(repo_.string()) + " && git status >/dev/null 2>&1");
  sh("cd " + quote((repo_ / "other").string()) +
     " && git status >/dev/null 2>&1; git add -A >/dev/null 2>&1");
  EXPECT_FALSE(ran()) << "the user's git status ran the run's program";
  EXPECT_TRUE(victim_intact());
  EXPECT_FALSE(fs::exists(victim_ / ".git/index")) << "the user's git wrote the victim repository's index";
}

// A rebase the run leaves in progress, its todo list naming a command: the
// user's `git rebase --continue` would run it. Moved aside; the branch is
// untouched.
TEST_F(EscapeGitRoutes, ARebaseTheRunLeftInProgressNeverRunsItsCommands) {
  ASSERT_EQ(git(repo_, "checkout -qb feature") + sh("echo f > " + quote((repo_ / "f").string())) +
                git(repo_, "add f") + git(repo_, "commit -qm f") + git(repo_, "checkout -q main"),
            0);
  const std::string feature = read_text(repo_ / ".git/refs/heads/feature");
  const Ran r =
      px("run -- sh -c " +
         quote("set -e; " + plant_program("evil.sh") + "GIT_SEQUENCE_EDITOR='sed -i 1ibreak' " + g_ +
               "rebase -q -i main feature >/dev/null 2>&1 || true; test -d .git/rebase-merge; "
               "echo \"exec $PWD/evil.sh\" >> .git/rebase-merge/git-rebase-todo; echo DONE"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  ASSERT_NE(r.out.find("DONE"), std::string::npos) << r.out << r.err;
  EXPECT_FALSE(fs::exists(repo_ / ".git/rebase-merge")) << "the rebase's state stayed";
  EXPECT_TRUE(quarantined(last_record()).count(".git/rebase-merge")) << last_record()["quarantined"].dump(2);
  EXPECT_NE(r.err.find("git checkout feature"), std::string::npos) << r.err;
  sh("cd " + quote(repo_.string()) + " && GIT_EDITOR=true git rebase --continue >/dev/null 2>&1");
  EXPECT_FALSE(ran()) << "the user's git rebase --continue ran the run's command";
  EXPECT_EQ(read_text(repo_ / ".git/refs/heads/feature"), feature) << "the branch moved";
  // A rebase of the user's in progress when the run starts, which the run
  // leaves alone, stays.
  ASSERT_EQ(sh("cd " + quote(repo_.string()) +
               " && GIT_SEQUENCE_EDITOR='sed -i 1ibreak' git -c user.name=t -c user.email=t@example.com "
               "rebase -q -i main feature >/dev/null 2>&1; test -d .git/rebase-merge"),
            0);
  const Ran own = px("run -- true");
  ASSERT_EQ(own.status, 0) << own.err;
  EXPECT_TRUE(fs::exists(repo_ / ".git/rebase-merge/git-rebase-todo")) << "the user's own rebase was moved";
}

// `workspace rm NAME` removes the workspace Parallex made, whatever a run at
// the repository's root did: the worktree's gitdir is read-only in the run
// (and one rewritten by hand is not followed), and a link planted where the
// workspace was is removed itself, never what it names.
TEST_F(EscapeGitRoutes, WorkspaceRmNeverRemovesAFolderARunNames) {
  ASSERT_EQ(px("workspace new ws1").status, 0);
  ASSERT_EQ(px("workspace new ws2").status, 0);
  const fs::path gitdir = repo_ / ".git/worktrees/ws1/gitdir";
  const std::string recorded = read_text(gitdir);
  const std::string evil = (repo_ / ".parallex/workspaces/../../../victim/.git").string();
  const Ran r = px("run -- sh -c " +
                   quote("echo " + evil +
                         " > .git/worktrees/ws1/gitdir 2>/dev/null; "
                         "rm -rf .parallex/workspaces/ws2; ln -s ../../../victim .parallex/workspaces/ws2; "
                         "echo DONE"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_EQ(read_text(gitdir), recorded) << "the worktree's gitdir was writable in the run";
  ASSERT_TRUE(fs::is_symlink(repo_ / ".parallex/workspaces/ws2"));
  // The user's follow-up.
  const Ran rm1 = px("workspace rm ws1 --force");
  EXPECT_EQ(rm1.status, 0) << rm1.err;
  EXPECT_FALSE(fs::exists(repo_ / ".parallex/workspaces/ws1"));
  const Ran rm2 = px("workspace rm ws2 --force");
  EXPECT_EQ(rm2.status, 0) << rm2.err;
  EXPECT_FALSE(fs::exists(fs::symlink_status(repo_ / ".parallex/workspaces/ws2"))) << "the link stayed";
  EXPECT_TRUE(victim_intact()) << "workspace rm removed a folder the run named";
  EXPECT_FALSE(fs::exists(repo_ / ".git/worktrees/ws1"));
  EXPECT_FALSE(fs::exists(repo_ / ".git/worktrees/ws2"));
}

// The same with the gitdir rewritten outside any seal (an older Parallex, a
// run given --dangerously-writable): refused, naming the file, nothing removed.
TEST_F(EscapeGitRoutes, WorkspaceRmRefusesAWorktreeRecordThatNamesAnotherFolder) {
  ASSERT_EQ(px("workspace new ws1").status, 0);
  write_text(repo_ / ".git/worktrees/ws1/gitdir",
             (repo_ / ".parallex/workspaces/../../../victim/.git").string() + "\n");
  const Ran rm = px("workspace rm ws1 --force");
  EXPECT_NE(rm.status, 0);
  EXPECT_NE(rm.err.find(".git/worktrees/ws1/gitdir"), std::string::npos) << rm.err;
  EXPECT_TRUE(victim_intact());
  EXPECT_TRUE(fs::exists(repo_ / ".parallex/workspaces/ws1/README")) << "the workspace was removed anyway";
  // A link in place of the workspaces folder: refused, nothing removed through it.
  write_text(repo_ / ".git/worktrees/ws1/gitdir", (repo_ / ".parallex/workspaces/ws1/.git").string() + "\n");
  fs::rename(repo_ / ".parallex/workspaces", repo_ / ".parallex/elsewhere");
  fs::create_directories(victim_ / "ws1");
  write_text(victim_ / "ws1/kept", "kept\n");
  fs::create_symlink(victim_, repo_ / ".parallex/workspaces");
  const Ran linked = px("workspace rm ws1 --force");
  EXPECT_NE(linked.status, 0);
  EXPECT_NE(linked.err.find("symbolic link"), std::string::npos) << linked.err;
  EXPECT_EQ(read_text(victim_ / "ws1/kept"), "kept\n");
  EXPECT_TRUE(victim_intact());
}

// A worktree the run adds whose gitdir (where git's worktree commands act)
// names a folder outside the run folder is moved aside.
TEST_F(EscapeGitRoutes, AWorktreeGitdirNamingAFolderOutsideIsMovedAside) {
  const Ran r =
      px("run -- sh -c " + quote("set -e; " + g_ + "worktree add -q -b side wt; echo " +
                                 (victim_ / ".git").string() + " > .git/worktrees/wt/gitdir; echo DONE"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_TRUE(quarantined(last_record()).count(".git/worktrees/wt/gitdir"))
      << last_record()["quarantined"].dump(2);
  sh("cd " + quote(repo_.string()) + " && git worktree prune >/dev/null 2>&1");
  EXPECT_TRUE(victim_intact());
}

// In a workspace (harness -w) the run writes the main repository's objects
// and its own git dir there, outside the run folder: an object rewritten
// under the name of one of the user's is moved aside (the user's checkout
// never writes it), and a submodule git dir or a rebase it left there is
// checked like the run folder's.
TEST_F(EscapeGitRoutes, AWorkspaceRunCannotReplaceTheUsersObjectsOrPlantInItsGitDir) {
  ASSERT_EQ(
      sh("git -C " + quote(repo_.string()) + " rev-parse HEAD:README > " + quote((root_ / "blob").string())),
      0);
  std::string blob = read_text(root_ / "blob");
  while (!blob.empty() && blob.back() == '\n') blob.pop_back();
  ASSERT_EQ(blob.size(), 40u);
  const fs::path object = repo_ / ".git/objects" / blob.substr(0, 2) / blob.substr(2);
  ASSERT_TRUE(fs::exists(object)) << "the README blob is not a loose object";
  const Ran r = px(
      "harness -w --name objs -- sh -c " +
      quote(
          "set -e; common=$(git rev-parse --git-common-dir); gd=$(git rev-parse --git-dir); " +
          plant_program("/tmp/evil.sh") + "mkdir /tmp/t; " + g_ +
          "init -q /tmp/t; evil=$(echo evil | git -C /tmp/t hash-object -w --stdin); "
          "f=$common/objects/" +
          blob.substr(0, 2) + "/" + blob.substr(2) +
          "; chmod u+w $f; cat /tmp/t/.git/objects/$(echo $evil | cut -c1-2)/$(echo $evil | cut -c3-) > $f; "
          "mkdir -p $gd/rebase-merge; echo 'exec true' > $gd/rebase-merge/git-rebase-todo; "
          "echo DONE"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  ASSERT_NE(r.out.find("DONE"), std::string::npos) << r.out << r.err;
  const json rec = last_record();
  const std::string all = rec.value("quarantined", json::array()).dump();
  EXPECT_NE(all.find(blob.substr(2)), std::string::npos) << "the replaced object stayed\n" << rec.dump(2);
  EXPECT_NE(all.find("worktrees/objs/rebase-merge"), std::string::npos) << rec.dump(2);
  // The user's follow-up: a checkout of their own file never writes what the run put there.
  fs::remove(repo_ / "README");
  sh("cd " + quote(repo_.string()) + " && git checkout -- README >/dev/null 2>&1");
  EXPECT_NE(read_text(repo_ / "README"), "evil\n") << "the user's checkout wrote the run's object";
}

// A pack the run adds whose index gives one of the user's objects other
// contents: git looks in packs first, so the user's checkout would write the
// run's. The script makes a one-object pack of "evil\n" and rewrites its
// index to name the README's blob.
TEST_F(EscapeGitRoutes, APackGivingTheUsersObjectOtherContentsIsMovedAside) {
  write_text(repo_ / "forge.py", R"(import hashlib, struct, subprocess, sys
target = bytes.fromhex(sys.argv[1])
tmp = "/tmp/forge"
subprocess.run(["git", "init", "-q", tmp], check=True)
evil = subprocess.run(["git", "-C", tmp, "hash-object", "-w", "--stdin"], input=b"evil\n",
                      capture_output=True, check=True).stdout.strip()
name = subprocess.run(["git", "-C", tmp, "pack-objects", "-q", tmp + "/p"], input=evil + b"\n",
                      capture_output=True, check=True).stdout.strip().decode()
idx = open(f"{tmp}/p-{name}.idx", "rb").read()
fanout = b"".join(struct.pack(">I", 0 if i < target[0] else 1) for i in range(256))
body = idx[:8] + fanout + target + idx[8 + 1024 + 20:-20]
packs = ".git/objects/pack"
open(f"{packs}/pack-{name}.idx", "wb").write(body + hashlib.sha1(body).digest())
open(f"{packs}/pack-{name}.pack", "wb").write(open(f"{tmp}/p-{name}.pack", "rb").read())
print("FORGED")
)");
  ASSERT_EQ(
      sh("git -C " + quote(repo_.string()) + " rev-parse HEAD:README > " + quote((root_ / "blob").string())),
      0);
  std::string blob = read_text(root_ / "blob");
  while (!blob.empty() && blob.back() == '\n') blob.pop_back();
  const Ran r = px("run -- sh -c " + quote("mkdir -p .git/objects/pack && python3 forge.py " + blob));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  ASSERT_NE(r.out.find("FORGED"), std::string::npos) << r.out << r.err;
  EXPECT_NE(last_record().value("quarantined", json::array()).dump().find(".git/objects/pack/pack-"),
            std::string::npos)
      << last_record().dump(2);
  // The user's follow-up: their README checked out again is theirs.
  fs::remove(repo_ / "README");
  sh("cd " + quote(repo_.string()) + " && git checkout -- README >/dev/null 2>&1");
  EXPECT_EQ(read_text(repo_ / "README"), "hello\n") << "the user's checkout wrote the run's object";
}

// Bad input: what cannot be checked is treated as hostile, moved aside with
// the reason, never trusted (and never waited on: a FIFO where git reads a
// file would hold a reader forever).
TEST_F(EscapeGitRoutes, WhatCannotBeCheckedIsMovedAsideNeverTrusted) {
  const Ran r = px("run -- sh -c " +
                   quote("set -e; mkdir -p .git/modules/evil a b c; echo ref > .git/modules/evil/HEAD; "
                         "mkfifo .git/modules/evil/config; mkfifo a/.git; printf 'not a gitfile' > b/.git; "
                         "echo 'gitdir: ../nowhere' > c/.git; echo DONE"));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  ASSERT_NE(r.out.find("DONE"), std::string::npos) << r.out;
  const auto moved = quarantined(last_record());
  for (const char* path : {".git/modules/evil/config", "a/.git", "b/.git", "c/.git"}) {
    EXPECT_TRUE(moved.count(path)) << path << " stayed\n" << last_record()["quarantined"].dump(2);
    EXPECT_FALSE(fs::exists(fs::symlink_status(repo_ / path))) << path;
  }
  EXPECT_NE(r.err.find("could be read and checked"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(fs::symlink_status(last_run() / "quarantine/b/.git"))) << "nothing is deleted";
}

// When `parallex` itself is killed, its watchdog sweeps with the same code
// (protect/sweep_after_death.hpp): the gitfile route and a planted rebase
// are closed before the user's git runs there.
TEST_F(EscapeGitRoutes, AKilledSupervisorsWatchdogClosesTheGitRoutesToo) {
  std::thread run([&] {
    px("run -- sh -c " +
       quote("touch ready; while [ ! -e go ]; do sleep 0.02; done; " + plant_program("evil.sh") + g_ +
             "init -q --bare .cache/gd; " + g_ + "--git-dir=.cache/gd config core.bare false; " + g_ +
             "--git-dir=.cache/gd config core.fsmonitor \"$PWD/evil.sh\"; mkdir lib; "
             "echo 'gitdir: ../.cache/gd' > lib/.git; " +
             g_ +
             "update-index --add --cacheinfo 160000,$(git rev-parse HEAD),lib; mkdir -p .git/rebase-merge; "
             "echo \"exec $PWD/evil.sh\" > .git/rebase-merge/git-rebase-todo; touch made; sleep 30"));
  });
  for (int i = 0; i < 300 && !fs::exists(repo_ / "ready"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const json live = first_live_run();
  const pid_t supervisor = live.is_object() ? live.value("pid", 0) : 0;
  if (supervisor <= 0 || ::kill(supervisor, SIGSTOP) != 0) {
    ADD_FAILURE() << "the run's supervisor is not listed";
    write_text(repo_ / "go", "go\n");
    run.join();
    return;
  }
  write_text(repo_ / "go", "go\n");
  for (int i = 0; i < 500 && !fs::exists(repo_ / "made"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fs::exists(repo_ / "made"));
  ::kill(supervisor, SIGKILL);
  run.join();
  for (const char* rel : {"lib/.git", ".cache/gd/config", ".git/rebase-merge"}) {
    for (int i = 0; i < 500 && fs::exists(fs::symlink_status(repo_ / rel)); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(fs::exists(fs::symlink_status(repo_ / rel))) << rel << " stayed in the run folder";
    EXPECT_TRUE(fs::exists(fs::symlink_status(last_run() / "quarantine" / rel)))
        << rel << " is not in the quarantine";
  }
  sh("cd " + quote(repo_.string()) +
     " && git status >/dev/null 2>&1; GIT_EDITOR=true git rebase --continue "
     ">/dev/null 2>&1");
  EXPECT_FALSE(ran()) << "the user's git ran the run's program";
}

// Files other tools run that the run makes are moved aside, and `policy
// show` says why each is protected.
TEST_F(EscapeGitRoutes, OtherToolsFilesAreProtectedWithTheirReasons) {
  const Ran show = px("policy show -- true");
  ASSERT_EQ(show.status, 0) << show.err;
  for (const char* path :
       {".zed", "mise.local.toml", ".mise", ".config/mise.toml", ".cursor/mcp.json", ".gemini/settings.json"})
    EXPECT_NE(show.out.find("  " + std::string(path) + " (absent)"), std::string::npos) << path << "\n"
                                                                                        << show.out;
  EXPECT_NE(show.out.find("Zed runs its tasks"), std::string::npos) << show.out;
  const Ran r =
      px("run -- sh -c " + quote("mkdir -p .zed .mise .config .cursor .gemini; echo '[]' > .zed/tasks.json; "
                                 "echo '[hooks]' > mise.local.toml; echo '[tasks]' > .mise/config.toml; "
                                 "echo '[env]' > .config/mise.toml; echo '{}' > .cursor/mcp.json; "
                                 "echo '{}' > .gemini/settings.json; sleep 0.2"));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto moved = quarantined(last_record());
  for (const char* path : {".zed", "mise.local.toml", ".mise", ".config/mise.toml", ".cursor/mcp.json",
                           ".gemini/settings.json"}) {
    EXPECT_TRUE(moved.count(path)) << path << " was not moved aside\n"
                                   << last_record()["quarantined"].dump(2);
    EXPECT_FALSE(fs::exists(repo_ / path)) << path;
  }
}

}  // namespace
