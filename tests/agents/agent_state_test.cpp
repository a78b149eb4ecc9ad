// An agent's own state through the real `parallex` executable: snapshots by
// hand, a rewind and its undo, pruning, decoy credentials flagged in a real
// sealed run, and what is refused while the agent runs.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "agents_fixture.hpp"

using namespace px_agents_test;

namespace {

nlohmann::json parse_or_fail(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << text;
  return j;
}

class AgentStateTest : public AgentsTest {
 protected:
  nlohmann::json snapshots(const std::string& name) {
    auto r = px("agent snapshots " + name + " --json");
    EXPECT_EQ(r.status, 0) << r.err;
    return parse_or_fail(r.out);
  }
  // The run records of an agent, oldest first.
  std::vector<nlohmann::json> run_records(const std::string& name) {
    std::vector<nlohmann::json> out;
    for (const auto& e : fs::directory_iterator(paths(name).runs()))
      out.push_back(parse_or_fail(slurp(e.path() / "run.json")));
    // Run ids sort by the second only; the start time has milliseconds.
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return a.value("started_at", "") < b.value("started_at", "");
    });
    return out;
  }
  // Whether a sealed agent run works on this machine.
  bool seal_runs(const std::string& name, const fs::path& repo) {
    return px("agent run " + name + " --in " + q(repo.string()) + " -- true").status == 0;
  }
};

}  // namespace

TEST_F(AgentStateTest, SnapshotRewindAndUndo) {
  make_agent("keeper");
  const auto home = paths("keeper").home();
  spit(home / "notes.txt", "first\n");
  auto taken = px("agent snapshot keeper --json");
  ASSERT_EQ(taken.status, 0) << taken.err;
  const auto first = parse_or_fail(taken.out);
  EXPECT_EQ(first["kind"], "manual");
  EXPECT_GE(first["files"].get<int>(), 1);

  spit(home / "notes.txt", "second\n");
  spit(home / "new.txt", "made after the snapshot\n");
  auto dry = px("agent rewind keeper --dry-run");
  ASSERT_EQ(dry.status, 0) << dry.err;
  EXPECT_NE(dry.out.find("notes.txt"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("new.txt"), std::string::npos) << dry.out;
  EXPECT_EQ(slurp(home / "notes.txt"), "second\n");  // a dry run changes nothing

  // Without a terminal to ask, a rewind needs --yes, and changes nothing without it.
  auto unasked = px("agent rewind keeper");
  EXPECT_EQ(unasked.status, 2) << unasked.err;
  EXPECT_NE(unasked.err.find("Add --yes to rewind"), std::string::npos) << unasked.err;
  EXPECT_EQ(slurp(home / "notes.txt"), "second\n");

  auto rewound = px("agent rewind keeper --yes");
  ASSERT_EQ(rewound.status, 0) << rewound.err;
  EXPECT_EQ(slurp(home / "notes.txt"), "first\n");
  EXPECT_FALSE(fs::exists(home / "new.txt"));
  // The state before the rewind was kept, and the command says how to go back.
  auto list = snapshots("keeper");
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[1]["kind"], "pre-rewind");
  const std::string undo = list[1]["id"];
  EXPECT_NE(rewound.out.find("parallex agent rewind keeper --yes --to " + undo), std::string::npos)
      << rewound.out;
  auto back = px("agent rewind keeper --yes --json --to " + undo);
  ASSERT_EQ(back.status, 0) << back.err;
  const auto back_json = parse_or_fail(back.out);
  EXPECT_EQ(back_json["target"], undo);
  EXPECT_FALSE(back_json["changes"].empty()) << back_json.dump();
  EXPECT_EQ(slurp(home / "notes.txt"), "second\n");
  EXPECT_EQ(slurp(home / "new.txt"), "made after the snapshot\n");
  // Its signing key lives beside its home: a rewind never touches it.
  EXPECT_TRUE(fs::exists(paths("keeper").private_key()));
}

TEST_F(AgentStateTest, PruneKeepsTheNewest) {
  make_agent("pruned");
  for (int i = 0; i < 3; ++i) {
    spit(paths("pruned").home() / "f.txt", std::to_string(i));
    ASSERT_EQ(px("agent snapshot pruned").status, 0);
  }
  const auto before = snapshots("pruned");
  ASSERT_EQ(before.size(), 3u);
  auto half = px("agent snapshots pruned --prune");
  EXPECT_EQ(half.status, 2);
  EXPECT_NE(half.err.find("--keep"), std::string::npos) << half.err;
  auto pruned = px("agent snapshots pruned --prune --keep 1");
  ASSERT_EQ(pruned.status, 0) << pruned.err;
  const auto after = snapshots("pruned");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0]["id"], before[2]["id"]);
}

