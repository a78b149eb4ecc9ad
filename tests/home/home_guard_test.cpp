// The home guard: every command that runs something (`run`, `agent run`,
// `harness -w`, `agent -w`, `demo`, `check --sealed`, `agent browser` and the
// MCP server's open_browser), with the real clients where they are
// installed, on a fresh empty home and on a populated one (every harness's
// state, keys, git and shell config, links). The home is listed (names,
// types, modes, owners, content hashes) before and after; the only
// differences allowed are what the command itself wrote where the policy
// lets it. Parallex's own state lives outside the home (PARALLEX_HOME,
// XDG_RUNTIME_DIR), except in the test that runs as a new user does, where
// exactly ~/.local/share/parallex (agents, snapshots) and
// ~/.local/state/parallex (run records) may change.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/paths.hpp"
#include "model_server.hpp"
#include "test_paths.hpp"
#include "tree_listing.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using px::test::compare_trees;
using px::test::list_tree;
using px::test::TreeDifference;
using px::test::TreeListing;

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& file, const std::string& text, fs::perms mode = fs::perms::none) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
  if (mode != fs::perms::none) fs::permissions(file, mode);
}

bool installed(const std::string& name) {
  const char* path = std::getenv("PATH");
  return px::find_executable(name, path ? path : "/usr/local/bin:/usr/bin:/bin").has_value();
}

bool within(const std::string& path, const std::string& prefix) {
  return path == prefix || (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
                            path[prefix.size()] == '/');
}

// Which differences a command may make in the home, relative paths.
struct Allowed {
  std::set<std::string> written;   // exactly these files, added or changed
  std::vector<std::string> under;  // anything below these (a harness's state, a workspace)
  bool allows(const TreeDifference& d) const {
    if (written.count(d.path) && (!d.after || d.after->type == 'f')) return true;
    for (const auto& p : under) {
      if (within(d.path, p)) return true;
      // The folders above a place the command may write, made to hold it.
      if (d.after && !d.before && d.after->type == 'd' && within(p, d.path)) return true;
    }
    return false;
  }
};

struct Ran {
  int status = -1;
  std::string output;
};

enum class HomeKind { empty, populated };

class HomeGuard : public ::testing::TestWithParam<HomeKind> {
 protected:
  void SetUp() override {
    if (!fs::exists(parallex())) GTEST_SKIP() << "SKIPPED: the parallex executable was not built";
    std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / "home-guard-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = fs::canonical(tmpl);
    home_ = root_ / "home";
    proj_ = home_ / "code/proj";
    fs::create_directories(proj_);
    fs::create_directories(root_ / "data");
    fs::create_directories(root_ / "runtime");
    fs::permissions(root_ / "runtime", fs::perms::owner_all);
    write_text(proj_ / "README", "hello\n");
    write_text(proj_ / "edit.txt", "old line\n");
    const std::string git = "git -C '" + proj_.string() + "' -c user.name=t -c user.email=t@example.com ";
    ASSERT_EQ(std::system((git + "init -q && " + git + "add -A && " + git + "commit -qm base").c_str()), 0);
    if (GetParam() == HomeKind::populated) populate();
  }
  void TearDown() override {
    std::error_code ec;
    if (root_.empty()) return;
    if (!HasFailure())
      fs::remove_all(root_, ec);
    else
      std::printf("[ kept ] %s\n", root_.c_str());
  }

