// Every front door that runs something takes the same path (the run stage):
// the same bad input gives the same message and the same exit status from
// `run`, `agent run` and `harness -w`. Through the real executable, with its
// state in a private folder.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;

struct Ran {
  int status = -1;
  std::string err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class FrontDoors : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/px-doors-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    root_ = templ;
    fs::create_directories(root_ / "home");
    fs::create_directories(root_ / "runtime");
    fs::permissions(root_ / "runtime", fs::perms::owner_all);
    repo_ = root_ / "repo";
    fs::create_directories(repo_);
    std::ofstream(repo_ / "README") << "x\n";
    ASSERT_EQ(sh("cd " + quote(repo_.string()) +
                 " && git init -q && git add README && git -c user.name=t -c user.email=t@example.com commit -qm x"),
              0);
    ASSERT_EQ(px("agent new door --email door@example.com").status, 0);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  int sh(const std::string& cmd) {
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }

  // `parallex ARGS` in the repository, stderr kept.
  // With `direct` false, `args` is the whole command (it names the executable).
  Ran px(const std::string& args, const std::string& env = "", bool direct = true) {
    const fs::path err = root_ / "stderr";
    const std::string cmd = "cd " + quote(repo_.string()) +
                            " && env HOME=" + quote((root_ / "home").string()) +
                            " PARALLEX_HOME=" + quote((root_ / "data").string()) +
                            " XDG_RUNTIME_DIR=" + quote((root_ / "runtime").string()) + " " + env + " " +
                            (direct ? std::string(PARALLEX_EXE) + " " : std::string()) + args +
                            " </dev/null >/dev/null 2>" + quote(err.string());
    Ran r;
    r.status = sh(cmd);
    std::ifstream in(err);
    std::stringstream s;
    s << in.rdbuf();
    r.err = s.str();
    return r;
  }

  // The line of `err` that holds `needle` (the message under test), without the rest.
  static std::string line_with(const std::string& err, const std::string& needle) {
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);)
      if (line.find(needle) != std::string::npos) return line;
    return {};
  }

  fs::path root_, repo_;
};

TEST_F(FrontDoors, ACommandNotFoundIsTheSameEverywhere) {
  const Ran run = px("run -- px-no-such-command");
  const Ran agent = px("agent run door -- px-no-such-command");
  const Ran tab = px("harness -w -- px-no-such-command");
  for (const Ran* r : {&run, &agent, &tab}) {
    EXPECT_EQ(r->status, 127) << r->err;
    EXPECT_NE(line_with(r->err, "command not found: px-no-such-command"), "") << r->err;
  }
  EXPECT_EQ(line_with(run.err, "command not found"), line_with(agent.err, "command not found"));
  EXPECT_EQ(line_with(run.err, "command not found"), line_with(tab.err, "command not found"));
}

// A file that is there but cannot be run is the shell's 126, not 127.
TEST_F(FrontDoors, AFileThatIsNotExecutableIs126Everywhere) {
  for (const std::string& door :
       {std::string("run"), std::string("agent run door"), std::string("harness -w")}) {
    const Ran r = px(door + " -- ./README");
    EXPECT_EQ(r.status, 126) << door << ": " << r.err;
    EXPECT_NE(line_with(r.err, "cannot run ./README: it is not executable"), "") << door << ": " << r.err;
  }
}

// A profile that is not a file (a FIFO nobody writes, a device that never
// ends, a folder) is refused at once, by name, before anything is made.
TEST_F(FrontDoors, AProfileThatIsNotAFileIsRefusedAtOnceEverywhere) {
  const fs::path fifo = root_ / "profile.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& profile : {fifo.string(), std::string("/dev/zero"), std::string("/etc")}) {
    for (const std::string& door :
         {std::string("run"), std::string("agent run door"), std::string("harness -w")}) {
      const Ran r = px("timeout 10 " + std::string(PARALLEX_EXE) + " " + door + " --profile " +
                           quote(profile) + " -- true",
                       "", /*direct=*/false);
      EXPECT_EQ(r.status, 125) << door << " " << profile << ": " << r.err;
      EXPECT_NE(line_with(r.err, "the profile " + profile + " is "), "") << door << ": " << r.err;
      EXPECT_NE(line_with(r.err, "not a regular file"), "") << door << ": " << r.err;
    }
  }
  EXPECT_FALSE(fs::exists(repo_ / ".parallex/workspaces")) << "a workspace was made";
}