TEST_F(AgentStateTest, BadInputIsNamed) {
  make_agent("fresh");
  auto none = px("agent rewind fresh");
  EXPECT_NE(none.status, 0);
  EXPECT_NE(none.err.find("nothing to rewind"), std::string::npos) << none.err;
  ASSERT_EQ(px("agent snapshot fresh").status, 0);
  auto bad_id = px("agent rewind fresh --yes --to 1999");
  EXPECT_NE(bad_id.status, 0);
  EXPECT_NE(bad_id.err.find("1999"), std::string::npos) << bad_id.err;
  auto unknown = px("agent snapshot nobody");
  EXPECT_EQ(unknown.status, 3);
  EXPECT_NE(unknown.err.find("nobody"), std::string::npos) << unknown.err;
  auto typo = px("agent snapshotz fresh");
  EXPECT_EQ(typo.status, 2);
  EXPECT_NE(typo.err.find("snapshotz"), std::string::npos) << typo.err;
  auto bare = px("agent");
  EXPECT_EQ(bare.status, 2);
  EXPECT_NE(bare.err.find("sub-command"), std::string::npos) << bare.err;
}

TEST_F(AgentStateTest, DecoysAreFlaggedWhenOpenedInASealedRun) {
  make_agent("bait", "--decoys");
  const auto home = paths("bait").home();
  const fs::path decoy = home / ".config" / "aws" / "credentials";
  ASSERT_TRUE(fs::is_regular_file(decoy));
  EXPECT_EQ(mode_of(decoy), 0600u);
  const fs::path repo = make_repo("bait-work");
  if (!seal_runs("bait", repo)) GTEST_SKIP() << "the seal does not run here";

  auto quiet = px("agent run bait --in " + q(repo.string()) + " -- sh -c 'echo hello'");
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("DECOY"), std::string::npos) << quiet.err;
  EXPECT_TRUE(run_records("bait").back()["decoy_hits"].empty());

  auto caught = px("agent run bait --in " + q(repo.string()) +
                   " -- sh -c 'cat \"$HOME/.config/aws/credentials\" >/dev/null'");
  ASSERT_EQ(caught.status, 0) << caught.err;
  EXPECT_NE(caught.err.find("DECOY"), std::string::npos) << caught.err;
  EXPECT_NE(caught.err.find(".config/aws/credentials"), std::string::npos) << caught.err;
  const auto record = run_records("bait").back();
  ASSERT_FALSE(record["decoy_hits"].empty()) << record.dump(2);
  EXPECT_NE(record["decoy_hits"][0]["path"].get<std::string>().find(".config/aws/credentials"),
            std::string::npos);
  EXPECT_EQ(caught.err.find("DECOY open"), caught.err.rfind("DECOY open")) << "said once: " << caught.err;

  // Switched off: no longer watched.
  ASSERT_EQ(px("agent set bait --decoys off").status, 0);
  auto unwatched = px("agent run bait --in " + q(repo.string()) +
                      " -- sh -c 'cat \"$HOME/.config/aws/credentials\" >/dev/null'");
  ASSERT_EQ(unwatched.status, 0) << unwatched.err;
  EXPECT_EQ(unwatched.err.find("DECOY"), std::string::npos) << unwatched.err;
}

