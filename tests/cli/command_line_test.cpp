// The command line a person expects, run for real: global options after the
// sub-command, parse errors that name the word, usage lines that say
// `parallex`, the kill switch's --all, colour only on a terminal and never with
// NO_COLOR, and what --version says.
#include <gtest/gtest.h>

#include <regex>

#include "cli_support.hpp"
#include "test_paths.hpp"

namespace px::cli_test {
namespace {

TEST(CommandLine, GlobalOptionsWorkAfterTheSubcommand) {
  Folder home;
  for (const char* args : {"agent list -v", "agent list --log-level debug", "plugins -v", "-v agent list"}) {
    const Ran r = px(args, home.path);
    EXPECT_EQ(r.status, 0) << args << ": " << r.err;
  }
  // --log-level keeps its check wherever it is given.
  const Ran bad = px("agent list --log-level loud", home.path);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("loud"), std::string::npos) << bad.err;
}

TEST(CommandLine, AParseErrorNamesTheWordAndTheCommand) {
  Folder home;
  const Ran frob = px("frob", home.path);
  EXPECT_EQ(frob.status, 2);
  EXPECT_EQ(frob.err.rfind("parallex: 'frob' is not a command of `parallex`", 0), 0u) << frob.err;
  EXPECT_NE(frob.err.find("agent"), std::string::npos) << "the commands are listed: " << frob.err;
  EXPECT_EQ(frob.err.find("A subcommand is required"), std::string::npos) << frob.err;

  const Ran typo = px("agnet list", home.path);
  EXPECT_NE(typo.err.find("did you mean 'agent'"), std::string::npos) << typo.err;

  // (`agent` also takes `-w NAME -- CMD`, whose command the word would be: its own words.)
  const Ran sub = px("agent frob", home.path);
  EXPECT_EQ(sub.status, 2);
  EXPECT_EQ(sub.err.rfind("parallex: ", 0), 0u) << sub.err;
  EXPECT_NE(sub.err.find("`frob`"), std::string::npos) << sub.err;
  EXPECT_NE(sub.err.find("`parallex agent`"), std::string::npos) << sub.err;
  const Ran snap = px("snapshot frob", home.path);
  EXPECT_EQ(snap.err.rfind("parallex: 'frob' is not a command of `parallex snapshot`", 0), 0u) << snap.err;

  const Ran option = px("agent list --frob", home.path);
  EXPECT_EQ(option.status, 2);
  EXPECT_EQ(option.err.rfind("parallex: agent list: ", 0), 0u) << option.err;
  EXPECT_NE(option.err.find("--frob"), std::string::npos) << option.err;
  EXPECT_NE(option.err.find("parallex agent list --help"), std::string::npos) << option.err;

  const Ran bogus = px("--bogus", home.path);
  EXPECT_EQ(bogus.status, 2);
  EXPECT_EQ(bogus.err.rfind("parallex: --bogus is not an option of `parallex`", 0), 0u) << bogus.err;

  const Ran nothing = px("", home.path);
  EXPECT_EQ(nothing.status, 2);
  EXPECT_EQ(nothing.err.rfind("parallex: `parallex` needs a command: ", 0), 0u) << nothing.err;
}

// The options of `agent -w NAME -- CMD` given to another sub-command are
// refused, never silently dropped; -w without a name is refused too.
TEST(CommandLine, TheWorkspacedTabsOptionsAreNotDroppedOnOtherSubcommands) {
  Folder home;
  for (const char* args : {"agent list --offline", "agent list --harness claude-code",
                           "agent new bot --email b@example.com --profile x", "agent list --name n",
                           "agent list --events out.jsonl"}) {
    const Ran r = px(args, home.path);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find("belongs to `parallex agent -w NAME -- CMD`; it does not combine with `agent "),
              std::string::npos)
        << args << ": " << r.err;
  }
  const Ran alone = px("agent --offline", home.path);
  EXPECT_EQ(alone.status, 2) << alone.err;
  EXPECT_NE(alone.err.find("--offline belongs to `parallex agent -w NAME -- CMD`"), std::string::npos)
      << alone.err;
  // Every option -w takes, --env included (a hand-kept list once missed it and
  // `agent --env X set bot` dropped the variable without a word).
  const Ran env = px("agent --env FOO=1 list", home.path);
  EXPECT_EQ(env.status, 2) << env.err;
  EXPECT_NE(
      env.err.find("--env belongs to `parallex agent -w NAME -- CMD`; it does not combine with `agent list`"),
      std::string::npos)
      << env.err;
  const Ran with_w = px("agent -w bot list", home.path);
  EXPECT_EQ(with_w.status, 2) << with_w.err;
  EXPECT_NE(with_w.err.find("it does not combine with `agent list`"), std::string::npos) << with_w.err;
  const Ran before_set = px("agent --env FOO=1 set bot", home.path);
  EXPECT_EQ(before_set.status, 2) << before_set.err;
  EXPECT_NE(before_set.err.find("give it after `set`"), std::string::npos) << before_set.err;
  // A container image's one-time choice, PARALLEX_ALLOW_WEAKER_SEAL, is not
  // -w's option given before `list` (or `run`): the sub-command reads it too.
  const Ran by_env = px("agent list", home.path, {{"PARALLEX_ALLOW_WEAKER_SEAL", "1"}});
  EXPECT_EQ(by_env.status, 0) << by_env.err;
  EXPECT_EQ(by_env.err.find("was given before"), std::string::npos) << by_env.err;
  const Ran empty = px("agent -w '' -- true", home.path);
  EXPECT_EQ(empty.status, 2) << empty.err;
  EXPECT_NE(empty.err.find("-w needs the agent's name"), std::string::npos) << empty.err;
}