// Paths and arguments are bytes: a folder, an argument and a grant that are
// not UTF-8 run like any other, and their record reads back (JSON holds
// U+FFFD where a byte was not UTF-8).
TEST_F(FrontDoors, BytesThatAreNotUtf8RunEverywhere) {
  const fs::path odd = repo_ / "caf\xe9";
  fs::create_directories(odd);
  for (const std::string& door :
       {std::string("run"), std::string("agent run door"), std::string("harness -w")}) {
    const Ran r = px(door + " --grant " + quote(odd.string()) + " -- sh -c " +
                     quote("test -d " + odd.string()) + " " + quote("\xff\xfe"));
    EXPECT_EQ(r.status, 0) << door << ": " << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << door << ": " << r.err;
  }
  const Ran report = px("report --last --json");
  EXPECT_EQ(report.status, 0) << report.err;
}

// A writable grant of the whole home (or above it) is refused wherever it is
// given, at the moment it is given: a flag on each door, and an agent's rule.
// (Read-only it is the user's choice; the secret paths stay denied.)
TEST_F(FrontDoors, AGrantOfTheWholeHomeIsRefusedEverywhere) {
  const std::string home = (root_ / "home").string();
  for (const std::string& door : {std::string("run"), std::string("agent run door"),
                                  std::string("harness -w"), std::string("agent set door")}) {
    for (const std::string& grant : {std::string("~:rw"), home + ":rw", std::string("/:rw")}) {
      const Ran r = px(door + " --grant " + quote(grant) + (door == "agent set door" ? "" : " -- true"));
      EXPECT_EQ(r.status, door == "agent set door" ? 1 : 125) << door << " " << grant << ": " << r.err;
      EXPECT_NE(line_with(r.err, "makes all of your home " + home + " writable"), "")
          << door << ": " << r.err;
    }
  }
  // A mode that is neither ro nor rw is named as such, not as a missing path.
  const Ran mode = px("run --grant /etc:rx -- true");
  EXPECT_EQ(mode.status, 125);
  EXPECT_NE(line_with(mode.err, "the access after ':' is ro (read) or rw (read and write), not 'rx'"), "")
      << mode.err;
  EXPECT_FALSE(fs::exists(repo_ / ".parallex/workspaces")) << "a workspace was made";
}

// Two runs of one agent started together both snapshot its home: the second
// waits for the first's snapshot, neither fails for the other.
TEST_F(FrontDoors, TwoRunsOfOneAgentStartedTogetherBothRun) {
  const std::string env = "env HOME=" + quote((root_ / "home").string()) +
                          " PARALLEX_HOME=" + quote((root_ / "data").string()) +
                          " XDG_RUNTIME_DIR=" + quote((root_ / "runtime").string()) + " ";
  const std::string one = env + PARALLEX_EXE +
                          " agent run door -- sh -c 'head -c 20000000 /dev/urandom > f1' 2>" +
                          quote((root_ / "err1").string());
  const std::string two = env + PARALLEX_EXE +
                          " agent run door -- sh -c 'head -c 20000000 /dev/urandom > f2' 2>" +
                          quote((root_ / "err2").string());
  const int rc = sh("cd " + quote(repo_.string()) + " && (" + one + " & " + two +
                    " & wait %1; a=$?; wait %2; b=$?; " + "test $a = 0 && test $b = 0)");
  std::ifstream e1(root_ / "err1"), e2(root_ / "err2");
  std::stringstream s1, s2;
  s1 << e1.rdbuf();
  s2 << e2.rdbuf();
  EXPECT_EQ(rc, 0) << s1.str() << "\n---\n" << s2.str();
  EXPECT_EQ(s1.str().find("in use"), std::string::npos) << s1.str();
  EXPECT_EQ(s2.str().find("in use"), std::string::npos) << s2.str();
}