TEST_F(AgentStateTest, DeleteAndRewindAreRefusedWhileItRuns) {
  make_agent("busy");
  const fs::path repo = make_repo("busy-work");
  if (!seal_runs("busy", repo)) GTEST_SKIP() << "the seal does not run here";
  // In the background: the shell returns at once, the run goes on.
  ASSERT_EQ(px("agent run busy --in " + q(repo.string()) + " -- sleep 60 >/dev/null 2>&1 &").status, 0);
  std::string run_id;
  for (int i = 0; i < 200 && run_id.empty(); ++i) {
    auto runs = px("runs --json");
    auto j = nlohmann::json::parse(runs.out, nullptr, false);
    if (!j.is_discarded())
      for (const auto& r : j["runs"])
        if (r.value("agent", "") == "busy") run_id = r.value("id", "");
    if (run_id.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(run_id.empty()) << "the background run never showed in `parallex runs`";

  auto del = px("agent delete busy --yes");
  EXPECT_EQ(del.status, 5) << del.err;
  EXPECT_NE(del.err.find("running"), std::string::npos) << del.err;
  EXPECT_TRUE(fs::exists(paths("busy").private_key()));
  auto rewind = px("agent rewind busy --yes");
  EXPECT_NE(rewind.status, 0);
  EXPECT_NE(rewind.err.find("running"), std::string::npos) << rewind.err;

  ASSERT_EQ(px("kill " + run_id).status, 0);
  bool ended = false;
  for (int i = 0; i < 200 && !ended; ++i) {
    ended = px("runs --json").out.find(run_id) == std::string::npos;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(ended);
  EXPECT_EQ(px("agent delete busy --yes").status, 0);
  EXPECT_FALSE(fs::exists(paths("busy").root));
}

TEST_F(AgentStateTest, ShellStartupFilesStayReadOnlyInARun) {
  make_agent("shelly");
  const fs::path repo = make_repo("shelly-work");
  if (!seal_runs("shelly", repo)) GTEST_SKIP() << "the seal does not run here";
  // Even those whose folder does not exist yet: a run could otherwise plant one
  // that every later shell of the agent would run.
  for (const std::string rc : {".bashrc", ".profile", ".config/fish/config.fish"}) {
    auto r = px("agent run shelly --in " + q(repo.string()) + " -- sh -c 'mkdir -p \"$(dirname \"$HOME/" +
                rc + "\")\"; echo planted >> \"$HOME/" + rc + "\"'");
    EXPECT_NE(r.status, 0) << rc;
    EXPECT_EQ(slurp(paths("shelly").home() / rc).find("planted"), std::string::npos) << rc;
    EXPECT_EQ(r.err.find("could not be made"), std::string::npos) << r.err;
  }
  // Ordinary files in its home stay writable.
  EXPECT_EQ(
      px("agent run shelly --in " + q(repo.string()) + " -- sh -c 'echo ok > \"$HOME/notes.txt\"'").status,
      0);
  EXPECT_EQ(slurp(paths("shelly").home() / "notes.txt"), "ok\n");
}

// The agent's browser runs unsealed, as the user; its runs write its home. Chromium loads the
// PKCS#11 modules its HOME's ~/.pki/nssdb/pkcs11.txt lists at its first certificate check: with
// the agent's home as that HOME (as it was), a module a run put there ran as the user when they
// opened `parallex agent browser NAME https://...`. The browser's HOME and profile are in the
// agent's folder of Parallex's data now, out of its runs' reach.
TEST_F(AgentStateTest, WhatItsRunsPlantInItsHomeNeverRunsInItsBrowser) {
  if (sh("command -v chromium && command -v cc && command -v openssl && command -v python3").status != 0)
    GTEST_SKIP() << "needs chromium, cc, openssl and python3";
  make_agent("planter", "--browser chromium");
  const fs::path repo = make_repo("planter-work");
  if (!seal_runs("planter", repo)) GTEST_SKIP() << "the seal does not run here";
  // The module: a library whose constructor leaves a mark where the user can see it.
  const fs::path marker = root_ / "module-ran";
  spit(repo / "module.c",
       "#include <stdio.h>\n__attribute__((constructor)) static void ran(void) {\n"
       "  FILE* f = fopen(\"" +
           marker.string() + "\", \"w\"); if (f) fclose(f);\n}\n");
  ASSERT_EQ(
      sh("cc -shared -fPIC -o " + q((repo / "module.so").string()) + " " + q((repo / "module.c").string()))
          .status,
      0);
  // The run plants it in its home, and tries the browser's own folder too (which it cannot see:
  // the path leads nowhere on the host).
  const std::string browser = (paths("planter").root / "browser").string();
  auto r =
      px("agent run planter --in " + q(repo.string()) +
         " -- sh -c 'mkdir -p \"$HOME/.pki/nssdb\" && cp module.so \"$HOME/.pki/nssdb/\" && "
         "printf \"library=$HOME/.pki/nssdb/module.so\\nname=planted\\n\" > \"$HOME/.pki/nssdb/pkcs11.txt\"; "
         "mkdir -p " +
         browser + "/.pki/nssdb && echo reached > " + browser + "/.pki/nssdb/pkcs11.txt'");
  ASSERT_TRUE(fs::exists(paths("planter").home() / ".pki" / "nssdb" / "pkcs11.txt")) << r.err;
  EXPECT_FALSE(fs::exists(paths("planter").root / "browser" / ".pki" / "nssdb" / "pkcs11.txt"));
  // A page on this machine over TLS, so that the browser checks a certificate.
  const fs::path cert = root_ / "cert.pem", key = root_ / "key.pem", port_file = root_ / "tls.port";
  ASSERT_EQ(sh("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -keyout " +
               q(key.string()) + " -out " + q(cert.string()) + " 2>/dev/null")
                .status,
            0);
  const std::string server =
      "import ssl, http.server\n"
      "s = http.server.HTTPServer(('127.0.0.1', 0), http.server.SimpleHTTPRequestHandler)\n"
      "c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain('" +
      cert.string() + "', '" + key.string() +
      "')\n"
      "s.socket = c.wrap_socket(s.socket, server_side=True)\n"
      "open('" +
      port_file.string() +
      "', 'w').write(str(s.server_address[1]))\n"
      "s.timeout = 20\nfor _ in range(20): s.handle_request()\n";
  spit(root_ / "tls.py", server);
  const pid_t tls = ::fork();
  if (tls == 0) {
    ::execlp("python3", "python3", (root_ / "tls.py").c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 100 && slurp(port_file).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::string port = slurp(port_file);
  ASSERT_FALSE(port.empty()) << "the TLS page did not start";
  auto opened =
      px("agent browser planter https://127.0.0.1:" + port + "/", "", "PARALLEX_BROWSER_HEADLESS=1");
  ::kill(tls, SIGKILL);
  ::waitpid(tls, nullptr, 0);
  EXPECT_EQ(opened.status, 0) << opened.err;
  EXPECT_FALSE(fs::exists(marker)) << "the module the run planted ran in the user's browser";
}

TEST_F(AgentStateTest, AGitRepositoryMadeByTheRunIsCaught) {
  make_agent("initer");
  const fs::path repo = make_repo("initer-repo");
  if (!seal_runs("initer", repo)) GTEST_SKIP() << "the seal does not run here";
  const fs::path plain = root_ / "plain";
  fs::create_directories(plain);
  auto r = px("agent run initer --in " + q(plain.string()) + " -- git init -q .");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("made a git repository"), std::string::npos) << r.err;
  EXPECT_EQ(run_records("initer").back()["git_repository_created"], (plain / ".git").string());
  EXPECT_EQ(r.err.find("made a git repository"), r.err.rfind("made a git repository"))
      << "said once: " << r.err;
  // The report of that run says so too.
  auto report = px("agent report initer --json");
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("made a git repository"), std::string::npos) << report.out;
  // In a repository that had one already, nothing is said.
  auto quiet = px("agent run initer --in " + q(repo.string()) + " -- git status --short");
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("made a git repository"), std::string::npos) << quiet.err;
  EXPECT_FALSE(run_records("initer").back().contains("git_repository_created"));
}

TEST_F(AgentStateTest, ItsOwnBrowserProfileIsMadeAndMarked) {
  make_agent("browsy", "--browser chromium");
  const fs::path profile = paths("browsy").root / "browser" / "chromium";
  ASSERT_TRUE(fs::is_directory(profile / "Default"));
  EXPECT_EQ(mode_of(profile), 0700u);
  const auto marker = parse_or_fail(slurp(profile / "parallex-agent.json"));
  EXPECT_EQ(marker["agent"], "browsy");
  EXPECT_EQ(marker["window_name"], "browsy (agent)");
  const auto prefs = parse_or_fail(slurp(profile / "Default" / "Preferences"));
  EXPECT_EQ(prefs["signin"]["allowed"], false);
  EXPECT_EQ(prefs["profile"]["name"], "browsy (agent)");
  // Nothing of the user's browser came with it.
  EXPECT_FALSE(fs::exists(profile / "Default" / "Cookies"));
  EXPECT_FALSE(fs::exists(profile / "Default" / "Login Data"));
  // Made again by hand, the marks are refreshed and what Chromium wrote is kept.
  spit(profile / "Default" / "Bookmarks", "{}");
  auto again = px("agent browser browsy --create-only");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_TRUE(fs::exists(profile / "Default" / "Bookmarks"));
  auto unknown = px("agent browser nobody --create-only");
  EXPECT_EQ(unknown.status, 3) << unknown.err;
  EXPECT_NE(unknown.err.find("nobody"), std::string::npos) << unknown.err;
  auto bad = px("agent new other --email o@example.com --browser firefox");
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_FALSE(fs::exists(paths("other").root));
}
