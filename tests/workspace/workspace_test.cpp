// Workspaces against real repositories made with the git CLI, and workspaced
// runs of the built `parallex` executable: the seal checked from inside.
#include "workspace/workspace.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "scratch.hpp"
#include "test_paths.hpp"
#include "workspace/config.hpp"
#include "workspace/github_token.hpp"
#include "workspace/project.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
namespace ws = px::workspace;

namespace {

const std::string kToken =
    "github_pat_11AAAAAAA0aaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Ran {
  int status = -1;
  std::string out, err;
};

class WorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Under the build dir, not /tmp: inside the seal /tmp is the run's own.
    std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / "ws-test-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = fs::canonical(tmpl);
    home_ = root_ / "home";
    repo_ = home_ / "project";
    fs::create_directories(repo_ / "src" / "deep");
    fs::create_directories(home_ / ".config" / "gh");
    std::ofstream(home_ / ".config/gh/config.yml") << "git_protocol: https\n";
    std::ofstream(home_ / ".config/gh/hosts.yml")
        << "github.com:\n  oauth_token: gho_secretsecretsecretsecret\n";
    std::ofstream(home_ / ".gitconfig") << "[user]\n\tname = Test\n\temail = test@example.com\n";
    std::ofstream(repo_ / "README.md") << "hello\n";
    std::ofstream(repo_ / "src/deep/file.txt") << "deep\n";
    ASSERT_EQ(git(repo_, "init -q -b main"), 0);
    ASSERT_EQ(git(repo_, "add -A"), 0);
    ASSERT_EQ(git(repo_, "commit -qm initial"), 0);
  }
  void TearDown() override { px::test::remove_unless_failed(root_, HasFailure()); }

  std::string env_prefix() const {
    return "env -i HOME=" + quote(home_.string()) +
           " PATH=" + quote(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin") +
           " LANG=C.UTF-8 GIT_CONFIG_NOSYSTEM=1 PARALLEX_HOME=" + quote((root_ / "data").string()) +
           " XDG_RUNTIME_DIR=" + quote((root_ / "runtime").string()) +
           " PARALLEX_PLUGIN_PATH=" + quote(PARALLEX_PLUGIN_BUILD_DIR) + " ";
  }

  int git(const fs::path& dir, const std::string& args) {
    const std::string cmd =
        "cd " + quote(dir.string()) + " && " + env_prefix() + "git " + args + " >/dev/null 2>&1";
    return std::system(cmd.c_str());
  }
  std::string git_out(const fs::path& dir, const std::string& args) {
    return run_sh("cd " + quote(dir.string()) + " && " + env_prefix() + "git " + args).out;
  }
  Ran run_sh(const std::string& cmd) {
    const fs::path out = root_ / "cmd.out", err = root_ / "cmd.err";
    Ran r;
    const int s = std::system((cmd + " >" + quote(out.string()) + " 2>" + quote(err.string())).c_str());
    r.status = WIFEXITED(s) ? WEXITSTATUS(s) : 128;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
  }
  // Runs `parallex ARGS` in `dir`.
  Ran px(const fs::path& dir, const std::string& args) {
    fs::create_directories(root_ / "runtime");
    ::chmod((root_ / "runtime").c_str(), 0700);
    return run_sh("cd " + quote(dir.string()) + " && " + env_prefix() + quote(parallex()) + " " + args +
                  " </dev/null");
  }
  // PARALLEX_TEST_EXE runs another build of parallex (e.g. one with a backend fix).
  static std::string parallex() {
    if (const char* exe = std::getenv("PARALLEX_TEST_EXE"); exe && *exe) return exe;
    return std::string(PARALLEX_BINARY_DIR) + "/parallex";
  }

  // What must be unchanged after a refused `workspace new`.
  std::string repo_state() {
    return git_out(repo_, "branch -a --list") + "|" + git_out(repo_, "worktree list --porcelain") + "|" +
           (fs::exists(repo_ / ".parallex/workspaces")
                ? std::to_string(std::distance(fs::directory_iterator(repo_ / ".parallex/workspaces"),
                                               fs::directory_iterator{}))
                : "none");
  }

  std::vector<json> events(const fs::path& file) {
    std::vector<json> out;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
    return out;
  }

  fs::path root_, home_, repo_;
};

