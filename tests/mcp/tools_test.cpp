// The tools through the server: who it runs as, what it refuses inside an
// agent's run, the redaction of every answer, and rewind_agent's elicitation
// (accept, decline, a client without it, cancellation, a disconnect).
#include <gtest/gtest.h>

#include "common/paths.hpp"
#include "mcp/run_identity.hpp"
#include "mcp_test_support.hpp"
#include "test_paths.hpp"

namespace px::mcp::test {
namespace {

RunIdentity fake_run(std::map<std::string, std::string> env,
                     const std::string& status = "NoNewPrivs:\t1\nSeccomp:\t2\n") {
  static int n = 0;
  const fs::path proc =
      fs::temp_directory_path() / ("px-mcp-status-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
  TempHome::write(proc, status);
  auto id = detect_run_identity(
      [&](const char* name) -> std::optional<std::string> {
        auto it = env.find(name);
        if (it == env.end()) return std::nullopt;
        return it->second;
      },
      proc);
  fs::remove(proc);
  return id;
}

ServerOptions in_run(const std::string& agent, const std::string& network, const std::string& hosts = "") {
  ServerOptions o;
  o.run = fake_run({{"PARALLEX_RUN", "1"},
                    {"PARALLEX_RUN_ID", "20260101T000000Z-abc"},
                    {"PARALLEX_AGENT", agent},
                    {"PARALLEX_NETWORK", network},
                    {"PARALLEX_ALLOWED_HOSTS", hosts},
                    {"PARALLEX_SEALED", "1"}});
  return o;
}

const Json kElicitation{{"elicitation", Json::object()}};

TEST(McpRunIdentity, ReadsTheRunsEnvironmentAndTheSeal) {
  auto r = fake_run({{"PARALLEX_RUN", "1"},
                     {"PARALLEX_RUN_ID", "R1"},
                     {"PARALLEX_AGENT", "a"},
                     {"PARALLEX_NETWORK", "allowlist"},
                     {"PARALLEX_ALLOWED_HOSTS", "GitHub.com, *.npmjs.org"},
                     {"PARALLEX_SEALED", "1"}});
  EXPECT_TRUE(r.inside_run);
  EXPECT_TRUE(r.seal.verified());
  EXPECT_EQ(r.allowed_hosts, (std::vector<std::string>{"github.com", "*.npmjs.org"}));
  EXPECT_TRUE(network_allows(r, "github.com"));
  EXPECT_TRUE(network_allows(r, "api.github.com"));
  EXPECT_TRUE(network_allows(r, "registry.npmjs.org"));
  EXPECT_FALSE(network_allows(r, "evilgithub.com"));
  EXPECT_FALSE(network_allows(r, "github.com.evil.org"));

  auto claimed = fake_run({{"PARALLEX_RUN", "1"}, {"PARALLEX_SEALED", "1"}, {"PARALLEX_NETWORK", "bogus"}},
                          "NoNewPrivs:\t0\nSeccomp:\t0\n");
  EXPECT_TRUE(claimed.seal.claimed);
  EXPECT_FALSE(claimed.seal.verified());
  EXPECT_EQ(claimed.network, "offline");  // an unknown rule is the strictest
  EXPECT_FALSE(network_allows(claimed, "github.com"));

  EXPECT_FALSE(fake_run({}).inside_run);
}

TEST(McpTools, WhoamiOutsideAndInsideARun) {
  auto out = serve(init() + call(1, "whoami"));
  const Json& outside = (*reply_to(out, 1))["result"]["structuredContent"];
  EXPECT_FALSE(outside["inside_run"].get<bool>());
  EXPECT_NE(outside["running_as"].get<std::string>().find("the user"), std::string::npos);

  auto in = serve(init() + call(1, "whoami"), in_run("reviewer", "allowlist", "github.com"));
  const Json& inside = (*reply_to(in, 1))["result"]["structuredContent"];
  EXPECT_TRUE(inside["inside_run"].get<bool>());
  EXPECT_EQ(inside["run"]["agent"], "reviewer");
  EXPECT_EQ(inside["run"]["run_id"], "20260101T000000Z-abc");
  EXPECT_EQ(inside["run"]["network"], "allowlist");
  EXPECT_TRUE(inside["run"]["seal"]["verified"].get<bool>());
  EXPECT_NE(inside["running_as"].get<std::string>().find("agent reviewer"), std::string::npos);
}

TEST(McpTools, InsideAnAgentsRunOnlyThatAgent) {
  TempHome home;
  home.add_agent("reviewer");
  home.add_agent("other");
  auto replies = serve(init() + call(1, "list_workspaces") + call(2, "list_snapshots", {{"agent", "other"}}) +
                           call(3, "read_report", {{"agent", "other"}}) +
                           call(4, "snapshot_agent", {{"agent", "other"}}) +
                           call(5, "rewind_agent", {{"agent", "reviewer"}}),
                       in_run("reviewer", "offline"));
  const Json& list = (*reply_to(replies, 1))["result"]["structuredContent"];
  ASSERT_EQ(list["agents"].size(), 1u);
  EXPECT_EQ(list["agents"][0]["name"], "reviewer");
  for (int id = 2; id <= 4; ++id) {
    const Json& r = *reply_to(replies, id);
    EXPECT_TRUE(r["result"]["isError"].get<bool>());
    EXPECT_NE(text_of(r).find("answers only about reviewer"), std::string::npos) << text_of(r);
  }
  const std::string rewind = text_of(*reply_to(replies, 5));
  EXPECT_NE(rewind.find("refused while the agent runs"), std::string::npos);
  // One sentence that says what to do and when.
  EXPECT_NE(rewind.find("Run `parallex agent rewind reviewer` in a terminal once the run has ended."),
            std::string::npos)
      << rewind;
}

// As the CLI exits 3: an unknown run id is an error, not an empty answer.
TEST(McpTools, ReadReportOfAnUnknownRunIsAnError) {
  TempHome home;
  home.add_agent("reviewer");
  auto replies =
      serve(init() + call(1, "read_report", {{"agent", "reviewer"}, {"run_id", "20990101-000000-dead"}}));
  const Json* r = reply_to(replies, 1);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE((*r)["result"]["isError"].get<bool>()) << r->dump();
  EXPECT_NE(text_of(*r).find("There is no run 20990101-000000-dead"), std::string::npos) << text_of(*r);
}

TEST(McpTools, InsideARunTheBrowserKeepsToTheNetworkRule) {
  auto offline =
      serve(init() + call(1, "open_browser", {{"url", "https://example.com/"}}), in_run("a", "offline"));
  EXPECT_NE(text_of(*reply_to(offline, 1)).find("is offline"), std::string::npos);
  auto allow = serve(init() + call(1, "open_browser", {{"url", "https://example.com/"}}) +
                         call(2, "open_browser") + call(3, "open_browser", {{"url", "file:///etc/passwd"}}),
                     in_run("a", "allowlist", "github.com"));
  EXPECT_NE(text_of(*reply_to(allow, 1)).find("example.com is not on a's allowed hosts (github.com)"),
            std::string::npos)
      << text_of(*reply_to(allow, 1));
  EXPECT_TRUE((*reply_to(allow, 2))["result"]["isError"].get<bool>());
  EXPECT_NE(text_of(*reply_to(allow, 3)).find("not an http://"), std::string::npos);
}

// Every shape px::redact() knows, planted where the server reads them back.
struct Planted {
  std::string secret;
  std::string marker;
};
const std::vector<Planted> kSecrets{
    {"ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "[REDACTED:github-token]"},
    {"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF", "[REDACTED:github-token]"},
    {"sk-ant-api03-abcdefghijklmnop_QRSTUV-wxyz0123", "[REDACTED:anthropic-key]"},
    {"sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED:openai-key]"},
    {"sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "[REDACTED:openai-key]"},
    {"AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws-access-key]"},
    {"aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "[REDACTED:aws-secret-key]"},
    {"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH "
     "PRIVATE KEY-----",
     "[REDACTED:private-key]"},
    {"https://alice:hunter2hunter2@example.com/repo.git", "[REDACTED:url-password]"},
};
// The part of each secret that must never appear.
const std::vector<std::string> kSecretParts{"A1b2C3d4E5f6G7h8I9j0",
                                            "11ABCDEFG0123456789_abc",
                                            "api03-abcdefghijklmnop",
                                            "proj-abcdefghijklmnopqrstuvwxyz",
                                            "sk-abcdefghijklmnopqrstuvwxyz0123",
                                            "AKIAIOSFODNN7EXAMPLE",
                                            "wJalrXUtnFEMI",
                                            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
                                            "hunter2hunter2"};

TEST(McpRedaction, EverySecretShapeIsRedactedFromAnswers) {
  TempHome home;
  std::string created;
  for (const auto& s : kSecrets) created += s.secret + "\n";
  home.add_agent("leaky", "offline", {}, created);
  // A run record with the same secrets in its command line, for read_report.
  TempHome::write(home.agent_root("leaky") / "runs" / "20260101T000000Z-aaaaaa" / "run.json",
                  Json{{"id", "20260101T000000Z-aaaaaa"},
                       {"agent", "leaky"},
                       {"command", created},
                       {"started_at", "2026-01-01T00:00:00.000Z"},
                       {"ended_at", "2026-01-01T00:01:00.000Z"}}
                      .dump());
  auto replies = serve(init() + call(1, "list_workspaces") + call(2, "read_report", {{"agent", "leaky"}}) +
                       call(3, "list_snapshots", {{"agent", "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"}}));
  std::string all;
  for (const auto& r : replies) all += r.dump() + "\n";
  for (const auto& part : kSecretParts)
    EXPECT_EQ(all.find(part), std::string::npos) << "leaked: " << part << " in " << all;
  const std::string listed = (*reply_to(replies, 1))["result"]["structuredContent"].dump();
  for (const auto& s : kSecrets) EXPECT_NE(listed.find(s.marker), std::string::npos) << s.marker;
  // The report ran and redacted its command line; the error names the (redacted) agent.
  EXPECT_NE((*reply_to(replies, 2))["result"]["structuredContent"].dump().find("[REDACTED:"),
            std::string::npos);
  EXPECT_NE(text_of(*reply_to(replies, 3)).find("[REDACTED:github-token]"), std::string::npos);
}

class McpRewind : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = home_.add_agent("reviewer");
    auto replies = serve(init() + call(1, "snapshot_agent", {{"agent", "reviewer"}, {"label", "before"}}));
    const Json& r = *reply_to(replies, 1);
    ASSERT_FALSE(r["result"]["isError"].get<bool>()) << text_of(r);
    snapshot_id_ = r["result"]["structuredContent"]["snapshot"]["id"].get<std::string>();
    TempHome::write(root_ / "home" / "notes.txt", "changed by the agent\n");
  }
  std::string notes() const { return TempHome::read(root_ / "home" / "notes.txt"); }
  static std::string answer(const std::string& action, const Json& content = nullptr) {
    Json result{{"action", action}};
    if (!content.is_null()) result["content"] = content;
    return line({{"jsonrpc", "2.0"}, {"id", "parallex-1"}, {"result", result}});
  }

  TempHome home_;
  fs::path root_;
  std::string snapshot_id_;
};

TEST_F(McpRewind, ListsTheSnapshot) {
  auto replies = serve(init() + call(1, "list_snapshots", {{"agent", "reviewer"}}));
  const Json& list = (*reply_to(replies, 1))["result"]["structuredContent"]["snapshots"];
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["id"], snapshot_id_);
  EXPECT_EQ(list[0]["label"], "before");
}

TEST_F(McpRewind, AcceptRewinds) {
  auto replies = serve(init(kElicitation) + call(1, "rewind_agent", {{"agent", "reviewer"}}) +
                       answer("accept", {{"confirm", true}}));
  ASSERT_GE(replies.size(), 3u);
  EXPECT_EQ(replies[1]["method"], "elicitation/create");
  EXPECT_EQ(replies[1]["id"], "parallex-1");
  EXPECT_NE(replies[1]["params"]["message"].get<std::string>().find(snapshot_id_), std::string::npos);
  EXPECT_EQ(replies[1]["params"]["requestedSchema"]["type"], "object");
  const Json& r = *reply_to(replies, 1);
  EXPECT_TRUE(r["result"]["structuredContent"]["rewound"].get<bool>()) << r.dump();
  EXPECT_EQ(notes(), "first\n");
}

// A rewind takes the run's transcripts out of the home; the run's report
// still shows what the run did (the report kept its sessions first).
TEST_F(McpRewind, PastReportsStayReadableAfterARewind) {
  ::setenv("PARALLEX_PLUGIN_PATH", PARALLEX_PLUGIN_BUILD_DIR, 1);
  const std::string id = "20260101-000000-aaaa";
  TempHome::write(px::agent_runs_dir(root_) / id / "run.json",
                  Json{{"id", id},
                       {"agent", "reviewer"},
                       {"command", "claude -p x"},
                       {"harness", "claude-code"},
                       {"started_at", "2026-01-01T00:00:00.000Z"},
                       {"ended_at", "2026-01-01T00:01:00.000Z"},
                       {"exit_status", 0}}
                      .dump());
  const Json use{{"type", "assistant"},
                 {"sessionId", "kept-session"},
                 {"timestamp", "2026-01-01T00:00:30.000Z"},
                 {"cwd", "/w"},
                 {"message",
                  {{"id", "m1"},
                   {"model", "claude-test"},
                   {"content", Json::array({{{"type", "tool_use"},
                                             {"id", "t1"},
                                             {"name", "Bash"},
                                             {"input", {{"command", "make px-kept"}}}}})}}}};
  TempHome::write(root_ / "home/.claude/projects/-w/kept-session.jsonl", use.dump() + "\n");
  auto before = serve(init() + call(1, "read_report", {{"agent", "reviewer"}}));
  ASSERT_NE((*reply_to(before, 1))["result"]["structuredContent"].dump().find("make px-kept"),
            std::string::npos)
      << reply_to(before, 1)->dump();
  auto replies = serve(init(kElicitation) + call(1, "rewind_agent", {{"agent", "reviewer"}}) +
                       answer("accept", {{"confirm", true}}));
  ASSERT_TRUE((*reply_to(replies, 1))["result"]["structuredContent"]["rewound"].get<bool>())
      << reply_to(replies, 1)->dump();
  EXPECT_FALSE(fs::exists(root_ / "home/.claude/projects/-w/kept-session.jsonl"))
      << "the rewind took it away";
  auto after = serve(init() + call(1, "read_report", {{"agent", "reviewer"}}));
  const Json& run = (*reply_to(after, 1))["result"]["structuredContent"]["runs"][0];
  ASSERT_EQ(run["sessions"].size(), 1u) << run.dump(1);
  EXPECT_EQ(run["sessions"][0]["session_id"], "kept-session");
  EXPECT_EQ(run["activity"]["commands"][0]["command"], "make px-kept");
  ::unsetenv("PARALLEX_PLUGIN_PATH");
}

TEST_F(McpRewind, DeclineCancelOrNoConfirmDoNotRewind) {
  for (const auto& a : {answer("decline"), answer("cancel"), answer("accept", {{"confirm", false}})}) {
    auto replies = serve(init(kElicitation) + call(1, "rewind_agent", {{"agent", "reviewer"}}) + a);
    const Json& r = *reply_to(replies, 1);
    EXPECT_FALSE(r["result"]["isError"].get<bool>());
    EXPECT_FALSE(r["result"]["structuredContent"]["rewound"].get<bool>()) << r.dump();
    EXPECT_EQ(notes(), "changed by the agent\n");
  }
}

// An accept is a yes only with `confirm: true`: an empty form, a missing
// content or any other value rewinds nothing.
TEST_F(McpRewind, AnAcceptWithoutAnExplicitConfirmDoesNotRewind) {
  for (const auto& a :
       {answer("accept", Json::object()), answer("accept"), answer("accept", {{"confirm", "true"}}),
        answer("accept", {{"confirm", 1}}), answer("accept", {{"other", true}})}) {
    SCOPED_TRACE(a);
    auto replies = serve(init(kElicitation) + call(1, "rewind_agent", {{"agent", "reviewer"}}) + a);
    const Json* r = reply_to(replies, 1);
    ASSERT_NE(r, nullptr);
    EXPECT_FALSE((*r)["result"]["isError"].get<bool>());
    EXPECT_FALSE((*r)["result"]["structuredContent"]["rewound"].get<bool>()) << r->dump();
    EXPECT_NE(text_of(*r).find("did not confirm"), std::string::npos) << text_of(*r);
    EXPECT_EQ(notes(), "changed by the agent\n");
  }
}

// A snapshot id the store does not know is an error that names the MCP tool
// listing the ids, not a terminal command.
TEST_F(McpRewind, AnUnknownSnapshotIdPointsAtListSnapshots) {
  auto replies =
      serve(init(kElicitation) + call(1, "rewind_agent", {{"agent", "reviewer"}, {"to", "zzzz-no-such"}}));
  const Json* r = reply_to(replies, 1);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE((*r)["result"]["isError"].get<bool>());
  const std::string text = text_of(*r);
  EXPECT_NE(text.find("zzzz-no-such"), std::string::npos) << text;
  EXPECT_NE(text.find("list_snapshots"), std::string::npos) << text;
  EXPECT_EQ(text.find("parallex "), std::string::npos) << text;
  // Nothing was asked: no elicitation went out.
  for (const auto& m : replies) EXPECT_NE(m.value("method", ""), "elicitation/create");
  EXPECT_EQ(notes(), "changed by the agent\n");
}

TEST_F(McpRewind, AClientWithoutElicitationIsToldToUseTheTerminal) {
  auto replies = serve(init() + call(1, "rewind_agent", {{"agent", "reviewer"}}));
  const Json& r = *reply_to(replies, 1);
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_NE(text_of(r).find("parallex agent rewind reviewer"), std::string::npos);
  EXPECT_EQ(notes(), "changed by the agent\n");
}

TEST_F(McpRewind, PingsAreAnsweredAndOtherRequestsWaitWhileTheUserIsAsked) {
  auto replies = serve(init(kElicitation) + call(1, "rewind_agent", {{"agent", "reviewer"}}) +
                       line({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}}) +
                       std::string(R"({"jsonrpc":"2.0","id":99,"method":"ping"})"
                                   "\n") +
                       answer("decline"));
  // Order: initialize, elicitation, ping reply, rewind reply, tools/list reply.
  ASSERT_EQ(replies.size(), 5u);
  EXPECT_EQ(replies[2]["id"], 99);
  EXPECT_EQ(replies[3]["id"], 1);
  EXPECT_EQ(replies[4]["id"], 2);
}

TEST_F(McpRewind, CancellationEndsTheWaitWithoutAnAnswer) {
  auto replies = serve(
      init(kElicitation) + call(1, "rewind_agent", {{"agent", "reviewer"}}) +
      line({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 1}}}}) +
      std::string(R"({"jsonrpc":"2.0","id":99,"method":"ping"})"
                  "\n"));
  EXPECT_EQ(reply_to(replies, 1), nullptr);
  EXPECT_NE(reply_to(replies, 99), nullptr);
  EXPECT_EQ(notes(), "changed by the agent\n");
}