TEST_F(FrontDoors, AFolderThatIsNotThereIsTheSameEverywhere) {
  const std::string nope = (root_ / "nope").string();
  const Ran run = px("run --in " + quote(nope) + " -- true");
  const Ran agent = px("agent run door --in " + quote(nope) + " -- true");
  for (const Ran* r : {&run, &agent}) {
    EXPECT_EQ(r->status, 125) << r->err;
    EXPECT_NE(line_with(r->err, nope + " is not a directory"), "") << r->err;
  }
  EXPECT_EQ(line_with(run.err, "is not a directory"), line_with(agent.err, "is not a directory"));
}

TEST_F(FrontDoors, NoCommandIsTheSameEverywhere) {
  for (const std::string& door : {std::string("run"), std::string("agent run door"), std::string("harness -w")}) {
    const Ran r = px(door);
    EXPECT_EQ(r.status, 125) << door << ": " << r.err;
    EXPECT_NE(r.err.find("after `--`"), std::string::npos) << door << ": " << r.err;
  }
}

// An option a run command does not know is Parallex's failure to start the
// run (125), never a status the command itself could have exited with; the
// other commands keep 2 for bad usage.
TEST_F(FrontDoors, AnUnknownOptionIsTheSameEverywhere) {
  for (const std::string& door : {std::string("run"), std::string("agent run door"), std::string("harness -w")}) {
    const Ran r = px(door + " --no-such-option -- true");
    EXPECT_EQ(r.status, 125) << door << ": " << r.err;
    EXPECT_NE(r.err.find("--no-such-option"), std::string::npos) << door << ": " << r.err;
  }
  const Ran other = px("policy show --no-such-option");
  EXPECT_EQ(other.status, 2) << other.err;
}

// A guarantee the kernel lacks is decided once, in the run stage: every door
// refuses with the same words and names the one flag that accepts it.
TEST_F(FrontDoors, AMissingGuaranteeRefusesTheSameEverywhere) {
  const std::string missing = "PARALLEX_TEST_MISSING_GUARANTEE=landlock.fs";
  const Ran run = px("run -- true", missing);
  const Ran agent = px("agent run door -- true", missing);
  const Ran tab = px("harness -w -- true", missing);
  for (const Ran* r : {&run, &agent, &tab}) {
    EXPECT_EQ(r->status, 125) << r->err;
    EXPECT_NE(line_with(r->err, "refusing to run: the seal would lack Landlock"), "") << r->err;
    EXPECT_NE(r->err.find("--allow-weaker-seal"), std::string::npos) << r->err;
  }
  EXPECT_EQ(line_with(run.err, "refusing to run"), line_with(agent.err, "refusing to run"));
  EXPECT_EQ(line_with(run.err, "refusing to run"), line_with(tab.err, "refusing to run"));
  // Nothing was made for the refused workspaced run.
  EXPECT_FALSE(fs::exists(repo_ / ".parallex" / "workspaces") && !fs::is_empty(repo_ / ".parallex" / "workspaces"));
  // Accepted, the run goes on and says so; the old spelling still works and says it is old.
  const Ran weaker = px("run --allow-weaker-seal -- true", missing);
  EXPECT_EQ(weaker.status, 0) << weaker.err;
  EXPECT_NE(weaker.err.find("weaker seal"), std::string::npos) << weaker.err;
  const Ran old = px("agent run door --accept-weaker-seal -- true", missing);
  EXPECT_EQ(old.status, 0) << old.err;
  EXPECT_NE(old.err.find("now --allow-weaker-seal"), std::string::npos) << old.err;
}

// The run options are the same on every run command (they used to differ).
TEST_F(FrontDoors, TheSameRunOptionsEverywhere) {
  for (const std::string& door : {std::string("run"), std::string("agent run door"), std::string("harness -w")}) {
    const Ran r = px(door + " --local-servers --grant /usr/share --profile offline -- true");
    EXPECT_NE(r.status, 125) << door << ": " << r.err;
    EXPECT_EQ(r.err.find("not expected"), std::string::npos) << door << ": " << r.err;
  }
}

}  // namespace