  // What a user's home holds: every harness's state, secrets, config, links.
  void populate() {
    const auto secret = fs::perms::owner_read | fs::perms::owner_write;
    write_text(home_ / ".claude.json",
               R"({"numStartups": 7, "projects": {}})"
               "\n",
               secret);
    write_text(home_ / ".claude/settings.json", R"({"model": "opus"})"
                                                "\n");
    write_text(home_ / ".claude/CLAUDE.md", "Be brief.\n");
    write_text(home_ / ".claude/.credentials.json", R"({"claudeAiOauth": {"accessToken": "x"}})", secret);
    write_text(home_ / ".claude/projects/-home-user-old/0a1b.jsonl", R"({"type":"user"})"
                                                                     "\n");
    write_text(home_ / ".codex/config.toml", "model = \"gpt-5\"\n");
    write_text(home_ / ".codex/auth.json", R"({"OPENAI_API_KEY": "sk-x"})", secret);
    write_text(home_ / ".codex/sessions/2026/01/01/rollout-1.jsonl", "{}\n");
    write_text(home_ / ".config/opencode/opencode.json", R"({"autoupdate": false})");
    write_text(home_ / ".local/share/opencode/auth.json", R"({"anthropic": {"type": "api"}})", secret);
    write_text(home_ / ".local/share/opencode/storage/session/info/s1.json", "{}");
    write_text(home_ / ".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\nx\n", secret);
    write_text(home_ / ".ssh/id_ed25519.pub", "ssh-ed25519 AAAA user@host\n");
    write_text(home_ / ".ssh/config", "Host *\n  IdentitiesOnly yes\n");
    fs::permissions(home_ / ".ssh", fs::perms::owner_all);
    write_text(home_ / ".gitconfig", "[user]\n\tname = User\n\temail = user@example.com\n");
    write_text(home_ / ".bashrc", "export EDITOR=vi\n");
    write_text(home_ / ".profile", ". ~/.bashrc\n");
    write_text(home_ / ".config/gh/hosts.yml", "github.com:\n  oauth_token: gho_x\n", secret);
    write_text(home_ / ".aws/credentials", "[default]\naws_secret_access_key = x\n", secret);
    write_text(home_ / ".netrc", "machine example.com login u password p\n", secret);
    write_text(home_ / ".npmrc", "//registry.npmjs.org/:_authToken=x\n", secret);
    write_text(home_ / ".local/bin/tool", "#!/bin/sh\necho tool\n", fs::perms::owner_all);
    write_text(home_ / "dotfiles/vimrc", "set nocompatible\n");
    fs::create_symlink("dotfiles/vimrc", home_ / ".vimrc");
    fs::create_symlink("/nonexistent/old", home_ / ".old-link");
    write_text(home_ / ".cache/pip/http/x", "cached\n");
  }

  static std::string parallex() { return std::string(PARALLEX_BINARY_DIR) + "/parallex"; }

  std::vector<std::string> env(bool own_state_outside = true) const {
    std::vector<std::string> e{"HOME=" + home_.string(),
                               "PATH=/usr/local/bin:/usr/bin:/bin",
                               "LANG=C.UTF-8",
                               "TERM=dumb",
                               "XDG_RUNTIME_DIR=" + (root_ / "runtime").string(),
                               "PARALLEX_PLUGIN_PATH=" + std::string(PARALLEX_PLUGIN_BUILD_DIR)};
    if (own_state_outside) e.push_back("PARALLEX_HOME=" + (root_ / "data").string());
    return e;
  }

  // Runs `parallex ARGS` in the project folder with `environment`, stdin
  // from `input` (a file) or /dev/null; output and errors together.
  Ran px(const std::vector<std::string>& args, std::vector<std::string> environment,
         const std::string& input = "") {
    std::vector<std::string> argv{parallex()};
    argv.insert(argv.end(), args.begin(), args.end());
    const fs::path log = root_ / ("out-" + std::to_string(++runs_) + ".txt");
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::chdir(proj_.c_str()) != 0) ::_exit(120);
      const int in = ::open(input.empty() ? "/dev/null" : input.c_str(), O_RDONLY);
      const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(out, 2);
      std::vector<char*> a, e;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      for (auto& s : environment) e.push_back(s.data());
      e.push_back(nullptr);
      ::execve(a[0], a.data(), e.data());
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    Ran r;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
    r.output = read_text(log);
    return r;
  }

  // Every difference of the home against `before` that `allowed` does not
  // cover, and every new name that is not printable, fails the test.
  void expect_only(const TreeListing& before, const Allowed& allowed, const std::string& what,
                   const std::string& output) {
    const TreeListing after = list_tree(home_);
    std::string bad;
    for (const auto& d : compare_trees(before, after)) {
      if (d.after && !d.before && !px::test::is_printable_name(d.path))
        bad += "  a name of garbage: " + d.describe() + "\n";
      else if (!allowed.allows(d))
        bad += "  " + d.describe() + "\n";
    }
    EXPECT_TRUE(bad.empty()) << what << " changed the home beyond what it may:\n"
                             << bad << "its output:\n"
                             << output.substr(0, 3000);
  }

  // The paths in the home the policy of `command` lets a run write, besides
  // the run folder: the harness's state (from `policy show`, as the run gets it).
  std::vector<std::string> harness_state(const std::vector<std::string>& command,
                                         const std::vector<std::string>& options = {}) {
    std::vector<std::string> args{"policy", "show", "--json"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    const Ran r = px(args, env());
    const json policy = json::parse(r.output, nullptr, false);
    std::vector<std::string> out;
    if (!policy.is_object()) {
      ADD_FAILURE() << "policy show failed: " << r.output.substr(0, 2000);
      return out;
    }
    for (const auto& a : policy["filesystem"]["allow"]) {
      const fs::path p = a["path"].get<std::string>();
      if (a["access"] == "read" || !within(p.string(), home_.string()) || within(p.string(), proj_.string()))
        continue;
      out.push_back(p.lexically_relative(home_).string());
    }
    return out;
  }

  std::string rel(const fs::path& p) const { return p.lexically_relative(home_).string(); }

  // The run's model server's script has the client write new.txt and edit edit.txt.
  Allowed scripted_task() const { return Allowed{{rel(proj_ / "new.txt"), rel(proj_ / "edit.txt")}, {}}; }

  fs::path root_, home_, proj_;
  int runs_ = 0;
};