TEST_F(McpRewind, AClientThatDisconnectsMidCallEndsTheServerCleanly) {
  auto replies = serve(init(kElicitation) + call(1, "rewind_agent", {{"agent", "reviewer"}}));
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[1]["method"], "elicitation/create");
  EXPECT_EQ(notes(), "changed by the agent\n");
}

// The project's rules as list_workspaces shows them: its hosts, or the default
// every workspaced run gets (workspace::project_network), also when its config
// cannot be read (said in the notes).
TEST(McpTools, ListWorkspacesShowsTheProjectsNetworkAsItsRunsGetIt) {
  TempHome home;
  const fs::path project = home.dir() / "project";
  fs::create_directories(project);
  ASSERT_EQ(std::system(("git init -q '" + project.string() + "'").c_str()), 0);
  auto rules = [&](Json* notes = nullptr) {
    auto replies = serve(init() + call(1, "list_workspaces", {{"project", project.string()}}));
    const Json& list = (*reply_to(replies, 1))["result"]["structuredContent"];
    if (notes) *notes = list.value("notes", Json::array());
    return list["project"]["rules"];
  };
  const Json none = rules();
  EXPECT_EQ(none["network"], "online") << none.dump();
  EXPECT_EQ(none["sandbox_workspaces"], true) << none.dump();

  TempHome::write(project / ".parallex/config.yaml", "allow: [github.com]\nsandbox_workspaces: false\n");
  const Json hosts = rules();
  EXPECT_EQ(hosts["network"], "allowlist") << hosts.dump();
  EXPECT_EQ(hosts["allowed_hosts"], Json::array({"github.com"})) << hosts.dump();
  EXPECT_EQ(hosts["sandbox_workspaces"], false) << hosts.dump();

  TempHome::write(project / ".parallex/config.yaml", "allow: [github.com\n");
  Json notes;
  const Json broken = rules(&notes);
  EXPECT_EQ(broken["network"], "online") << broken.dump();
  EXPECT_NE(notes.dump().find("config.yaml"), std::string::npos) << notes.dump();
}

}  // namespace
}  // namespace px::mcp::test
