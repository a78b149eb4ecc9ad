// Ask mode with a real client: Claude Code (and Codex) from npm, sealed with
// --ask, pointed at fake_model_server.py on this machine. The scripted model
// makes the client run one command through its own shell tool — curl of a page
// on a name and port outside the run's rule (asked.test, a loopback server of
// the fake's own) — so the connection is held while the user is asked. The
// test is the user: from another process it finds the question in `parallex
// approve` (the run, host:port, the process that asked), answers it, and then
// reads what reached the model as the tool's result: the page, or the proxy's
// refusal naming how to allow the host. The run's record (network_live) and
// `parallex events --run ID --json` show the question and the answer.
//
// Why the shell tool and not Claude Code's WebFetch: WebFetch turns every
// http:// URL into https://, so its request goes through the proxy as a
// CONNECT tunnel, and a refusal of a tunnel reaches the program as a status
// line without the body that says why (and what would allow it).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "model_server.hpp"
#include "scratch.hpp"
#include "spawn.hpp"
#include "test_paths.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

using px::test::have;
using px::test::ModelServer;
using px::test::Outcome;
using px::test::slurp;

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

enum class Answer { approve, deny };
struct AskCase {
  std::string client;  // "claude" or "codex"
  Answer answer;
};

const std::string kPage = "hello from the page px-ask-e2e";

class AskClient : public ::testing::TestWithParam<AskCase> {
 protected:
  void SetUp() override {
    if (!have(GetParam().client))
      GTEST_SKIP()
          << "SKIPPED: " << GetParam().client
          << " is not installed (npm i -g @anthropic-ai/claude-code @openai/codex); ask mode was not "
             "tried with it";
    if (!have("python3")) GTEST_SKIP() << "SKIPPED: python3 is needed for the scripted model server";
    if (!have("curl")) GTEST_SKIP() << "SKIPPED: curl is needed inside the run";
    // Under the build dir, not /tmp: Codex refuses to set up its helpers under a temp dir.
    std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / "e2e-ask-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = fs::canonical(tmpl);
    for (const char* d : {"home", "work", "data", "runtime", "logs"}) fs::create_directories(root_ / d);
    fs::permissions(root_ / "runtime", fs::perms::owner_all);
    px::test::shell_output("git -C " + quoted((root_ / "work").string()) + " init -q");
  }
  void TearDown() override { px::test::remove_unless_failed(root_, HasFailure()); }

  static std::string parallex() { return std::string(PARALLEX_BINARY_DIR) + "/parallex"; }

  // What `parallex approve` and the others need to find the user's runs.
  std::vector<std::string> user_env() const {
    return {"PARALLEX_HOME=" + (root_ / "data").string(), "XDG_RUNTIME_DIR=" + (root_ / "runtime").string(),
            "PARALLEX_PLUGIN_PATH=" + std::string(PARALLEX_PLUGIN_BUILD_DIR)};
  }