// A port is read the same way by every input (common/port.hpp): `0443` (read as
// 443 by one program and as octal by another) is refused by each, as are 0 and
// 65536, and the message names the input.
TEST(CommandLine, EveryInputRefusesTheSamePorts) {
  Folder home;
  for (const char* bad : {"0443", "0", "65536"}) {
    for (const std::string& args : {std::string("run --allow example.com:") + bad + " -- true",
                                    std::string("run --local-servers=") + bad + " -- true",
                                    std::string("run --publish ") + bad + " -- true"}) {
      const Ran r = px(args, home.path);
      EXPECT_EQ(r.status, 125) << args << ": " << r.err;  // refused before anything ran
      EXPECT_NE(r.err.find(bad), std::string::npos) << args << ": " << r.err;
    }
    // The options that take a port as a number: CLI11 alone reads `0443` as
    // octal (291), `parallex proxy --listen` read it as 443.
    for (const std::string& args : {std::string("proxy --allow-port ") + bad,
                                    std::string("policy show --proxy-port ") + bad + " -- true",
                                    std::string("ui --no-open --port ") + bad}) {
      const Ran r = px(args, home.path);
      EXPECT_EQ(r.status, 2) << args << ": " << r.err;
      EXPECT_NE(r.err.find(bad), std::string::npos) << args << ": " << r.err;
    }
  }
  // --listen takes 0 too (a free port), and nothing else parse_port refuses.
  for (const char* bad : {"0443", "65536", "+80", ""}) {
    const std::string args = std::string("proxy --listen 127.0.0.1:") + bad;
    const Ran r = px(args, home.path);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(std::string("bad port '") + bad + "'"), std::string::npos) << args << ": " << r.err;
  }
  const Ran good =
      px("policy show --allow example.com:8443 --local-servers=5432 --publish 3000 -- true", home.path);
  EXPECT_EQ(good.status, 0) << good.err;
}

TEST(CommandLine, UsageSaysParallexNotThePathItWasRunBy) {
  Folder home;
  const Ran help = px("agent list --help", home.path);
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("parallex agent list"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find(PARALLEX_EXE), std::string::npos) << help.out;
}