// ---- run ---------------------------------------------------------------------

// A plain command that writes its file, and tries what harms a home.
TEST_P(HomeGuard, RunWritesOnlyItsOwnFile) {
  const TreeListing before = list_tree(home_);
  const std::string tries =
      "echo hi > notes.txt; "
      "for t in \"$HOME/planted\" \"$HOME/.bashrc\" \"$HOME/.claude.json\" \"$HOME/.ssh/authorized_keys\" "
      "\"$HOME/.config/autostart/x.desktop\"; do echo x >> \"$t\"; done; "
      "rm -rf \"$HOME/.gitconfig\" \"$HOME/.codex\"; mkdir -p \"$HOME/.claude.json.d\" \"$HOME/.ssh/x\"; "
      "ln -s / \"$HOME/.rootlink\"; chmod 777 \"$HOME\" \"$HOME/.ssh\"; mv \"$HOME/.profile\" \"$HOME/.p\"; "
      "cat \"$HOME/.ssh/id_ed25519\" >/dev/null; true";
  const Ran r = px({"run", "--", "/bin/sh", "-c", tries}, env());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_text(proj_ / "notes.txt"), "hi\n");
  expect_only(before, Allowed{{rel(proj_ / "notes.txt")}, {}}, "parallex run", r.output);
}

// A run of each harness (a script standing in for it) that writes its data
// and plants what would make the user's next unsealed session run a program:
// the data is in the home afterwards, the plants are not, and nothing else of
// the home changed (they are held back in the run's record).
TEST_P(HomeGuard, HarnessRunsLeaveTheirDataAndNoCommandRunningSettings) {
  struct Case {
    std::string harness, script;
    Allowed allowed;
  };
  const std::string py = R"(
import json, os
h = os.path.expanduser("~")
def plant_json(p, key, value):
    try: d = json.load(open(p))
    except Exception: d = {}
    d[key] = value
    d["numStartups"] = d.get("numStartups", 0) + 1
    open(p, "w").write(json.dumps(d))
def write(p, text):
    try:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write(text)
    except OSError as e:
        print(p, e.strerror)
)";
  const std::vector<Case> cases{
      {"claude-code", py + R"(
plant_json(h + "/.claude.json", "mcpServers", {"x": {"command": "/bin/sh"}})
write(h + "/.claude/projects/p/s.jsonl", "{}\n")
)",
       Allowed{{".claude.json"}, {".claude/projects"}}},
      {"codex", py + R"(
write(h + "/.codex/sessions/s.jsonl", "{}\n")
open(h + "/.codex/config.toml", "a").write('notify = ["/bin/sh"]\n')
write(h + "/.codex/rules/default.rules", "x\n")
)",
       Allowed{{}, {".codex/sessions"}}},
      {"opencode", py + R"(
write(h + "/.config/opencode/plugin/x.js", "x")
plant_json(h + "/.config/opencode/opencode.json", "mcp", {"x": {"type": "local"}})
write(h + "/.local/share/opencode/s.json", "{}")
)",
       Allowed{{}, {".local/share/opencode"}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.harness);
    const TreeListing before = list_tree(home_);
    const Ran r = px({"run", "--harness", c.harness, "--", "python3", "-c", c.script}, env());
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("parallex runs apply"), std::string::npos) << r.output;
    expect_only(before, c.allowed, "parallex run --harness " + c.harness, r.output);
  }
  const json state = json::parse(read_text(home_ / ".claude.json"), nullptr, false);
  ASSERT_TRUE(state.is_object()) << "no valid ~/.claude.json";
  EXPECT_FALSE(state.contains("mcpServers")) << state.dump();
  EXPECT_GE(state.value("numStartups", 0), 1);
  EXPECT_TRUE(fs::exists(home_ / ".claude/projects/p/s.jsonl"));
  EXPECT_TRUE(fs::exists(home_ / ".codex/sessions/s.jsonl"));
  EXPECT_TRUE(fs::exists(home_ / ".local/share/opencode/s.json"));
}

