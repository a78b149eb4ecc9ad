// The man pages the build generates from the command line's own definitions:
// one per command, each rendered by the real man and groff without a warning.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli_support.hpp"
#include "test_paths.hpp"

namespace px::cli_test {
namespace {

const fs::path kMan = fs::path(PARALLEX_SHARE_DIR) / "man/man1";

std::string slurp_text(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ManPages, OnePerCommandAndNoneForInternalOnes) {
  for (const char* page : {"parallex", "parallex-run", "parallex-agent", "parallex-agent-run",
                           "parallex-agent-rewind", "parallex-snapshot-prune", "parallex-completion"})
    EXPECT_TRUE(fs::exists(kMan / (std::string(page) + ".1"))) << page;
  EXPECT_FALSE(fs::exists(kMan / "parallex-man.1")) << "the hidden generator has a page";
  // Installed compressed, as Debian wants them.
  EXPECT_TRUE(fs::exists(fs::path(PARALLEX_SHARE_DIR) / "man-gz/man1/parallex-run.1.gz"));
}

TEST(ManPages, RenderWithoutWarningsAndSayWhatTheParserKnows) {
  if (sh("command -v groff").status != 0) GTEST_SKIP() << "no groff";
  for (const auto& entry : fs::directory_iterator(kMan)) {
    const Ran r = sh("groff -man -Tutf8 -ww -z " + q(entry.path().string()));
    EXPECT_EQ(r.status, 0) << entry.path();
    EXPECT_EQ(r.err, "") << entry.path();
  }
  const Ran run = sh("MANWIDTH=100 man -l " + q((kMan / "parallex-run.1").string()) + " | col -b");
  ASSERT_EQ(run.status, 0) << run.err;
  for (const char* text : {"SYNOPSIS", "parallex run", "--allow-weaker-seal", "--grant", "COMMAND"})
    EXPECT_NE(run.out.find(text), std::string::npos) << text << "\n" << run.out;
  const Ran top = sh("MANWIDTH=100 man -l " + q((kMan / "parallex.1").string()) + " | col -b");
  for (const char* text : {"XDG_STATE_HOME", "NO_COLOR", "parallex-agent(1)", "EXIT STATUS"})
    EXPECT_NE(top.out.find(text), std::string::npos) << text << "\n" << top.out;
}

// README's `man -l build/share/man/man1/parallex.1` works in the build
// scripts/demo.sh makes: the targets it builds include the one that writes
// the pages (ninja lists every command those targets need).
TEST(ManPages, TheDemosBuildMakesThem) {
  const std::string demo = slurp_text(fs::path(PARALLEX_SOURCE_DIR) / "scripts/demo.sh");
  const std::string key = "PARALLEX_BUILD_TARGETS=\"";
  const auto at = demo.find(key);
  ASSERT_NE(at, std::string::npos) << "scripts/demo.sh names no targets";
  const std::string targets = demo.substr(at + key.size(), demo.find('"', at + key.size()) - at - key.size());
  if (sh("command -v ninja").status != 0 || !fs::exists(fs::path(PARALLEX_BINARY_DIR) / "build.ninja"))
    GTEST_SKIP() << "not a ninja build";
  const Ran commands = sh("ninja -C " + q(PARALLEX_BINARY_DIR) + " -t commands " + targets);
  ASSERT_EQ(commands.status, 0) << commands.err;
  EXPECT_NE(commands.out.find("GenerateDocs.cmake"), std::string::npos)
      << "the demo's targets (" << targets << ") do not make the man pages README names";
}

// Every --help ends by pointing at the man pages. `man parallex-run` finds
// nothing for the build's own executable (nothing is installed): that one
// names the page in its build, which man reads as it is given.
TEST(ManPages, HelpPointsAtPagesThatOpen) {
  const Ran help = sh(std::string(PARALLEX_EXE) + " run --help");
  ASSERT_EQ(help.status, 0) << help.err;
  const std::string page = (kMan / "parallex-run.1").string();
  const std::string said = "man -l " + page;
  ASSERT_NE(help.out.find(said), std::string::npos) << help.out;
  const Ran opened = sh("MANWIDTH=100 " + said + " | col -b");
  ASSERT_EQ(opened.status, 0) << opened.err;
  EXPECT_NE(opened.out.find("parallex run"), std::string::npos) << opened.out;
  // Copied elsewhere (or installed), it names the installed pages.
  Folder dir;
  const fs::path copy = dir.path / "parallex";
  fs::copy_file(PARALLEX_EXE, copy);
  const Ran elsewhere = sh(q(copy.string()) + " run --help");
  EXPECT_NE(elsewhere.out.find("Every command has a man page: man parallex-run"), std::string::npos)
      << elsewhere.out;
  EXPECT_EQ(elsewhere.out.find("man -l"), std::string::npos) << elsewhere.out;
}

}  // namespace
}  // namespace px::cli_test