TEST(CommandLine, KillAllExistsAndEachAllHasItsOwnHelp) {
  Folder home;
  const Ran none = px("kill", home.path);
  EXPECT_NE(none.err.find("--all"), std::string::npos) << none.err;
  const Ran all = px("kill --all", home.path);
  EXPECT_EQ(all.status, 0) << all.err;
  auto all_line = [&](const char* command) {
    const std::string out = px(std::string(command) + " --help", home.path).out;
    const auto at = out.find("  --all");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  const std::string pause = all_line("pause"), resume = all_line("resume"), kill = all_line("kill");
  EXPECT_NE(resume.find("Resume every run"), std::string::npos) << resume;
  EXPECT_NE(kill.find("Kill every run"), std::string::npos) << kill;
  EXPECT_NE(pause, resume);
}

TEST(CommandLine, VersionSaysCommitAndBothAbis) {
  Folder home;
  const Ran v = px("--version", home.path);
  ASSERT_EQ(v.status, 0);
  EXPECT_TRUE(std::regex_search(v.out, std::regex("^parallex [0-9]+\\.[0-9]+\\.[0-9]+\n"))) << v.out;
  EXPECT_TRUE(std::regex_search(v.out, std::regex("\ncommit [0-9a-f]{7,}(-dirty)?\n|\ncommit unknown\n")))
      << v.out;
  EXPECT_TRUE(std::regex_search(v.out, std::regex("\nplugin ABI [0-9]+\\.[0-9]+\n"))) << v.out;
  EXPECT_TRUE(std::regex_search(v.out, std::regex("\nLandlock ABI [0-9]+ "))) << v.out;
  // Given with other words, it is the same (CLI11's flag).
  EXPECT_EQ(px("-v --version", home.path).out, v.out);
}

// A terminal gets colour; NO_COLOR and a pipe do not. `script` gives the
// command a real pseudo-terminal.
TEST(CommandLine, ColourOnlyOnATerminalAndNeverWithNoColor) {
  if (sh("command -v script").status != 0) GTEST_SKIP() << "no `script` (util-linux) for a pseudo-terminal";
  Folder home;
  const Ran ran = px("run --offline -- /bin/true", home.path);
  if (ran.status != 0) GTEST_SKIP() << "no sealed run here: " << ran.err;
  const std::string report = std::string(PARALLEX_EXE) + " report";
  const std::map<std::string, std::string> env{{"PARALLEX_HOME", (home.path / "px").string()},
                                               {"TERM", "xterm"}};
  const Ran piped = sh(report, env);
  ASSERT_EQ(piped.status, 0) << piped.err;
  EXPECT_EQ(piped.out.find('\x1b'), std::string::npos) << "colour into a pipe";
  const Ran tty = sh("script -qec " + q(report) + " /dev/null", env);
  EXPECT_NE(tty.out.find("\x1b["), std::string::npos) << "no colour on a terminal: " << tty.out;
  auto no_color = env;
  no_color["NO_COLOR"] = "1";
  const Ran tty_no_color = sh("script -qec " + q(report) + " /dev/null", no_color);
  EXPECT_EQ(tty_no_color.out.find("\x1b["), std::string::npos) << "colour despite NO_COLOR";
}

// At a terminal, `agent rewind` shows what it would replace and asks; "n"
// leaves the home as it is, "y" rewinds. `script` gives it a real terminal
// and types the answer.
TEST(CommandLine, AgentRewindShowsWhatItReplacesAndAsks) {
  if (sh("command -v script").status != 0) GTEST_SKIP() << "no `script` (util-linux) for a pseudo-terminal";
  Folder home;
  ASSERT_EQ(px("agent new keeper --email keeper@example.com", home.path).status, 0);
  const fs::path notes = home.path / "px/agents/keeper/home/notes.txt";
  write(notes, "first\n");
  ASSERT_EQ(px("agent snapshot keeper", home.path).status, 0);
  write(notes, "second\n");
  const std::map<std::string, std::string> env{{"PARALLEX_HOME", (home.path / "px").string()},
                                               {"XDG_RUNTIME_DIR", (home.path / "runtime").string()}};
  const std::string rewind = std::string(PARALLEX_EXE) + " agent rewind keeper";
  const Ran no = sh("echo n | script -qec " + q(rewind) + " /dev/null", env);
  EXPECT_NE(no.out.find("1 replaced"), std::string::npos) << no.out;
  EXPECT_NE(no.out.find("update  notes.txt"), std::string::npos) << no.out;
  EXPECT_NE(no.out.find("Rewind it?"), std::string::npos) << no.out;
  EXPECT_NE(no.out.find("was not rewound"), std::string::npos) << no.out;
  EXPECT_EQ(sh("cat " + q(notes.string())).out, "second\n");
  const Ran yes = sh("echo y | script -qec " + q(rewind) + " /dev/null", env);
  EXPECT_NE(yes.out.find("Rewound agent keeper's home"), std::string::npos) << yes.out;
  EXPECT_EQ(sh("cat " + q(notes.string())).out, "first\n");
}

}  // namespace
}  // namespace px::cli_test