// The real clients, as a user first tries them.
TEST_P(HomeGuard, RunTheRealClients) {
  int tried = 0;
  for (const std::string client : {"claude", "codex", "opencode"}) {
    if (!installed(client)) continue;
    ++tried;
    SCOPED_TRACE(client);
    const TreeListing before = list_tree(home_);
    const Ran r = px({"run", "--", client, "--version"}, env());
    EXPECT_EQ(r.status, 0) << r.output;
    expect_only(before, Allowed{{}, harness_state({client})}, "parallex run -- " + client + " --version",
                r.output);
  }
  if (tried == 0) GTEST_SKIP() << "SKIPPED: none of claude, codex, opencode is installed";
}

// Claude Code doing a task against a model server on this machine, through
// Local servers: it writes its state where the policy lets it, of the types
// it gives them itself (compared with the same task run unsealed on a copy of
// the home), and the task's files in the project.
TEST_P(HomeGuard, RunClaudeCodeWritingItsState) {
  if (!installed("claude"))
    GTEST_SKIP() << "SKIPPED: claude is not installed (npm i -g @anthropic-ai/claude-code)";
  if (!installed("python3")) GTEST_SKIP() << "SKIPPED: python3 is needed for the scripted model server";
  const fs::path reference_home = root_ / "reference-home";
  fs::copy(home_, reference_home, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::remove_all(reference_home / "code");
  fs::create_directories(root_ / "server");
  px::test::ModelServer server(root_ / "server", proj_);
  ASSERT_GT(server.port(), 0) << "the scripted model server did not start";
  const std::string url = "http://localhost:" + std::to_string(server.port());
  const std::vector<std::string> claude{
      "claude",           "-p", "do the scripted task", "--dangerously-skip-permissions", "--model",
      "claude-sonnet-4-5"};

  const TreeListing before = list_tree(home_);
  std::vector<std::string> e = env();
  e.push_back("ANTHROPIC_BASE_URL=" + url);
  e.push_back("ANTHROPIC_API_KEY=sk-ant-home-guard-fake-0000000000");
  std::vector<std::string> args{"run", "--local-servers", "--"};
  args.insert(args.end(), claude.begin(), claude.end());
  const Ran r = px(args, e);
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_EQ(server.actions().size(), 5u) << r.output;
  Allowed allowed = scripted_task();
  allowed.under = harness_state({"claude"}, {"--local-servers"});
  expect_only(before, allowed, "parallex run -- claude -p", r.output);

  // The same task unsealed, on a copy of the home: whatever both made has
  // the type Claude Code gives it (a state file is never made a directory).
  const TreeListing ref_before = list_tree(reference_home);
  // Its temp files (claude-<uid>, cc-socks) in the test's folder, not the machine's /tmp.
  fs::create_directories(root_ / "reference-tmp");
  std::string cmd = "cd '" + proj_.string() +
                    "' && git checkout -q edit.txt && rm -f new.txt && env -i HOME='" +
                    reference_home.string() + "' TMPDIR='" + (root_ / "reference-tmp").string() +
                    "' PATH=/usr/local/bin:/usr/bin:/bin IS_SANDBOX=1 ANTHROPIC_BASE_URL=" + url +
                    " ANTHROPIC_API_KEY=sk-ant-home-guard-fake-0000000000 timeout 300";
  for (const auto& a : claude) cmd += " '" + a + "'";
  cmd += " </dev/null >'" + (root_ / "reference.log").string() + "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_text(root_ / "reference.log");
  const TreeListing ref_after = list_tree(reference_home);
  const TreeListing after = list_tree(home_);
  for (const auto& d : compare_trees(ref_before, ref_after)) {
    if (!d.after) continue;
    const auto sealed = after.find(d.path);
    if (sealed == after.end()) continue;
    EXPECT_EQ(sealed->second.type, d.after->type)
        << d.path << ": Claude Code makes it of type " << d.after->type << ", the sealed run left type "
        << sealed->second.type;
  }
}

// ---- agent run ---------------------------------------------------------------

TEST_P(HomeGuard, AgentRunTouchesNothingOfTheUsersHome) {
  const TreeListing before = list_tree(home_);
  const Ran made =
      px({"agent", "new", "guard", "--email", "guard@example.com", "--local-servers", "on"}, env());
  ASSERT_EQ(made.status, 0) << made.output;
  const Ran r = px({"agent", "run", "guard", "--", "/bin/sh", "-c",
                    "echo hi > notes.txt; echo x >> \"$HOME/.bashrc\"; mkdir -p \"$HOME/.claude\"; true"},
                   env());
  EXPECT_EQ(r.status, 0) << r.output;
  Allowed allowed{{rel(proj_ / "notes.txt")}, {}};
  expect_only(before, allowed, "parallex agent run", r.output);

  if (!installed("claude") || !installed("python3")) return;
  fs::create_directories(root_ / "server");
  px::test::ModelServer server(root_ / "server", proj_);
  ASSERT_GT(server.port(), 0);
  std::vector<std::string> e = env();
  e.push_back("ANTHROPIC_BASE_URL=http://localhost:" + std::to_string(server.port()));
  e.push_back("ANTHROPIC_API_KEY=sk-ant-home-guard-fake-0000000000");
  const TreeListing before_claude = list_tree(home_);
  const Ran c = px({"agent", "run", "guard", "--", "claude", "-p", "do the scripted task",
                    "--dangerously-skip-permissions", "--model", "claude-sonnet-4-5"},
                   e);
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_EQ(server.actions().size(), 5u) << c.output;
  expect_only(before_claude, scripted_task(), "parallex agent run -- claude -p", c.output);
}

// ---- workspaced tabs ----------------------------------------------------------

// A workspace is the project's git worktree: its folder under .parallex, its
// branch and worktree bookkeeping in .git. Nothing else, and never the
// repository's config or hooks.
Allowed workspace_bookkeeping(const std::string& proj) {
  return Allowed{{proj + "/.git/info/exclude"},
                 {proj + "/.parallex", proj + "/.git/worktrees", proj + "/.git/refs/heads/parallex",
                  proj + "/.git/logs/refs/heads/parallex"}};
}

TEST_P(HomeGuard, HarnessWorkspaceTouchesOnlyItsWorkspace) {
  const TreeListing before = list_tree(home_);
  const Ran r = px({"harness", "-w", "--name", "guard", "--", "/bin/sh", "-c",
                    "echo hi > notes.txt; echo x >> \"$HOME/.bashrc\"; true"},
                   env());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("does not exist, so the run could create it"), std::string::npos) << r.output;
  expect_only(before, workspace_bookkeeping(rel(proj_)), "parallex harness -w", r.output);
}

