// The shell completions the build generates (build/share/completions), run in
// the real shells: bash's completion function on a partial command line, fish's
// `complete -C`, and zsh's parser on its script.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "cli_support.hpp"
#include "test_paths.hpp"

namespace px::cli_test {
namespace {

const std::string kCompletions = std::string(PARALLEX_SHARE_DIR) + "/completions/";

// What bash offers for the command line `words` (the last word being completed).
std::set<std::string> bash_complete(const std::string& words) {
  const std::string script =
      "source " + q(kCompletions + "parallex") + "\nCOMP_WORDS=(" + words +
      ")\nCOMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n" +
      // A trailing space means a new, empty word.
      (words.back() == ' ' ? "COMP_WORDS+=(''); COMP_CWORD=$((COMP_CWORD + 1))\n" : "") +
      "_parallex\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n";
  const Ran r = sh("bash -c " + q(script));
  EXPECT_EQ(r.status, 0) << r.err;
  std::set<std::string> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) out.insert(line);
  return out;
}

TEST(Completion, BashCompletesCommandsSubcommandsOptionsAndValues) {
  if (sh("command -v bash").status != 0) GTEST_SKIP() << "no bash";
  EXPECT_EQ(bash_complete("parallex ag"), (std::set<std::string>{"agent"}));
  const auto agent_r = bash_complete("parallex agent r");
  for (const char* sub : {"run", "report", "rewind"}) EXPECT_EQ(agent_r.count(sub), 1u) << sub;
  for (const auto& w : agent_r) EXPECT_EQ(w[0], 'r') << w;
  // Options of the command reached, and the global ones (accepted after it).
  const auto run_options = bash_complete("parallex run --");
  for (const char* opt : {"--in", "--grant", "--verbose", "--log-level", "--help"})
    EXPECT_EQ(run_options.count(opt), 1u) << opt;
  EXPECT_EQ(run_options.count("--email"), 0u) << "an option of `agent new` offered to `run`";
  // Every run command takes the same run options.
  EXPECT_EQ(bash_complete("parallex agent run --").count("--grant"), 1u) << "`agent run` lacks --grant";
  EXPECT_EQ(bash_complete("parallex agent run --").count("--email"), 0u) << "`agent new`'s --email offered";
  // The values an option accepts; a global option's value after a sub-command.
  EXPECT_EQ(bash_complete("parallex agent list --log-level d"), (std::set<std::string>{"debug"}));
  // (--local-servers takes `off` or a list of ports: nothing to offer.)
  EXPECT_EQ(bash_complete("parallex agent set x --decoys "), (std::set<std::string>{"on", "off"}));
  // A value is not taken for a command: `--log-level debug ag` still completes `agent`.
  EXPECT_EQ(bash_complete("parallex --log-level debug ag"), (std::set<std::string>{"agent"}));
  // After `--` comes the command to run: commands of the system, not ours.
  const auto after = bash_complete("parallex run -- bas");
  EXPECT_EQ(after.count("bash"), 1u);
  EXPECT_EQ(after.count("agent"), 0u);
  // Internal commands (the generators) are not offered.
  EXPECT_EQ(bash_complete("parallex ma").count("man"), 0u);
}

TEST(Completion, FishCompletesFromItsScript) {
  if (sh("command -v fish").status != 0) GTEST_SKIP() << "no fish";
  // fish makes its config and history folders in the home it is given: a
  // home of the test's own, not the developer's.
  const Folder home;
  const std::map<std::string, std::string> own_home = {
      {"HOME", home.path.string()},
      {"XDG_CONFIG_HOME", (home.path / ".config").string()},
      {"XDG_DATA_HOME", (home.path / ".local/share").string()},
      {"XDG_CACHE_HOME", (home.path / ".cache").string()}};
  const std::string file = kCompletions + "parallex.fish";
  const Ran syntax = sh("fish --no-execute " + q(file), own_home);
  EXPECT_EQ(syntax.status, 0) << syntax.err;
  const Ran r = sh("fish -c " + q("source " + q(file) + "; complete -C 'parallex agent r'"), own_home);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* sub : {"run\t", "report\t", "rewind\t"})
    EXPECT_NE(r.out.find(sub), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("new\t"), std::string::npos) << r.out;
  const Ran values =
      sh("fish -c " + q("source " + q(file) + "; complete -C 'parallex --log-level '"), own_home);
  EXPECT_NE(values.out.find("debug"), std::string::npos) << values.out;
}

TEST(Completion, ZshScriptParses) {
  if (sh("command -v zsh").status != 0) GTEST_SKIP() << "no zsh";
  const Ran r = sh("zsh -n " + q(kCompletions + "_parallex"));
  EXPECT_EQ(r.status, 0) << r.err;
  // Its tables name the same commands as bash's.
  const Ran tables =
      sh("zsh -c " + q("source " + q(kCompletions + "_parallex") + " 2>/dev/null; _parallex_commands agent"));
  EXPECT_NE(tables.out.find("rewind:"), std::string::npos) << tables.out << tables.err;
}

TEST(Completion, PrintedByTheCommandAsInstalled) {
  Folder home;
  for (const char* shell : {"bash", "zsh", "fish"}) {
    const Ran r = px(std::string("completion ") + shell, home.path);
    EXPECT_EQ(r.status, 0) << shell << r.err;
    const std::string file = kCompletions + (std::string(shell) == "bash"  ? "parallex"
                                             : std::string(shell) == "zsh" ? "_parallex"
                                                                           : "parallex.fish");
    EXPECT_EQ(r.out, sh("cat " + q(file)).out) << shell;
  }
  const Ran bad = px("completion tcsh", home.path);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("tcsh"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace px::cli_test
