// The proof that the parsers read what the real programs write today: each real
// client (Claude Code, Codex, opencode) runs one scripted task against
// fake_model_server.py — read a file, write one, edit one, run a command that
// succeeds and one that fails — with its home in a temp folder. Then
// `parallex transcripts` and `parallex report` must show exactly those actions.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "common/clock.hpp"
#include "common/paths.hpp"
#include "model_server.hpp"
#include "scratch.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string sh_output(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

int sh(const std::string& command) {
  const int rc = std::system(command.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string tool(const std::string& name) {
  const char* path = std::getenv("PATH");
  auto found = px::find_executable(name, path ? path : "/usr/local/bin:/usr/bin:/bin");
  return found ? found->string() : "";
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

using px::test::ModelServer;

struct Client {
  std::string harness;     // plugin name
  std::string executable;  // on PATH
  // Codex only: its default model, which works in "code mode" (one `exec` tool running
  // JavaScript that calls the real tools), instead of -m gpt-5 and its direct tools.
  bool code_mode = false;
};

// What a test instance is called: the harness, and the mode when it is not the usual one.
std::string client_name(const Client& c) {
  std::string n = c.harness + (c.code_mode ? "_code_mode" : "");
  for (auto& ch : n)
    if (ch == '-') ch = '_';
  return n;
}

// How many actions the scripted task logs: its five steps, and in code mode a second file
// in the first patch (so that the report's order of a patch's files can be checked).
std::size_t script_actions(const Client& c) {
  return c.code_mode ? 6u : 5u;
}

// Codex's model: code mode is the default model's, given by no -m at all.
std::string codex_model(const Client& c) {
  return c.code_mode ? "" : "-m gpt-5 ";
}

class RealClient : public ::testing::TestWithParam<Client> {
 protected:
  void SetUp() override {
    const Client& c = GetParam();
    if (tool(c.executable).empty())
      GTEST_SKIP() << "SKIPPED: " << c.executable << " is not installed (npm i -g @anthropic-ai/claude-code "
                   << "@openai/codex opencode-ai); its transcripts were not checked";
    if (tool("python3").empty()) GTEST_SKIP() << "SKIPPED: python3 is needed for the scripted model server";
    if (!fs::exists(parallex())) GTEST_SKIP() << "SKIPPED: the parallex executable was not built";
    // Under the build dir, not /tmp: Codex refuses to set up its helpers under a temp dir.
    std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / "e2e-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = fs::canonical(tmpl);
    home_ = root_ / "home";
    work_ = root_ / "work";
    fs::create_directories(home_);
    fs::create_directories(work_);
    fs::create_directories(root_ / "tmp");
    std::ofstream(work_ / "edit.txt") << "old line\n";
    sh("git -C " + quote(work_.string()) + " init -q");
  }
  void TearDown() override { px::test::remove_unless_failed(root_, HasFailure()); }

  static std::string parallex() { return std::string(PARALLEX_BINARY_DIR) + "/parallex"; }
  static std::string plugin_env() { return "PARALLEX_PLUGIN_PATH=" + quote(PARALLEX_PLUGIN_BUILD_DIR) + " "; }

  // Runs the client in work_ with its home in home_; returns its exit status.
  int run_client(int port) {
    const std::string base =
        "cd " + quote(work_.string()) + " && env -i HOME=" + quote(home_.string()) +
        " PATH=" + quote(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin") +
        " TERM=dumb LANG=C.UTF-8 " +
        // What a client unpacks for itself (opencode's native libraries) stays in the test's folder.
        "TMPDIR=" + quote((root_ / "tmp").string()) + " ";
    const std::string url = "http://127.0.0.1:" + std::to_string(port);
    const std::string log = " </dev/null >" + quote((root_ / "client.log").string()) + " 2>&1";
    const std::string& h = GetParam().harness;
    if (h == "claude-code")
      return sh(base + "ANTHROPIC_BASE_URL=" + url + " ANTHROPIC_API_KEY=sk-ant-e2e-fake-key-0000000000 " +
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 IS_SANDBOX=1 timeout 300 claude -p 'do the "
                "scripted task' " +
                "--dangerously-skip-permissions --model claude-sonnet-4-5" + log);
    if (h == "codex") {
      fs::create_directories(home_ / ".codex");
      const std::string provider = "model_providers.fake={base_url=\"" + url +
                                   "/v1\",env_key=\"OPENAI_API_KEY\",wire_api=\"responses\",name=\"fake\"}";
      return sh(
          base + "CODEX_HOME=" + quote((home_ / ".codex").string()) +
          " OPENAI_API_KEY=sk-e2e-fake-key-00000000000000000000 timeout 300 codex exec --skip-git-repo-check "
          "--dangerously-bypass-approvals-and-sandbox " +
          codex_model(GetParam()) + "-c model_provider=fake -c " + quote(provider) +
          " 'do the scripted task'" + log);
    }
    // opencode: a provider of its own kind pointing at the fake Anthropic endpoint.
    const json config{
        {"$schema", "https://opencode.ai/config.json"},
        {"autoupdate", false},
        {"share", "disabled"},
        {"permission", {{"edit", "allow"}, {"bash", "allow"}}},
        {"provider",
         {{"fake",
           {{"npm", "@ai-sdk/anthropic"},
            {"name", "Fake"},
            {"options", {{"baseURL", url + "/v1"}, {"apiKey", "sk-ant-e2e-fake-key-0000000000"}}},
            {"models", {{"claude-fake", {{"name", "Claude Fake"}, {"tool_call", true}}}}}}}}},
        {"model", "fake/claude-fake"}};
    fs::create_directories(home_ / ".config/opencode");
    std::ofstream(home_ / ".config/opencode/opencode.json") << config.dump(2);
    return sh(base +
              "OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 timeout 300 opencode run " +
              "--model fake/claude-fake 'do the scripted task'" + log);
  }

  std::string transcript_root() const {
    const std::string& h = GetParam().harness;
    if (h == "claude-code") return (home_ / ".claude/projects").string();
    if (h == "codex") return (home_ / ".codex/sessions").string();
    return (home_ / ".local/share/opencode").string();
  }

  // What the transcripts must show, from the actions the server scripted.
  struct Expected {
    json files_read = json::array(), files_changed = json::array(), commands = json::array();
  };
  Expected expected(const std::vector<json>& actions) const {
    const std::string& h = GetParam().harness;
    Expected e;
    for (const auto& a : actions) {
      const std::string kind = a["kind"];
      if (kind == "read") {
        e.files_read.push_back(a["path"]);
      } else if (kind == "write" || kind == "edit") {
        const std::string t = h == "claude-code" ? (kind == "write" ? "Write" : "Edit")
                              : h == "opencode"  ? std::string(kind)
                                                 : "apply_patch";
        e.files_changed.push_back(
            {{"path", a["path"]}, {"tool", t}, {"action", kind == "write" ? "create" : "modify"}});
      } else {
        const int code = a["exit_code"];
        e.commands.push_back({{"command", a["command"]},
                              {"cwd", work_.string()},
                              {"exit_code", code},
                              {"status", code == 0 ? "success" : "error"},
                              {"tool", h == "claude-code" ? "Bash"
                                       : h == "opencode"  ? "bash"
                                                          : a.value("tool", "")}});
      }
    }
    return e;
  }

  static json strip_commands(const json& commands) {
    json out = json::array();
    for (const auto& c : commands)
      out.push_back({{"command", c.value("command", "")},
                     {"cwd", c.value("cwd", "")},
                     {"exit_code", c.value("exit_code", json(nullptr))},
                     {"status", c.value("status", "")},
                     {"tool", c.value("tool", "")}});
    return out;
  }
  static json strip_changes(const json& changes) {
    json out = json::array();
    for (const auto& c : changes)
      out.push_back(
          {{"path", c.value("path", "")}, {"tool", c.value("tool", "")}, {"action", c.value("action", "")}});
    return out;
  }

  fs::path root_, home_, work_;
};

}  // namespace

TEST_P(RealClient, TranscriptsAndReportShowExactlyTheScriptedActions) {
  const std::string& harness = GetParam().harness;
  ModelServer server(root_, work_);
  ASSERT_GT(server.port(), 0) << "the scripted model server did not start";
  const std::string started = px::iso_utc_now();
  const int status = run_client(server.port());
  const std::string ended = px::iso_utc_now();
  const std::string client_log = read_text(root_ / "client.log");
  ASSERT_EQ(status, 0) << GetParam().executable << " failed:\n" << client_log.substr(0, 4000);
  const auto actions = server.actions();
  ASSERT_EQ(actions.size(), script_actions(GetParam())) << "the client did not follow the whole script:\n"
                                                        << client_log.substr(0, 4000);
  // The client really did it.
  EXPECT_EQ(read_text(work_ / "edit.txt"), "new line\n");
  EXPECT_TRUE(fs::exists(work_ / "new.txt"));
  const Expected want = expected(actions);

  // 1. `parallex transcripts` on the client's own folder.
  const std::string out =
      sh_output(plugin_env() + quote(parallex()) + " transcripts --harness " + harness + " --json " +
                quote(transcript_root()) + " 2>" + quote((root_ / "transcripts.err").string()));
  auto sessions = json::parse(out, nullptr, false);
  ASSERT_TRUE(sessions.is_array()) << out.substr(0, 2000) << read_text(root_ / "transcripts.err");
  ASSERT_EQ(sessions.size(), 1u) << sessions.dump(1).substr(0, 4000);
  const json& s = sessions[0];
  EXPECT_EQ(s["cwd"], work_.string());
  EXPECT_EQ(s["files_read"], want.files_read) << s.dump(1);
  EXPECT_EQ(strip_changes(s["files_changed"]), want.files_changed) << s.dump(1);
  EXPECT_EQ(strip_commands(s["commands"]), want.commands) << s.dump(1);
  EXPECT_TRUE(s["urls"].empty());
  EXPECT_EQ(s.value("malformed_lines", -1), 0);
  // Every action has the time the client recorded it, within the client's run: beside the
  // lists (`action_times`, one per entry), the entries themselves keep the contract's fields.
  for (const char* list : {"commands", "files_changed"}) {
    const json times = s.value("action_times", json::object()).value(list, json());
    ASSERT_TRUE(times.is_array() && times.size() == s[list].size()) << list << ": " << s.dump(1);
    for (const auto& at : times) {
      ASSERT_TRUE(at.is_string()) << list << ": " << times.dump();
      EXPECT_TRUE(at >= started && at <= ended)
          << list << ": " << at << " not in [" << started << ", " << ended << "]";
    }
  }

  // 2. `parallex report` on a run record around the client's run, with its home.
  const fs::path runs = root_ / "runs", run_dir = runs / "20261129-000000-e2e0";
  fs::create_directories(run_dir);
  const json record{{"id", run_dir.filename().string()},
                    {"agent", ""},
                    {"command", GetParam().executable + " (scripted)"},
                    {"harness", harness},
                    {"run_folder", work_.string()},
                    {"sealed", false},
                    {"network", "offline"},
                    {"policy", {{"run_home", home_.string()}}},
                    {"started_at", started},
                    {"ended_at", ended},
                    {"exit_status", status},
                    {"proxy_log", ""}};
  std::ofstream(run_dir / "run.json") << record.dump(2);
  const std::string rep_text = sh_output(plugin_env() + quote(parallex()) + " report --runs-dir " +
                                         quote(runs.string()) + " --json 2>/dev/null");
  auto rep = json::parse(rep_text, nullptr, false);
  ASSERT_TRUE(rep.is_object()) << rep_text.substr(0, 2000);
  ASSERT_EQ(rep["runs"].size(), 1u);
  const json& activity = rep["runs"][0]["activity"];
  EXPECT_EQ(activity["files_read"], want.files_read);
  EXPECT_EQ(strip_changes(activity["files_changed"]), want.files_changed);
  EXPECT_EQ(strip_commands(activity["commands"]), want.commands);
  bool transcripts_used = false;
  for (const auto& src : rep["runs"][0]["sources"])
    if (src["name"] == "transcripts (" + harness + ")") transcripts_used = src["status"] == "used";
  EXPECT_TRUE(transcripts_used) << rep["runs"][0]["sources"].dump(1);
}

INSTANTIATE_TEST_SUITE_P(Clients, RealClient,
                         ::testing::Values(Client{"claude-code", "claude"}, Client{"codex", "codex"},
                                           Client{"codex", "codex", true}, Client{"opencode", "opencode"}),
                         [](const auto& param_info) { return client_name(param_info.param); });

// Sealed, the way README's "Point a harness at a model server on this
// machine" tells a user to do it: the model server listens on this machine's
// localhost, the client is pointed at http://localhost:PORT with its own
// ordinary setting (Claude Code's ANTHROPIC_BASE_URL, a Codex model provider
// given with -c, opencode's OPENCODE_CONFIG_CONTENT), and the run gets
// --local-servers. Nothing else: no NO_PROXY override, no unsealing. For
// `run` and for `agent run`; then the run's report shows what the client
// did, and the proxy log that it reached localhost:PORT and nothing else.
enum class RunKind { run, agent_run };
struct SealedCase {
  Client client;
  RunKind kind;
};

class SealedClient : public ::testing::TestWithParam<SealedCase> {
 protected:
  void SetUp() override {
    const Client& c = GetParam().client;
    if (tool(c.executable).empty())
      GTEST_SKIP() << "SKIPPED: " << c.executable << " is not installed (npm i -g @anthropic-ai/claude-code "
                   << "@openai/codex opencode-ai); it was not run sealed";
    if (tool("python3").empty()) GTEST_SKIP() << "SKIPPED: python3 is needed for the scripted model server";
    if (!fs::exists(parallex())) GTEST_SKIP() << "SKIPPED: the parallex executable was not built";
    std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / "e2e-sealed-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = fs::canonical(tmpl);
    home_ = root_ / "home";
    work_ = root_ / "work";
    for (const auto& d : {home_, work_, root_ / "data", root_ / "runtime"}) fs::create_directories(d);
    fs::permissions(root_ / "runtime", fs::perms::owner_all);
    std::ofstream(work_ / "edit.txt") << "old line\n";
    const std::string git =
        "git -C " + quote(work_.string()) + " -c user.name=t -c user.email=t@example.com ";
    sh(git + "init -q && " + git + "add -A && " + git + "commit -q -m base");
  }
  void TearDown() override { px::test::remove_unless_failed(root_, HasFailure()); }

  static std::string parallex() { return std::string(PARALLEX_BINARY_DIR) + "/parallex"; }

  // The user's shell: their home, Parallex's state kept outside it.
  std::string shell() const {
    return "cd " + quote(work_.string()) + " && env -i HOME=" + quote(home_.string()) +
           " PATH=" + quote(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin") +
           " TERM=dumb LANG=C.UTF-8 PARALLEX_HOME=" + quote((root_ / "data").string()) +
           " XDG_RUNTIME_DIR=" + quote((root_ / "runtime").string()) +
           " PARALLEX_PLUGIN_PATH=" + quote(PARALLEX_PLUGIN_BUILD_DIR) + " ";
  }

  // `parallex run --local-servers -- CLIENT ...` or `parallex agent run
  // NAME --local-servers -- CLIENT ...`, the client pointed at localhost:PORT.
  int run_sealed(int port) {
    const std::string url = "http://localhost:" + std::to_string(port);
    const std::string front =
        GetParam().kind == RunKind::run ? " run --local-servers -- " : " agent run e2e --local-servers -- ";
    const std::string px = "timeout 300 " + quote(parallex()) + front;
    const std::string log = " </dev/null >" + quote((root_ / "run.log").string()) + " 2>&1";
    const std::string& h = GetParam().client.harness;
    if (h == "claude-code")
      return sh(
          shell() + "ANTHROPIC_BASE_URL=" + url + " ANTHROPIC_API_KEY=sk-ant-e2e-fake-key-0000000000 " + px +
          "claude -p 'do the scripted task' --dangerously-skip-permissions --model claude-sonnet-4-5" + log);
    if (h == "codex") {
      const std::string provider = "model_providers.local={name=\"local\",base_url=\"" + url +
                                   "/v1\",wire_api=\"responses\",env_key=\"OPENAI_API_KEY\"}";
      return sh(shell() + "OPENAI_API_KEY=sk-e2e-fake-key-00000000000000000000 " + px +
                "codex exec --skip-git-repo-check " + codex_model(GetParam().client) +
                "-c model_provider=local -c " + quote(provider) + " 'do the scripted task'" + log);
    }
    const json config{
        {"provider",
         {{"local",
           {{"npm", "@ai-sdk/anthropic"},
            {"options", {{"baseURL", url + "/v1"}, {"apiKey", "sk-ant-e2e-fake-key-0000000000"}}},
            {"models", {{"claude-fake", {{"tool_call", true}}}}}}}}},
        {"model", "local/claude-fake"},
        {"permission", {{"edit", "allow"}, {"bash", "allow"}}}};
    return sh(shell() + "OPENCODE_CONFIG_CONTENT=" + quote(config.dump()) +
              " OPENCODE_DISABLE_MODELS_FETCH=1 " + px + "opencode run 'do the scripted task'" + log);
  }

  fs::path root_, home_, work_;
};

TEST_P(SealedClient, PointedAtAModelServerOnThisMachineThroughLocalServers) {
  const bool agent = GetParam().kind == RunKind::agent_run;
  const std::string& harness = GetParam().client.harness;
  if (agent) {
    ASSERT_EQ(sh(shell() + quote(parallex()) + " agent new e2e --email e2e@example.com >" +
                 quote((root_ / "new.log").string()) + " 2>&1"),
              0)
        << read_text(root_ / "new.log");
  }
  ModelServer server(root_, work_);
  ASSERT_GT(server.port(), 0) << "the scripted model server did not start";
  const int status = run_sealed(server.port());
  const std::string log = read_text(root_ / "run.log");
  ASSERT_EQ(status, 0) << log.substr(0, 6000);
  ASSERT_EQ(server.actions().size(), script_actions(GetParam().client))
      << "the client did not follow the whole script:\n"
      << log.substr(0, 6000);
  EXPECT_EQ(read_text(work_ / "edit.txt"), "new line\n");
  EXPECT_TRUE(fs::exists(work_ / "new.txt"));
  EXPECT_EQ(log.find("UNSEALED"), std::string::npos) << log;
  // What the client writes and runs within its session (shell snapshots, the links on its PATH,
  // its own skills, snapshot repositories) is the run's own, dropped: a plain session holds
  // nothing back, so nothing is said at its end.
  EXPECT_EQ(log.find("held back"), std::string::npos) << log;

  // The report of that run: sealed, what the client did, and localhost:PORT reached.
  const std::string report_cmd =
      agent ? " agent report e2e --json"
            : " report --runs-dir " + quote((root_ / "data/runs").string()) + " --json";
  const std::string text = sh_output(shell() + quote(parallex()) + report_cmd + " 2>/dev/null");
  const json rep = json::parse(text, nullptr, false);
  ASSERT_TRUE(rep.is_object()) << text.substr(0, 2000);
  ASSERT_EQ(rep["runs"].size(), 1u) << text.substr(0, 2000);
  const json& run = rep["runs"][0];
  EXPECT_EQ(run["seal"], "full") << run.dump(1).substr(0, 2000);
  EXPECT_EQ(run["harness"], harness);
  EXPECT_EQ(run["exit_status"], 0);
  bool reached = false;
  for (const auto& h : run["hosts"]["reached"])
    reached = reached || (h["host"] == "localhost" && h["port"] == server.port());
  EXPECT_TRUE(reached) << run["hosts"].dump(1);
  for (const auto& h : run["hosts"]["reached"]) EXPECT_EQ(h["host"], "localhost") << h.dump();
  // What the server scripted is what the report shows (Codex reads with a command).
  json want_read = json::array();
  std::set<std::string> want_changed;
  std::vector<std::string> want_commands;
  for (const auto& action : server.actions()) {
    const std::string kind = action["kind"];
    if (kind == "read")
      want_read.push_back(action["path"]);
    else if (kind == "write" || kind == "edit")
      want_changed.insert(action["path"].get<std::string>());
    else
      want_commands.push_back(action["command"]);
  }
  const json& a = run["activity"];
  EXPECT_EQ(a["files_read"], want_read) << a.dump(1);
  std::set<std::string> changed;
  for (const auto& c : a["files_changed"]) changed.insert(c.value("path", ""));
  EXPECT_EQ(changed, want_changed) << a.dump(1);
  std::vector<std::string> commands;
  for (const auto& c : a["commands"]) commands.push_back(c.value("command", ""));
  EXPECT_EQ(commands, want_commands) << a.dump(1);

  if (agent) {
    // `agent rewind` puts the agent's home back as it was before the run, its
    // transcripts included; the run's report still shows what the run did.
    ASSERT_EQ(sh(shell() + quote(parallex()) + " agent rewind e2e --yes >" +
                 quote((root_ / "rewind.log").string()) + " 2>&1"),
              0)
        << read_text(root_ / "rewind.log");
    const json again =
        json::parse(sh_output(shell() + quote(parallex()) + report_cmd + " 2>/dev/null"), nullptr, false);
    ASSERT_TRUE(again.is_object());
    ASSERT_EQ(again["runs"].size(), 1u);
    EXPECT_EQ(again["runs"][0]["activity"], a) << again["runs"][0].dump(1).substr(0, 4000);
    EXPECT_EQ(again["runs"][0]["sessions"].size(), run["sessions"].size());
    return;
  }
  // Claude Code on this fresh home: the run's own copy of ~/.claude.json
  // started from {} and what Claude Code wrote there landed, so the home has a
  // valid one; the next start finds it (no "configuration file not found ...
  // a backup file exists" warning) and keeps what the first start recorded.
  if (harness != "claude-code") return;
  const json first = json::parse(read_text(home_ / ".claude.json"), nullptr, false);
  ASSERT_TRUE(first.is_object()) << "no valid ~/.claude.json after the first sealed start:\n"
                                 << log.substr(0, 3000);
  EXPECT_FALSE(first.value("userID", "").empty()) << first.dump(1);
  EXPECT_FALSE(first.value("firstStartTime", "").empty()) << first.dump(1);
  EXPECT_EQ((fs::status(home_ / ".claude.json").permissions() & fs::perms::all),
            fs::perms::owner_read | fs::perms::owner_write);
  sh("git -C " + quote(work_.string()) + " checkout -q edit.txt && rm -f " +
     quote((work_ / "new.txt").string()));
  ASSERT_EQ(run_sealed(server.port()), 0) << read_text(root_ / "run.log").substr(0, 6000);
  const std::string second = read_text(root_ / "run.log");
  EXPECT_EQ(second.find("configuration file not found"), std::string::npos) << second.substr(0, 3000);
  EXPECT_EQ(second.find("backup file exists"), std::string::npos) << second.substr(0, 3000);
  const json kept = json::parse(read_text(home_ / ".claude.json"), nullptr, false);
  ASSERT_TRUE(kept.is_object());
  EXPECT_EQ(kept.value("userID", ""), first.value("userID", ""));
  EXPECT_EQ(kept.value("firstStartTime", ""), first.value("firstStartTime", ""));
  EXPECT_FALSE(kept.contains("mcpServers")) << kept.dump(1);
}

INSTANTIATE_TEST_SUITE_P(Clients, SealedClient,
                         ::testing::Values(SealedCase{{"claude-code", "claude"}, RunKind::run},
                                           SealedCase{{"codex", "codex"}, RunKind::run},
                                           SealedCase{{"codex", "codex", true}, RunKind::run},
                                           SealedCase{{"opencode", "opencode"}, RunKind::run},
                                           SealedCase{{"claude-code", "claude"}, RunKind::agent_run},
                                           SealedCase{{"codex", "codex"}, RunKind::agent_run},
                                           SealedCase{{"opencode", "opencode"}, RunKind::agent_run}),
                         [](const auto& param_info) {
                           return client_name(param_info.param.client) +
                                  (param_info.param.kind == RunKind::run ? "_run" : "_agent_run");
                         });

// A model server on this machine gets the key through the run's broker, as a
// provider's API does: the user points the client at http://localhost:PORT
// as README says, with a real-looking key in the variable; the run holds a
// placeholder of it (its environment, what it prints), the server receives
// the key on every request, and the key is in no output, file or record.
// Claude Code: ANTHROPIC_BASE_URL names the server. Codex: its provider's URL
// is in its own config, so OPENAI_BASE_URL says the same for the broker.
class LocalServerBrokered : public SealedClient {};

TEST_P(LocalServerBrokered, TheServerGetsTheKeyTheRunHoldsAPlaceholder) {
  const std::string& h = GetParam().client.harness;
  ModelServer server(root_, work_);
  ASSERT_GT(server.port(), 0) << "the scripted model server did not start";
  const std::string url = "http://localhost:" + std::to_string(server.port());
  const std::string key =
      h == "codex"
          ? "sk-proj-" + std::string("Xr4TQ9vLm2Zp8WbN6cY1sD3fG5hJ7kA0eRuViOtPqS2wE4yU6iK8oL1zMxCnB3vF9gH")
          : "sk-ant-api03-" + std::string(
                                  "Qm7vX2kR9tLp4WnB8cY1sD3fG5hJ6kZ0eRuViOtPqS2wE4yU6iK8oL1zMxCnB3vF9gHaB"
                                  "cD2eF4gH6iJ8kL0mN-AbCdEfAA");
  const std::string variable = h == "codex" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
  const std::string env = h == "codex" ? "OPENAI_BASE_URL=" + url + "/v1 OPENAI_API_KEY=" + quote(key) + " "
                                       : "ANTHROPIC_BASE_URL=" + url + " ANTHROPIC_API_KEY=" + quote(key) +
                                             " CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 ";
  const std::string px = "timeout 300 " + quote(parallex()) + " run --local-servers -- ";
  const std::string client =
      h == "codex"
          ? "codex exec --skip-git-repo-check -m gpt-5 -c model_provider=local -c " +
                quote("model_providers.local={name=\"local\",base_url=\"" + url +
                      "/v1\",wire_api=\"responses\",env_key=\"OPENAI_API_KEY\"}") +
                " 'do the scripted task'"
          : "claude -p 'do the scripted task' --dangerously-skip-permissions --model claude-sonnet-4-5";
  const int status =
      sh(shell() + env + px + client + " </dev/null >" + quote((root_ / "run.log").string()) + " 2>&1");
  const std::string log = read_text(root_ / "run.log");
  ASSERT_EQ(status, 0) << log.substr(0, 6000);
  EXPECT_EQ(server.actions().size(), 5u) << log.substr(0, 6000);
  const auto keys = server.keys();
  ASSERT_FALSE(keys.empty()) << server.requests();
  for (const auto& k : keys)
    EXPECT_NE(k.find(key), std::string::npos) << "the server got the real key: " << k;
  EXPECT_NE(log.find("brokered credentials (the run holds placeholders): " +
                     std::string(h == "codex" ? "openai-api-key" : "anthropic-api-key") +
                     " (localhost:" + std::to_string(server.port()) + ")"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find(key), std::string::npos) << "the key in the run's output";
  // Inside, the variable holds a placeholder of the key's shape.
  const std::string inside = sh_output(shell() + env + quote(parallex()) + " run --local-servers --harness " +
                                       h + " -- sh -c 'printf %s \"$" + variable + "\"' 2>/dev/null");
  EXPECT_EQ(inside.size(), key.size()) << inside;
  EXPECT_NE(inside, key);
  EXPECT_EQ(inside.substr(0, 7), key.substr(0, 7));
  const std::string tail = key.substr(key.size() - 16);
  for (const auto& dir : {home_, work_, root_ / "data"}) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!ec && it->is_regular_file(ec)) {
        EXPECT_EQ(read_text(it->path()).find(tail), std::string::npos) << "the key in " << it->path();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Clients, LocalServerBrokered,
                         ::testing::Values(SealedCase{{"claude-code", "claude"}, RunKind::run},
                                           SealedCase{{"codex", "codex"}, RunKind::run}),
                         [](const auto& param_info) { return client_name(param_info.param.client); });

// README's own lines, as a newcomer copies them: the three commands under
// "Point a harness at a model server on this machine", read from README.md,
// with only the port (8080 there) and the executable (`parallex` there, the
// build's here) put in. Each reaches the scripted server through the run and
// finishes its whole task; the key in the user's variable reaches the server
// while the run holds a placeholder. (Codex read a prompt of `review` alone
// as its own `review` subcommand: the line looked right and failed.)
class ReadmeLine : public SealedClient {};

// The README block's command whose client is `client` (`-- claude`), its
// continuation lines kept as the shell reads them.
std::string readme_line(const std::string& client) {
  const std::string readme = read_text(fs::path(PARALLEX_SOURCE_DIR) / "README.md");
  const auto section = readme.find("### Point a harness at a model server on this machine");
  const auto begin = readme.find("```sh\n", section);
  const auto end = readme.find("```", begin + 6);
  if (section == std::string::npos || begin == std::string::npos || end == std::string::npos) return "";
  std::istringstream block(readme.substr(begin + 6, end - begin - 6));
  std::string command;
  for (std::string line; std::getline(block, line);) {
    command += line + "\n";
    if (!line.empty() && line.back() == '\\') continue;
    if (command.find("-- " + client + " ") != std::string::npos) return command;
    command.clear();
  }
  return "";
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

TEST_P(ReadmeLine, WorksAsWritten) {
  const std::string& h = GetParam().client.harness;
  std::string line = readme_line(GetParam().client.executable);
  ASSERT_FALSE(line.empty()) << "README has no line for " << GetParam().client.executable;
  ModelServer server(root_, work_);
  ASSERT_GT(server.port(), 0) << "the scripted model server did not start";
  replace_all(line, "localhost:8080", "localhost:" + std::to_string(server.port()));
  replace_all(line, "parallex run ", quote(parallex()) + " run ");
  ASSERT_EQ(line.find("8080"), std::string::npos) << line;
  // The user's key, in their shell: opencode's line names a server that asks for none.
  std::string key, env;
  if (h == "codex") key = "sk-proj-Rd8TQ9vLm2Zp8WbN6cY1sD3fG5hJ7kA0eRuViOtPqS2wE4yU6iK8oL1z";
  if (h == "claude-code")
    key =
        "sk-ant-api03-Rd7vX2kR9tLp4WnB8cY1sD3fG5hJ6kZ0eRuViOtPqS2wE4yU6iK8oL1zMxCnB3vF9gHaBcD2eF4gH6iJ8kL0mN-"
        "AbCdEfAA";
  if (!key.empty()) env = (h == "codex" ? "OPENAI_API_KEY=" : "ANTHROPIC_API_KEY=") + quote(key) + " ";
  const int status = sh(shell() + env + "timeout 300 sh -c " + quote(line) + " </dev/null >" +
                        quote((root_ / "run.log").string()) + " 2>&1");
  const std::string log = read_text(root_ / "run.log");
  ASSERT_EQ(status, 0) << line << log.substr(0, 6000);
  EXPECT_EQ(server.actions().size(), 5u) << "the task did not finish\n" << line << log.substr(0, 6000);
  if (key.empty()) return;
  const auto keys = server.keys();
  ASSERT_FALSE(keys.empty()) << server.requests();
  for (const auto& k : keys)
    EXPECT_NE(k.find(key), std::string::npos) << "the server did not get the key: " << k;
  EXPECT_EQ(log.find(key), std::string::npos) << "the key in the run's output";
}

INSTANTIATE_TEST_SUITE_P(Clients, ReadmeLine,
                         ::testing::Values(SealedCase{{"claude-code", "claude"}, RunKind::run},
                                           SealedCase{{"codex", "codex"}, RunKind::run},
                                           SealedCase{{"opencode", "opencode"}, RunKind::run}),
                         [](const auto& param_info) { return client_name(param_info.param.client); });

// Advice that works: a client installed in a node_modules folder the run may
// not read (a project's own, outside the home) is refused with the smallest
// grant that makes the whole command readable, checked before it is printed;
// with that grant, the same command runs. The packages are the real ones
// (linked, or copied, from the global install into a node_modules of the
// test's own), so the layout is npm's: .bin links into the packages, Codex's
// platform package nested in its own.
class AdvisedGrant : public ::testing::TestWithParam<Client> {
 protected:
  void SetUp() override {
    const Client& c = GetParam();
    if (tool(c.executable).empty()) GTEST_SKIP() << "SKIPPED: " << c.executable << " is not installed";
    if (!fs::exists(parallex())) GTEST_SKIP() << "SKIPPED: the parallex executable was not built";
    std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / "e2e-advice-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = fs::canonical(tmpl);
    for (const char* d : {"home", "work", "data", "runtime"}) fs::create_directories(root_ / d);
    fs::permissions(root_ / "runtime", fs::perms::owner_all);
  }
  void TearDown() override { px::test::remove_unless_failed(root_, HasFailure()); }
  static std::string parallex() { return std::string(PARALLEX_BINARY_DIR) + "/parallex"; }

  // node_modules/<scope>/<name> from the global install, and its .bin link.
  fs::path install_locally() {
    const fs::path global = fs::canonical(tool(GetParam().executable));  // .../node_modules/@scope/pkg/bin/x
    const fs::path package = global.parent_path().parent_path();
    const std::string text = package.string();
    const auto at = text.rfind("/node_modules/");
    if (at == std::string::npos) return {};
    const fs::path name = text.substr(at + std::string("/node_modules/").size());  // @scope/pkg
    const fs::path modules = root_ / "tools/node_modules";
    fs::create_directories((modules / name).parent_path());
    const std::string from = quote(package.string()), to = quote((modules / name).string());
    // Hard links where the file system allows (the packages are big), else a copy.
    if (sh("cp -al " + from + " " + to + " 2>/dev/null || cp -a " + from + " " + to) != 0) return {};
    fs::create_directories(modules / ".bin");
    fs::create_symlink(fs::path("..") / name / global.lexically_relative(package),
                       modules / ".bin" / GetParam().executable);
    return modules;
  }

  std::string shell(const fs::path& modules) const {
    return "cd " + quote((root_ / "work").string()) + " && env -i HOME=" + quote((root_ / "home").string()) +
           " PATH=" + quote((modules / ".bin").string() + ":/usr/local/bin:/usr/bin:/bin") +
           " LANG=C.UTF-8 PARALLEX_HOME=" + quote((root_ / "data").string()) +
           " XDG_RUNTIME_DIR=" + quote((root_ / "runtime").string()) +
           " PARALLEX_PLUGIN_PATH=" + quote(PARALLEX_PLUGIN_BUILD_DIR) + " ";
  }

  fs::path root_;
};

TEST_P(AdvisedGrant, TheAdvisedGrantMakesTheCommandRun) {
  const fs::path modules = install_locally();
  ASSERT_FALSE(modules.empty()) << "could not lay out a node_modules for " << GetParam().executable;
  const std::string& exe = GetParam().executable;
  const std::string refused =
      sh_output(shell(modules) + quote(parallex()) + " run -- " + exe + " --version 2>&1; echo \"exit=$?\"");
  EXPECT_NE(refused.find("exit=126"), std::string::npos) << refused;
  const std::string marker = "grant it with --grant ";
  const auto at = refused.find(marker);
  ASSERT_NE(at, std::string::npos) << "no grant was advised:\n" << refused;
  const std::string rest = refused.substr(at + marker.size());
  const std::string grant = rest.substr(0, rest.find(' '));
  EXPECT_NE(rest.find("(checked"), std::string::npos) << refused;
  // The smallest grant that covers the link, the package and what it runs:
  // the node_modules folder, never the home or anything above the tools.
  EXPECT_EQ(fs::path(grant), modules) << refused;

  const std::string ran = sh_output(shell(modules) + quote(parallex()) + " run --grant " + quote(grant) +
                                    " -- " + exe + " --version 2>&1; echo \"exit=$?\"");
  EXPECT_NE(ran.find("exit=0"), std::string::npos) << "the advised grant did not make it run:\n" << ran;
  EXPECT_EQ(ran.find("may not read"), std::string::npos) << ran;
}

INSTANTIATE_TEST_SUITE_P(Clients, AdvisedGrant,
                         ::testing::Values(Client{"claude-code", "claude"}, Client{"codex", "codex"}),
                         [](const auto& param_info) {
                           std::string n = param_info.param.harness;
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// `parallex mcp install CLIENT` writes this executable's absolute path into the
// client's own config, as the client keeps it: the real client then starts the
// server and connects (Claude Code's `mcp get` checks it), from any folder and
// inside an ad-hoc sealed run, where the executable is readable as in every run.
// Run again, nothing changes.
class McpInstall : public ::testing::TestWithParam<Client> {
 protected:
  void SetUp() override {
    if (tool(GetParam().executable).empty())
      GTEST_SKIP() << "SKIPPED: " << GetParam().executable << " is not installed";
    if (!fs::exists(parallex())) GTEST_SKIP() << "SKIPPED: the parallex executable was not built";
    std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / "e2e-mcp-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = fs::canonical(tmpl);
    for (const char* d : {"home", "work", "data", "runtime", "tmp"}) fs::create_directories(root_ / d);
    fs::permissions(root_ / "runtime", fs::perms::owner_all);
  }
  void TearDown() override { px::test::remove_unless_failed(root_, HasFailure()); }
  static std::string parallex() { return std::string(PARALLEX_BINARY_DIR) + "/parallex"; }
  // A fresh home, in `dir`. The clients' own temp files (Claude Code's
  // claude-<uid> and cc-socks) go to the test's folder, not the machine's /tmp.
  std::string shell(const fs::path& dir) const {
    return "cd " + quote(dir.string()) + " && env -i HOME=" + quote((root_ / "home").string()) +
           " TMPDIR=" + quote((root_ / "tmp").string()) +
           " PATH=" + quote(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin") +
           " TERM=dumb LANG=C.UTF-8 PARALLEX_HOME=" + quote((root_ / "data").string()) +
           " XDG_RUNTIME_DIR=" + quote((root_ / "runtime").string()) +
           " PARALLEX_PLUGIN_PATH=" + quote(PARALLEX_PLUGIN_BUILD_DIR) + " ";
  }
  fs::path root_;
};

TEST_P(McpInstall, TheClientStartsTheServerByItsAbsolutePath) {
  const std::string client = GetParam().executable;
  const std::string exe = fs::canonical(parallex()).string();
  const std::string first =
      sh_output(shell(root_ / "work") + quote(parallex()) + " mcp install " + client + " 2>&1");
  EXPECT_NE(first.find("Added the MCP server to " + client + "'s config"), std::string::npos) << first;
  EXPECT_NE(first.find(exe), std::string::npos) << "it says what it wrote: " << first;
  const std::string again =
      sh_output(shell(root_ / "work") + quote(parallex()) + " mcp install " + client + " 2>&1");
  EXPECT_NE(again.find("has it already"), std::string::npos) << again;

  if (client == "claude") {
    // From another folder than the one it was added in: Claude Code starts it and connects.
    const std::string got = sh_output(shell(root_) + "timeout 120 claude mcp get parallex 2>&1");
    EXPECT_NE(got.find("Command: " + exe), std::string::npos) << got;
    EXPECT_NE(got.find("Connected"), std::string::npos) << got;
    EXPECT_EQ(got.find("Failed"), std::string::npos) << got;
    // Inside an ad-hoc sealed run.
    const std::string sealed = sh_output(shell(root_ / "work") + "timeout 200 " + quote(parallex()) +
                                         " run -- claude mcp list 2>&1");
    EXPECT_NE(sealed.find("parallex: " + exe + " mcp - ✔ Connected"), std::string::npos) << sealed;
  } else if (client == "codex") {
    const std::string got = sh_output(shell(root_) + "timeout 120 codex mcp get parallex --json 2>/dev/null");
    const auto j =
        json::parse(got.substr(got.find('{') == std::string::npos ? 0 : got.find('{')), nullptr, false);
    ASSERT_TRUE(j.is_object()) << got;
    EXPECT_EQ(j["transport"]["command"], exe) << got;
    EXPECT_EQ(j["transport"]["args"], json::array({"mcp"})) << got;
  } else {
    const json config = json::parse(read_text(root_ / "home/.config/opencode/opencode.json"), nullptr, false);
    ASSERT_TRUE(config.is_object());
    EXPECT_EQ(config["mcp"]["parallex"]["command"], json::array({exe, "mcp"})) << config.dump();
    const std::string listed = sh_output(shell(root_) + "timeout 120 opencode mcp list 2>&1");
    EXPECT_NE(listed.find("parallex"), std::string::npos) << listed;
    EXPECT_EQ(listed.find("failed"), std::string::npos) << listed;
  }
}

INSTANTIATE_TEST_SUITE_P(Clients, McpInstall,
                         ::testing::Values(Client{"claude-code", "claude"}, Client{"codex", "codex"},
                                           Client{"opencode", "opencode"}),
                         [](const auto& param_info) { return client_name(param_info.param); });