  // The client, sealed with --ask, pointed at the model server on this machine.
  Outcome run_sealed(int port) {
    const std::string url = "http://localhost:" + std::to_string(port);
    const std::string shell = "cd " + quoted((root_ / "work").string()) +
                              " && env -i HOME=" + quoted((root_ / "home").string()) +
                              " PATH=" + quoted(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin") +
                              " TERM=dumb LANG=C.UTF-8 PARALLEX_HOME=" + quoted((root_ / "data").string()) +
                              " XDG_RUNTIME_DIR=" + quoted((root_ / "runtime").string()) +
                              " PARALLEX_PLUGIN_PATH=" + quoted(PARALLEX_PLUGIN_BUILD_DIR) +
                              " PARALLEX_TEST_RESOLVE=asked.test=127.0.0.1 ";
    const std::string px = "timeout 400 " + quoted(parallex()) + " run --ask=200 --local-servers -- ";
    std::string client;
    if (GetParam().client == "claude") {
      // Claude Code's own traffic (telemetry, feature flags) would be asked about too: quieted,
      // as a user of a local model server quiets it.
      client =
          "ANTHROPIC_BASE_URL=" + url +
          " ANTHROPIC_API_KEY=sk-ant-e2e-fake-key-0000000000 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 " +
          px + "claude -p 'fetch the page' --dangerously-skip-permissions --model claude-sonnet-4-5";
    } else {
      const std::string provider = "model_providers.local={name=\"local\",base_url=\"" + url +
                                   "/v1\",wire_api=\"responses\",env_key=\"OPENAI_API_KEY\"}";
      client = "OPENAI_API_KEY=sk-e2e-fake-key-00000000000000000000 " + px +
               "codex exec --skip-git-repo-check -m gpt-5 -c model_provider=local -c " + quoted(provider) +
               " 'fetch the page'";
    }
    return px::test::spawn_and_wait({"sh", "-c", shell + client + " </dev/null"}, {}, root_ / "logs", 420s);
  }

  // The open question about asked.test, looked for from another process as the
  // user would. A question about any other host (a client's own traffic) is
  // refused for the run, as a user would, and kept in `others_` to be said.
  json wait_for_question(std::future<Outcome>& running) {
    for (int i = 0; i < 1800; ++i) {
      const auto listed =
          px::test::spawn_and_wait({parallex(), "approve", "--json"}, user_env(), root_ / "logs");
      const auto j = json::parse(listed.out, nullptr, false);
      if (j.is_object() && j.contains("questions"))
        for (const auto& q : j["questions"]) {
          if (q.value("host", "") == "asked.test") return q;
          others_.push_back(q);
          px::test::spawn_and_wait({parallex(), "deny", std::to_string(q.value("question", 0)), "--run",
                                    q.value("run", ""), "--for", "run"},
                                   user_env(), root_ / "logs");
        }
      if (running.wait_for(100ms) == std::future_status::ready) break;
    }
    return {};
  }
  std::string others() const {
    std::string s;
    for (const auto& q : others_) s += "also asked (refused by the test): " + q.dump() + "\n";
    return s;
  }

  fs::path record_of(const std::string& run) const {
    for (const auto& e : fs::recursive_directory_iterator(root_ / "data"))
      if (e.path().filename() == "run.json" && e.path().parent_path().filename().string().find(run) == 0)
        return e.path();
    return {};
  }

  fs::path root_;
  std::vector<json> others_;
};

TEST_P(AskClient, TheUsersAnswerReachesTheModelAsTheToolsResult) {
  const bool approve = GetParam().answer == Answer::approve;
  ModelServer server(root_, root_ / "work", {"--fetch", "asked.test", "--page", kPage});
  ASSERT_GT(server.port(), 0) << "the scripted model server did not start";
  ASSERT_GT(server.page_port(), 0) << "the scripted model server's page did not start";
  const std::string hostport = "asked.test:" + std::to_string(server.page_port());

  auto running = std::async(std::launch::async, [&] { return run_sealed(server.port()); });
  const json open = wait_for_question(running);
  ASSERT_FALSE(open.empty()) << "no question was asked; the run said:\n"
                             << (running.wait_for(0s) == std::future_status::ready ? running.get().out : "")
                             << "\nthe model was sent:\n"
                             << server.requests().substr(0, 3000);
  const std::string run = open.value("run", "");
  EXPECT_FALSE(run.empty()) << open.dump();
  EXPECT_EQ(open["host"], "asked.test");
  EXPECT_EQ(open["port"], server.page_port());
  EXPECT_NE(open.value("process", "").find("curl"), std::string::npos)
      << "the process that asked: " << open.dump();
  // The same in words, for the user at a terminal.
  const auto text = px::test::spawn_and_wait({parallex(), "approve"}, user_env(), root_ / "logs");
  EXPECT_NE(text.out.find("run " + run), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("asks for " + hostport), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("by curl"), std::string::npos) << text.out;

  const std::string n = std::to_string(open["question"].get<int>());
  const auto answered =
      px::test::spawn_and_wait(approve ? std::vector<std::string>{parallex(), "approve", n, "--for", "run"}
                                       : std::vector<std::string>{parallex(), "deny", n},
                               user_env(), root_ / "logs");
  ASSERT_EQ(answered.status, 0) << answered.out << answered.err;

  const Outcome r = running.get();
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  if (!others_.empty()) std::printf("%s", others().c_str());
  // What the model was sent back as the command's result.
  const auto results = server.tool_results();
  ASSERT_EQ(results.size(), 1u) << server.requests().substr(0, 3000);
  if (approve) {
    EXPECT_NE(results[0].find(kPage), std::string::npos) << results[0];
  } else {
    EXPECT_EQ(results[0].find(kPage), std::string::npos) << results[0];
    EXPECT_NE(results[0].find("the user refused asked.test"), std::string::npos) << results[0];
    EXPECT_NE(results[0].find("parallex allow --run " + run + " asked.test"), std::string::npos)
        << results[0];
  }

  // The record and the event stream: the question and its answer, by whom.
  const fs::path record = record_of(run);
  ASSERT_FALSE(record.empty()) << "no record of run " << run;
  const json j = json::parse(slurp(record), nullptr, false);
  ASSERT_TRUE(j.is_object() && j.contains("network_live")) << slurp(record).substr(0, 3000);
  const json& live = j["network_live"];
  EXPECT_EQ(live["ask_seconds"], 200);
  json q;
  for (const auto& each : live["questions"])
    if (each.value("host", "") == "asked.test") {
      EXPECT_TRUE(q.empty()) << "asked twice: " << live.dump(2);
      q = each;
    }
  ASSERT_FALSE(q.empty()) << live.dump(2);
  // The client's own traffic asked too (Codex: github.com for its plugins, chatgpt.com),
  // refused by the test or closed unanswered ("stopped") when the run ended.
  for (const auto& each : live["questions"]) {
    if (each.value("host", "") != "asked.test") {
      EXPECT_TRUE(each["outcome"] == "denied-for-run" || each["outcome"] == "stopped") << each.dump();
    }
  }
  EXPECT_EQ(q["host"], "asked.test");
  EXPECT_EQ(q["port"], server.page_port());
  EXPECT_EQ(q["outcome"], approve ? "allowed-for-run" : "denied") << q.dump();
  EXPECT_NE(q.value("by", "").find(approve ? "parallex approve" : "parallex deny"), std::string::npos)
      << q.dump();
  EXPECT_NE(q.value("process", "").find("curl"), std::string::npos) << q.dump();

  const auto events =
      px::test::spawn_and_wait({parallex(), "events", "--run", run, "--json"}, user_env(), root_ / "logs");
  ASSERT_EQ(events.status, 0) << events.err;
  bool asked = false, answer = false;
  std::istringstream lines(events.out);
  for (std::string line; std::getline(lines, line);) {
    const json e = json::parse(line, nullptr, false);
    if (!e.is_object()) continue;
    const std::string type = e.value("type", "");
    asked = asked || (type == "network.asked" && e.dump().find("asked.test") != std::string::npos);
    answer = answer || (type == "network.answered" &&
                        e.dump().find(approve ? "allowed-for-run" : "\"denied\"") != std::string::npos);
  }
  EXPECT_TRUE(asked) << events.out;
  EXPECT_TRUE(answer) << events.out;
}

INSTANTIATE_TEST_SUITE_P(Clients, AskClient,
                         ::testing::Values(AskCase{"claude", Answer::approve},
                                           AskCase{"claude", Answer::deny}, AskCase{"codex", Answer::approve},
                                           AskCase{"codex", Answer::deny}),
                         [](const auto& param_info) {
                           return param_info.param.client +
                                  (param_info.param.answer == Answer::approve ? "_approved" : "_denied");
                         });

}  // namespace