TEST_P(HomeGuard, AgentWorkspaceTouchesOnlyItsWorkspace) {
  const Ran made = px({"agent", "new", "guardw", "--email", "guardw@example.com"}, env());
  ASSERT_EQ(made.status, 0) << made.output;
  const TreeListing before = list_tree(home_);
  const Ran r = px({"agent", "-w", "guardw", "--name", "guardw", "--", "/bin/sh", "-c",
                    "echo hi > notes.txt; echo x >> \"$HOME/.bashrc\"; true"},
                   env());
  EXPECT_EQ(r.status, 0) << r.output;
  expect_only(before, workspace_bookkeeping(rel(proj_)), "parallex agent -w", r.output);
}

// ---- demo, check --sealed ----------------------------------------------------

TEST_P(HomeGuard, DemoAndCheckSealedTouchNothing) {
  const TreeListing before = list_tree(home_);
  const Ran demo = px({"demo"}, env());
  EXPECT_EQ(demo.status, 0) << demo.output;
  expect_only(before, Allowed{}, "parallex demo", demo.output);
  const Ran check = px({"check", "--sealed"}, env());
  EXPECT_EQ(check.status, 0) << check.output;
  expect_only(before, Allowed{}, "parallex check --sealed", check.output);
}

// ---- browsers: the MCP server's open_browser and `agent browser` ---------------