// ---------------------------------------------------------------- unit parts

TEST(ProjectConfig, ParsesTheKnownKeys) {
  auto c = ws::parse_project_config(
      "sandbox_workspaces: false\nprofile: developer\nallow: [github.com, npmjs.org]\n", "config.yaml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_FALSE(c.value().sandbox_workspaces);
  EXPECT_EQ(c.value().sandbox_workspaces_line, 1);
  EXPECT_EQ(c.value().profile, "developer");
  EXPECT_EQ(c.value().allow, (std::vector<std::string>{"github.com", "npmjs.org"}));
  auto empty = ws::parse_project_config("", "config.yaml");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty.value().sandbox_workspaces);
  EXPECT_FALSE(empty.value().has_allow);
}

TEST(ProjectConfig, ErrorsNameFileAndLine) {
  auto unknown = ws::parse_project_config("profile: x\nsandboxWorkspaces: false\n", "c.yaml");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("c.yaml:2:"), std::string::npos) << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("sandboxWorkspaces"), std::string::npos);
  auto type = ws::parse_project_config("sandbox_workspaces: maybe\n", "c.yaml");
  ASSERT_FALSE(type);
  EXPECT_NE(type.error().message.find("c.yaml:1:"), std::string::npos) << type.error().message;
  auto host = ws::parse_project_config("allow:\n  - https://github.com\n", "c.yaml");
  ASSERT_FALSE(host);
  EXPECT_NE(host.error().message.find("c.yaml:2:"), std::string::npos) << host.error().message;
  auto yaml = ws::parse_project_config("allow: [github.com\n", "c.yaml");
  ASSERT_FALSE(yaml);
  EXPECT_NE(yaml.error().message.find("malformed YAML"), std::string::npos) << yaml.error().message;
  EXPECT_FALSE(ws::parse_project_config("- a\n- b\n", "c.yaml"));
}

TEST(GithubToken, Shapes) {
  EXPECT_EQ(ws::check_github_token(kToken), "");
  EXPECT_EQ(ws::check_github_token("ghp_" + std::string(36, 'a')), "");
  EXPECT_NE(ws::check_github_token(""), "");
  EXPECT_NE(ws::check_github_token("gho_" + std::string(36, 'a')), "");
  EXPECT_NE(ws::check_github_token("ghp_short"), "");
  EXPECT_NE(ws::check_github_token("ghp_" + std::string(36, 'a') + "\nextra"), "");
  EXPECT_NE(ws::check_github_token("https://github.com/settings/tokens"), "");
}

TEST(WorkspaceName, Rules) {
  EXPECT_TRUE(ws::check_workspace_name("fix-login_2.0"));
  for (const char* bad : {"", "-x", ".x", "a b", "a/b", "../x", "x..y", "x.lock", "x.", "ä"})
    EXPECT_FALSE(ws::check_workspace_name(bad)) << bad;
  EXPECT_FALSE(ws::check_workspace_name(std::string(65, 'a')));
}

// ------------------------------------------------------- new, list and rm