TEST_P(HomeGuard, BrowsersTouchNothing) {
  if (!installed("chromium") && !installed("chromium-browser") && !installed("google-chrome"))
    GTEST_SKIP() << "SKIPPED: no Chromium installed (apt-get install chromium)";
  std::vector<std::string> e = env();
  e.push_back("PARALLEX_BROWSER_HEADLESS=1");
  const fs::path input = root_ / "mcp-input.jsonl";
  write_text(input,
             R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
             R"("capabilities":{},"clientInfo":{"name":"guard","version":"1"}}})"
             "\n"
             R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
             "\n"
             R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"open_browser",)"
             R"("arguments":{"url":"about:blank"}}})"
             "\n");
  const TreeListing before = list_tree(home_);
  const Ran mcp = px({"mcp"}, e, input.string());
  EXPECT_NE(mcp.output.find("\"id\":1"), std::string::npos) << mcp.output;
  EXPECT_NE(mcp.output.find("throwaway profile"), std::string::npos) << mcp.output;
  expect_only(before, Allowed{}, "the MCP server's open_browser", mcp.output);

  const Ran made = px({"agent", "new", "guardb", "--email", "guardb@example.com"}, env());
  ASSERT_EQ(made.status, 0) << made.output;
  const TreeListing before_agent = list_tree(home_);
  const Ran browser = px({"agent", "browser", "guardb", "about:blank"}, e);
  EXPECT_EQ(browser.status, 0) << browser.output;
  expect_only(before_agent, Allowed{}, "parallex agent browser", browser.output);
}

// ---- as a new user runs it -----------------------------------------------------

// No PARALLEX_HOME: Parallex keeps its state in ~/.local/share/parallex and its
// run records in ~/.local/state/parallex (the XDG places), and those are the
// only places of the home that may change besides the command's file.
TEST_P(HomeGuard, AsANewUserOnlyParallexsOwnStateIsAdded) {
  const TreeListing before = list_tree(home_);
  const Ran r = px({"run", "--", "/bin/sh", "-c", "echo hi > notes.txt"}, env(false));
  EXPECT_EQ(r.status, 0) << r.output;
  const Ran made = px({"agent", "new", "newuser", "--email", "newuser@example.com"}, env(false));
  EXPECT_EQ(made.status, 0) << made.output;
  const Ran agent =
      px({"agent", "run", "newuser", "--", "/bin/sh", "-c", "echo more >> notes.txt"}, env(false));
  EXPECT_EQ(agent.status, 0) << agent.output;
  expect_only(before, Allowed{{rel(proj_ / "notes.txt")}, {".local/share/parallex", ".local/state/parallex"}},
              "a new user's runs", r.output + made.output + agent.output);
  EXPECT_TRUE(fs::is_directory(home_ / ".local/state/parallex/runs"));
  EXPECT_TRUE(fs::is_directory(home_ / ".local/state/parallex/agents/newuser/runs"));
}

INSTANTIATE_TEST_SUITE_P(Homes, HomeGuard, ::testing::Values(HomeKind::empty, HomeKind::populated),
                         [](const auto& param_info) {
                           return param_info.param == HomeKind::empty ? "Empty" : "Populated";
                         });

}  // namespace