TEST_F(WorkspaceTest, NewFromASubdirectoryListAndRemove) {
  auto made = px(repo_ / "src" / "deep", "workspace new fix-1");
  ASSERT_EQ(made.status, 0) << made.err;
  const fs::path path = repo_ / ".parallex/workspaces/fix-1";
  EXPECT_TRUE(fs::exists(path / "README.md"));
  EXPECT_TRUE(fs::is_regular_file(path / ".git")) << "a worktree's .git is a file";
  EXPECT_EQ(git_out(path, "rev-parse --abbrev-ref HEAD"), "parallex/fix-1\n");
  EXPECT_NE(read_file(repo_ / ".git/info/exclude").find("/.parallex/"), std::string::npos);
  EXPECT_EQ(git_out(repo_, "status --porcelain"), "") << "the workspace is git-ignored in the main tree";
  EXPECT_FALSE(fs::exists(repo_ / ".gitignore")) << "the user's .gitignore is not touched";

  auto list = px(repo_, "workspace list --json");
  ASSERT_EQ(list.status, 0) << list.err;
  auto j = json::parse(list.out);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["name"], "fix-1");
  EXPECT_EQ(j[0]["branch"], "parallex/fix-1");
  EXPECT_EQ(j[0]["state"], "clean");
  EXPECT_EQ(j[0]["ahead"], 0);
  EXPECT_EQ(j[0]["behind"], 0);
  EXPECT_EQ(j[0]["base"], "refs/heads/main");
  EXPECT_EQ(fs::path(j[0]["path"].get<std::string>()), fs::canonical(path));

  // Ahead and behind against the base, dirty with a change.
  std::ofstream(path / "new.txt") << "x\n";
  ASSERT_EQ(git(path, "add new.txt"), 0);
  ASSERT_EQ(git(path, "commit -qm 'add new'"), 0);
  std::ofstream(repo_ / "README.md") << "changed on main\n";
  ASSERT_EQ(git(repo_, "commit -qam 'main moves'"), 0);
  std::ofstream(path / "README.md") << "dirty\n";
  j = json::parse(px(repo_, "workspace list --json").out);
  EXPECT_EQ(j[0]["state"], "dirty");
  EXPECT_EQ(j[0]["ahead"], 1);
  EXPECT_EQ(j[0]["behind"], 1);
  auto table = px(repo_, "workspace list");
  EXPECT_NE(table.out.find("+1/-1"), std::string::npos) << table.out;

  // rm refuses and says what would be lost: the change and the commit.
  auto refused = px(repo_, "workspace rm fix-1");
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.err.find("README.md"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("add new"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;
  EXPECT_TRUE(fs::exists(path / "new.txt"));

  // Committed but not merged anywhere: still refused.
  ASSERT_EQ(git(path, "checkout -q README.md"), 0);
  refused = px(repo_, "workspace rm fix-1");
  EXPECT_NE(refused.status, 0);
  EXPECT_EQ(refused.err.find("uncommitted"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("add new"), std::string::npos) << refused.err;

  // Merged into main: nothing is lost, so no --force is needed.
  ASSERT_EQ(git(repo_, "merge -q --no-edit parallex/fix-1"), 0);
  auto removed = px(repo_, "workspace rm fix-1");
  ASSERT_EQ(removed.status, 0) << removed.err;
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(git_out(repo_, "branch --list parallex/*"), "");
  EXPECT_EQ(git_out(repo_, "worktree list --porcelain").find("fix-1"), std::string::npos);
}

TEST_F(WorkspaceTest, ForceThrowsAwayAndSaysWhat) {
  ASSERT_EQ(px(repo_, "workspace new scratch").status, 0);
  const fs::path path = repo_ / ".parallex/workspaces/scratch";
  std::ofstream(path / "a.txt") << "a\n";
  ASSERT_EQ(git(path, "add a.txt"), 0);
  ASSERT_EQ(git(path, "commit -qm 'only here'"), 0);
  std::ofstream(path / "untracked.txt") << "u\n";
  auto forced = px(repo_, "workspace rm scratch --force");
  ASSERT_EQ(forced.status, 0) << forced.err;
  EXPECT_NE(forced.out.find("untracked.txt"), std::string::npos) << forced.out;
  EXPECT_NE(forced.out.find("only here"), std::string::npos) << forced.out;
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(git_out(repo_, "branch --list parallex/*"), "");
  EXPECT_FALSE(fs::exists(repo_ / ".git/worktrees/scratch"));
}

TEST_F(WorkspaceTest, WorksWithSubmodulesAndExistingWorktrees) {
  const fs::path lib = root_ / "lib";
  fs::create_directories(lib);
  std::ofstream(lib / "lib.txt") << "lib\n";
  ASSERT_EQ(git(lib, "init -q -b main"), 0);
  ASSERT_EQ(git(lib, "add -A"), 0);
  ASSERT_EQ(git(lib, "commit -qm lib"), 0);
  ASSERT_EQ(
      git(repo_, "-c protocol.file.allow=always submodule add -q " + quote(lib.string()) + " vendor/lib"), 0);
  ASSERT_EQ(git(repo_, "commit -qm 'add submodule'"), 0);
  ASSERT_EQ(git(repo_, "worktree add -q -b other " + quote((root_ / "other").string())), 0);

  auto made = px(repo_ / "vendor", "workspace new with-sub");
  ASSERT_EQ(made.status, 0) << made.err;
  EXPECT_TRUE(fs::exists(repo_ / ".parallex/workspaces/with-sub/.gitmodules"));
  // From inside the user's own worktree, the project is still the main one.
  auto from_worktree = px(root_ / "other", "workspace new from-other");
  ASSERT_EQ(from_worktree.status, 0) << from_worktree.err;
  EXPECT_TRUE(fs::exists(repo_ / ".parallex/workspaces/from-other"));
  // And from inside a workspace too.
  auto from_ws = px(repo_ / ".parallex/workspaces/with-sub", "workspace list --json");
  ASSERT_EQ(from_ws.status, 0) << from_ws.err;
  auto j = json::parse(from_ws.out);
  ASSERT_EQ(j.size(), 2u) << "the user's own worktree is not listed";
  EXPECT_EQ(j[0]["name"], "from-other");
  EXPECT_EQ(j[1]["name"], "with-sub");
  EXPECT_EQ(j[1]["state"], "clean");

  // A user's worktree's name is taken, and is not ours to remove.
  const std::string before = repo_state();
  auto taken = px(repo_, "workspace new other");
  EXPECT_NE(taken.status, 0);
  EXPECT_NE(taken.err.find("worktree named 'other'"), std::string::npos) << taken.err;
  EXPECT_EQ(repo_state(), before);
  auto not_ours = px(repo_, "workspace rm other --force");
  EXPECT_NE(not_ours.status, 0);
  EXPECT_TRUE(fs::exists(root_ / "other"));
  EXPECT_EQ(px(repo_, "workspace rm with-sub").status, 0);
}

TEST_F(WorkspaceTest, BadInputLeavesNothingBehind) {
  // Not in a repository: under /tmp, since the build dir may lie inside this project's own clone.
  std::string plain_tmpl = "/tmp/px-ws-plain-XXXXXX";
  ASSERT_TRUE(::mkdtemp(plain_tmpl.data()));
  const fs::path plain = plain_tmpl;
  auto outside = px(plain, "workspace new x");
  std::error_code plain_ec;
  fs::remove_all(plain, plain_ec);
  EXPECT_NE(outside.status, 0);
  EXPECT_NE(outside.err.find("not inside a git repository"), std::string::npos) << outside.err;
  // A bare repository.
  ASSERT_EQ(git(root_, "clone -q --bare " + quote(repo_.string()) + " bare.git"), 0);
  auto bare = px(root_ / "bare.git", "workspace new x");
  EXPECT_NE(bare.status, 0);
  EXPECT_NE(bare.err.find("bare repository"), std::string::npos) << bare.err;
  EXPECT_FALSE(fs::exists(root_ / "bare.git/.parallex"));

  ASSERT_EQ(px(repo_, "workspace new taken").status, 0);
  const std::string before = repo_state();
  // An existing name, invalid names, a base that does not exist.
  auto exists = px(repo_, "workspace new taken");
  EXPECT_NE(exists.status, 0);
  EXPECT_NE(exists.err.find("already exists"), std::string::npos) << exists.err;
  for (const char* bad : {"'../escape'", "'a b'", "-x", "'x.lock'"}) {
    auto r = px(repo_, std::string("workspace new -- ") + bad);
    EXPECT_NE(r.status, 0) << bad;
    EXPECT_NE(r.err.find("not a usable workspace name"), std::string::npos) << r.err;
  }
  auto no_base = px(repo_, "workspace new y --from no-such-branch");
  EXPECT_NE(no_base.status, 0);
  EXPECT_NE(no_base.err.find("no-such-branch"), std::string::npos) << no_base.err;
  EXPECT_EQ(repo_state(), before);
  EXPECT_FALSE(fs::exists(root_ / "escape"));

  // A malformed config: file and line, nothing made.
  std::ofstream(repo_ / ".parallex/config.yaml") << "sandbox_workspaces: true\nallow: github.com\n";
  auto config = px(repo_, "workspace new z");
  EXPECT_NE(config.status, 0);
  EXPECT_NE(config.err.find("config.yaml:2:"), std::string::npos) << config.err;
  EXPECT_EQ(repo_state(), before);
  fs::remove(repo_ / ".parallex/config.yaml");

  // A detached HEAD: refused without --from (no branch to measure against), fine with it.
  ASSERT_EQ(git(repo_, "checkout -q --detach"), 0);
  const std::string detached_before = repo_state();
  auto detached = px(repo_, "workspace new d");
  EXPECT_NE(detached.status, 0);
  EXPECT_NE(detached.err.find("detached"), std::string::npos) << detached.err;
  EXPECT_NE(detached.err.find("--from"), std::string::npos) << detached.err;
  EXPECT_EQ(repo_state(), detached_before);
  auto with_from = px(repo_, "workspace new d --from HEAD");
  EXPECT_EQ(with_from.status, 0) << with_from.err;
}

TEST_F(WorkspaceTest, AFailureHalfWayRollsBackTheBranch) {
  // libgit2 cannot make worktrees/NAME when worktrees is a file: the branch,
  // made just before, must go again.
  std::ofstream(repo_ / ".git/worktrees") << "in the way\n";
  auto r = px(repo_, "workspace new half");
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(git_out(repo_, "branch --list parallex/*"), "") << r.err;
  EXPECT_FALSE(fs::exists(repo_ / ".parallex/workspaces/half"));
  EXPECT_EQ(read_file(repo_ / ".git/worktrees"), "in the way\n") << "the user's file is left alone";
}

TEST_F(WorkspaceTest, LibraryFindsTheProjectFromAWorkspace) {
  auto p = ws::find_project(repo_ / "src");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p.value().root, fs::canonical(repo_));
  auto w = ws::create_workspace(p.value(), {std::string("lib-made"), std::nullopt});
  ASSERT_TRUE(w) << w.error().message;
  auto again = ws::find_project(w.value().path);
  ASSERT_TRUE(again);
  EXPECT_EQ(again.value().root, fs::canonical(repo_));
  EXPECT_EQ(again.value().common_dir, fs::canonical(repo_ / ".git"));
  EXPECT_TRUE(ws::remove_workspace(p.value(), "lib-made", false));
}

// ------------------------------------------------------- workspaced runs

class WorkspacedRunTest : public WorkspaceTest {
 protected:
  void SetUp() override {
    WorkspaceTest::SetUp();
    if (HasFatalFailure()) return;
    if (!fs::exists(parallex())) GTEST_SKIP() << "SKIPPED: the parallex executable was not built";
  }
  // Skips when this kernel cannot seal (the notice says so on the first line).
  bool unsealable(const Ran& r) { return r.err.find("isolation is not active") != std::string::npos; }
};

// Whether `p` lies where a sealed run sees its own private temp dir.
bool under_private_temp(const fs::path& p) {
  for (const char* t : {"/tmp", "/var/tmp"}) {
    const std::string prefix = std::string(t) + "/";
    if (p.string().rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The probe runs inside the seal and writes what worked to results.txt.
const char* kProbe = R"(#!/bin/sh
check() { if ( eval "$2" ) >/dev/null 2>&1; then echo "$1 ok"; else echo "$1 no"; fi >> results.txt; }
check write_inside 'echo x > inside.txt'
check write_outside_home 'echo x > "$HOME/escape.txt"'
check write_outside_root "echo x > $OUTSIDE"
check read_main_tree 'cat ../../../README.md'
check read_gh_config 'cat "$HOME/.config/gh/config.yml"'
check read_gh_hosts 'cat "$HOME/.config/gh/hosts.yml"'
check plant_hook "echo id > $COMMON/hooks/pre-commit"
check write_git_config "echo '[core]' >> $COMMON/config"
check rewrite_commondir "echo /elsewhere > $COMMON/worktrees/$PARALLEX_WORKSPACE/commondir"
check move_other_branch "echo 0000000000000000000000000000000000000000 > $COMMON/refs/heads/main"
check git_commit 'git add inside.txt && git commit -qm "made inside"'
echo "token=$GH_TOKEN" > env.txt
echo "gh_config_dir=$GH_CONFIG_DIR" >> env.txt
echo "node=$PARALLEX_NODE" >> env.txt
echo "network=$PARALLEX_NETWORK" >> env.txt
echo "proxy=$HTTPS_PROXY" >> env.txt
)";

TEST_F(WorkspacedRunTest, TheSealFromInside) {
  // The probe is committed, so the fresh workspace has it.
  std::ofstream(repo_ / "probe.sh") << kProbe;
  ASSERT_EQ(git(repo_, "add probe.sh"), 0);
  ASSERT_EQ(git(repo_, "commit -qm probe"), 0);
  fs::create_directories(repo_ / ".parallex");
  std::ofstream(repo_ / ".parallex/github-token") << kToken << "\n";
  const fs::path outside = root_ / "outside.txt";
  const fs::path events_file = root_ / "events.jsonl";
  auto r = px(repo_, "harness -w --name sealed --events " + quote(events_file.string()) +
                         " -- /usr/bin/env OUTSIDE=" + quote(outside.string()) +
                         " COMMON=" + quote((repo_ / ".git").string()) + " /bin/sh probe.sh");
  if (unsealable(r)) GTEST_SKIP() << "SKIPPED: this kernel cannot seal: " << r.err;
  ASSERT_EQ(r.status, 0) << r.err;
  const fs::path ws_path = repo_ / ".parallex/workspaces/sealed";
  const std::string results = read_file(ws_path / "results.txt");
  for (const char* allowed : {"write_inside", "read_gh_config", "git_commit"})
    EXPECT_NE(results.find(std::string(allowed) + " ok"), std::string::npos) << allowed << "\n"
                                                                             << results << r.err;
  // Under /tmp or /var/tmp (a clone there), an "outside" path lies in the
  // run's own private temp dir in its view: the write may succeed there and
  // reach nothing of the host. So the outside writes are judged by the host
  // side, and by the probe only where the run has no private view.
  const bool private_in_view = under_private_temp(root_);
  std::vector<std::string> refused{"read_main_tree",   "read_gh_hosts",     "plant_hook",
                                   "write_git_config", "rewrite_commondir", "move_other_branch"};
  if (!private_in_view) refused.insert(refused.end(), {"write_outside_home", "write_outside_root"});
  for (const auto& name : refused)
    EXPECT_NE(results.find(name + " no"), std::string::npos) << name << "\n" << results;
  EXPECT_FALSE(fs::exists(outside)) << "a write outside the workspace reached the host";
  EXPECT_FALSE(fs::exists(home_ / "escape.txt")) << "a write in the home reached the host";
  EXPECT_EQ(read_file(repo_ / ".git/worktrees/sealed/commondir").find("elsewhere"), std::string::npos);

  // The commit made inside is on the workspace's branch, seen from outside.
  EXPECT_EQ(git_out(repo_, "log -1 --format=%s parallex/sealed"), "made inside\n");
  EXPECT_EQ(git_out(repo_, "rev-parse main"), git_out(repo_, "rev-parse parallex/sealed~1"));

  const std::string env = read_file(ws_path / "env.txt");
  // Sealed, the scoped token is brokered (docs/broker.md): GH_TOKEN holds a
  // placeholder of its shape, never the token.
  const std::size_t at = env.find("token=");
  ASSERT_NE(at, std::string::npos) << env;
  const std::string inside = env.substr(at + 6, env.find('\n', at) - at - 6);
  EXPECT_EQ(inside.size(), kToken.size()) << env;
  EXPECT_EQ(inside.rfind("github_pat_", 0), 0u) << env;
  EXPECT_EQ(env.find(kToken), std::string::npos) << "the token itself is not in the run";
  EXPECT_NE(env.find("gh_config_dir=/tmp/parallex-gh"), std::string::npos) << env;
  EXPECT_NE(env.find("node=/"), std::string::npos) << env;
  EXPECT_NE(env.find("network=online"), std::string::npos) << env;
  EXPECT_EQ(env.find("proxy=\n"), std::string::npos) << "online goes through the run's proxy: " << env;

  // Events: created, started (online), ended with the changed files.
  auto ev = events(events_file);
  ASSERT_GE(ev.size(), 3u);
  EXPECT_EQ(ev.front()["event"], "workspace_created");
  EXPECT_EQ(ev.front()["name"], "sealed");
  EXPECT_EQ(ev.front()["branch"], "parallex/sealed");
  json started, ended;
  for (const auto& e : ev) {
    EXPECT_TRUE(e.contains("time"));
    if (e["event"] == "run_started") started = e;
    if (e["event"] == "run_ended") ended = e;
  }
  ASSERT_FALSE(started.is_null());
  EXPECT_EQ(started["network"]["mode"], "online");
  EXPECT_EQ(started["sealed"], true);
  EXPECT_EQ(started["github_token"], true);
  EXPECT_EQ(fs::path(started["run_folder"].get<std::string>()), fs::canonical(ws_path));
  EXPECT_EQ(started["policy_digest"].get<std::string>().size(), 64u);
  ASSERT_FALSE(ended.is_null());
  EXPECT_EQ(ended["exit_status"], 0);
  EXPECT_EQ(ended["ahead"], 1);
  const auto changed = ended["changed_files"].dump();
  EXPECT_NE(changed.find("results.txt"), std::string::npos) << changed;
  EXPECT_NE(changed.find("env.txt"), std::string::npos) << changed;
  EXPECT_EQ(changed.find("inside.txt"), std::string::npos) << "committed inside: " << changed;

  // The token never lands in the run record or the events.
  const std::string record = read_file(fs::path(ended["record"].get<std::string>()) / "run.json");
  EXPECT_EQ(record.find(kToken), std::string::npos);
  EXPECT_NE(record.find("\"workspace\""), std::string::npos);
  EXPECT_EQ(read_file(events_file).find(kToken), std::string::npos);
  EXPECT_EQ(r.err.find(kToken), std::string::npos);
}

TEST_F(WorkspacedRunTest, OfflineCutsTheNetwork) {
  const std::string probe =
      "echo \"network=$PARALLEX_NETWORK proxy=$HTTPS_PROXY\" > net.txt; "
      "if getent hosts example.com >/dev/null 2>&1; then echo dns-ok; else echo dns-no; fi >> net.txt; "
      "if timeout 5 bash -c 'exec 3<>/dev/tcp/1.1.1.1/443' 2>/dev/null; then echo tcp-ok; else echo tcp-no; "
      "fi "
      ">> net.txt";
  const fs::path events_file = root_ / "offline.jsonl";
  auto r = px(repo_, "harness -w --offline --name off --events " + quote(events_file.string()) +
                         " -- /bin/sh -c " + quote(probe));
  if (unsealable(r)) GTEST_SKIP() << "SKIPPED: this kernel cannot seal: " << r.err;
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string net = read_file(repo_ / ".parallex/workspaces/off/net.txt");
  EXPECT_NE(net.find("network=offline proxy=\n"), std::string::npos) << net;
  EXPECT_NE(net.find("dns-no"), std::string::npos) << net;
  EXPECT_NE(net.find("tcp-no"), std::string::npos) << net;
  for (const auto& e : events(events_file))
    if (e["event"] == "run_started") {
      EXPECT_EQ(e["network"]["mode"], "offline");
    }
}

TEST_F(WorkspacedRunTest, AgentDashWRunsAsTheAgentInAFreshWorkspace) {
  auto made = px(repo_, "agent new tabby --email tabby@example.com --allow example.org");
  ASSERT_EQ(made.status, 0) << made.err;
  const std::string probe =
      "echo \"agent=$PARALLEX_AGENT network=$PARALLEX_NETWORK hosts=$PARALLEX_ALLOWED_HOSTS\" > who.txt; "
      "git config user.email >> who.txt; "
      "if cat \"$HOME/.config/gh/hosts.yml\" >/dev/null 2>&1; then echo hosts-read; else echo hosts-no; fi "
      ">> who.txt";
  auto r = px(repo_, "agent -w tabby --name as-agent -- /bin/sh -c " + quote(probe));
  if (unsealable(r)) GTEST_SKIP() << "SKIPPED: this kernel cannot seal: " << r.err;
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string who = read_file(repo_ / ".parallex/workspaces/as-agent/who.txt");
  EXPECT_NE(who.find("agent=tabby network=allowlist hosts=example.org"), std::string::npos) << who;
  EXPECT_NE(who.find("tabby@example.com"), std::string::npos) << "its own git identity: " << who;
  EXPECT_EQ(who.find("test@example.com"), std::string::npos) << "never the user's: " << who;
  EXPECT_NE(who.find("hosts-no"), std::string::npos) << who;
  // The run is the agent's: its record is in the agent's store.
  EXPECT_FALSE(fs::is_empty(root_ / "data/agents/tabby/runs"));
  // `agent -w` with a sub-command, or an unknown agent, is refused before anything is made.
  auto both = px(repo_, "agent -w tabby list");
  EXPECT_NE(both.status, 0);
  auto unknown = px(repo_, "agent -w nobody -- true");
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.err.find("nobody"), std::string::npos) << unknown.err;
  EXPECT_EQ(git_out(repo_, "worktree list --porcelain").find("nobody"), std::string::npos);
}

TEST_F(WorkspacedRunTest, ProjectHostsAndRefusedHostEvents) {
  fs::create_directories(repo_ / ".parallex");
  std::ofstream(repo_ / ".parallex/config.yaml") << "allow: [example.com]\n";
  const fs::path events_file = root_ / "refused.jsonl";
  auto r =
      px(repo_, "harness -w --name hosts --events " + quote(events_file.string()) +
                    " -- /bin/sh -c 'curl -s -o /dev/null --max-time 10 https://blocked.invalid/; true'");
  if (unsealable(r)) GTEST_SKIP() << "SKIPPED: this kernel cannot seal: " << r.err;
  ASSERT_EQ(r.status, 0) << r.err;
  json started, refused;
  for (const auto& e : events(events_file)) {
    if (e["event"] == "run_started") started = e;
    if (e["event"] == "network_refused") refused = e;
  }
  EXPECT_EQ(started["network"]["mode"], "allowlist");
  EXPECT_EQ(started["network"]["hosts"], json::array({"example.com"}));
  ASSERT_FALSE(refused.is_null()) << read_file(events_file) << r.err;
  EXPECT_EQ(refused["host"], "blocked.invalid");
  EXPECT_EQ(refused["port"], 443);
  EXPECT_GE(refused["count"].get<int>(), 1);
}

TEST_F(WorkspacedRunTest, IsolationOffIsSaidFirst) {
  fs::create_directories(repo_ / ".parallex");
  std::ofstream(repo_ / ".parallex/config.yaml") << "# no seal here\nsandbox_workspaces: false\n";
  const fs::path events_file = root_ / "off.jsonl";
  auto r = px(repo_,
              "harness -w --name loose --events " + quote(events_file.string()) + " -- /bin/sh -c 'echo hi'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.rfind("parallex: UNSEALED: this run is not confined", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("sandbox_workspaces is false in "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("config.yaml:2"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "hi\n");
  auto ev = events(events_file);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.front()["event"], "notice");
  EXPECT_EQ(ev.front()["kind"], "unsealed");
  json ended;
  for (const auto& e : ev)
    if (e["event"] == "run_ended") ended = e;
  ASSERT_FALSE(ended.is_null());
  const std::string record = read_file(fs::path(ended["record"].get<std::string>()) / "run.json");
  const json j = json::parse(record);
  EXPECT_EQ(j["sealed"], false);
  EXPECT_NE(j["notices"].dump().find("sandbox_workspaces is false"), std::string::npos)
      << j["notices"].dump();
}

TEST_F(WorkspacedRunTest, BadTokenOrCommandMakesNothing) {
  fs::create_directories(repo_ / ".parallex");
  const std::string before = repo_state();
  for (const std::string& content :
       {std::string(""), std::string("\n"), std::string("gho_abcdefabcdefabcdefabcdefabcdef123456\n"),
        std::string("token: ghp_x\n")}) {
    std::ofstream(repo_ / ".parallex/github-token", std::ios::trunc) << content;
    const fs::path events_file = root_ / "bad.jsonl";
    auto r = px(repo_, "harness -w --name t --events " + quote(events_file.string()) + " -- /bin/true");
    EXPECT_NE(r.status, 0) << content;
    EXPECT_NE(r.err.find("github-token is not usable"), std::string::npos) << r.err;
    EXPECT_EQ(repo_state(), before) << content;
    auto ev = events(events_file);
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0]["event"], "error");
  }
  fs::remove(repo_ / ".parallex/github-token");
  auto no_command = px(repo_, "harness -w --name t");
  EXPECT_NE(no_command.status, 0);
  EXPECT_NE(no_command.err.find("after `--`"), std::string::npos) << no_command.err;
  auto no_w = px(repo_, "harness -- /bin/true");
  EXPECT_NE(no_w.status, 0);
  EXPECT_NE(no_w.err.find("-w"), std::string::npos) << no_w.err;
  EXPECT_EQ(repo_state(), before);
}

}  // namespace
