// Bad input, table-driven: every flag and file that takes a path, a host, a
// name or a value, given bytes that are not what it expects (a NUL byte in a
// file, bytes that are not UTF-8, letters that are not ASCII, control bytes
// and escape sequences, a value of 100,000 bytes, a FIFO, a device, a folder
// where a file belongs). Whatever the input: the command ends (bounded by a
// time-out) with an exit status of the table (never an internal error or a
// crash), says what it refuses naming the input, and nothing it prints
// carries a raw control byte or a byte that is not UTF-8 to the terminal.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "common/paths.hpp"
#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;
using namespace px::cli_test;

struct Value {
  const char* name;
  std::string text;
};

const std::vector<Value>& values() {
  static const std::vector<Value> v = {
      {"not-utf8",
       "a\xff\xfe"
       "b"},
      {"non-ascii",
       "\xc3\x9c"
       "BER-\xe5\x90\x8d"},
      {"escape", "a\x1b[31mred\x1b[0m"},
      {"newline", "a\nb"},
      {"c1",
       "a\xc2\x9b"
       "31mb"},
      {"huge", std::string(100000, 'x')},
  };
  return v;
}

// Whether `text` holds a control byte a terminal acts on (other than a
// newline or a tab) or a byte that is not UTF-8.
std::string terminal_hazard(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7f) return "control byte " + std::to_string(c) + " at " + std::to_string(i);
    int n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    if (n == 0 || i + n > text.size()) return "not UTF-8 at " + std::to_string(i);
    for (int k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80)
        return "not UTF-8 at " + std::to_string(i);
    if (c == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F)
      return "C1 control at " + std::to_string(i);
    i += n;
  }
  return "";
}

struct Flag {
  const char* args;  // VALUE is replaced by the value
};

// Through `policy show`, which takes the run options and composes the policy
// as a run does, without starting anything; and the commands that take names.
const Flag kFlags[] = {
    {"policy show --in VALUE"},
    {"policy show --grant VALUE"},
    {"policy show --grant VALUE:rw"},
    {"policy show --allow VALUE"},
    {"policy show --env VALUE"},
    {"policy show --env VALUE=1"},
    {"policy show --harness VALUE"},
    {"policy show --profile VALUE"},
    {"policy show --publish VALUE"},
    {"policy show --local-servers=VALUE"},
    {"policy show --dangerously-writable VALUE"},
    {"report --runs-dir VALUE"},
    {"report --run VALUE"},
    {"report --home VALUE"},
    {"report --agent VALUE"},
    {"agent new VALUE"},
    {"agent show VALUE"},
    {"agent set VALUE --allow example.com"},
    {"pause VALUE"},
    {"kill VALUE"},
    {"resume VALUE"},
    {"transcripts VALUE"},
};

std::string sh_quoted(const std::string& s) {
  return q(s);
}

void expect_sound(const Ran& r, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_NE(r.status, 124) << "hung";
  EXPECT_NE(r.status, 70) << "internal error: " << r.err.substr(0, 2000);
  EXPECT_LT(r.status, 126) << "crashed: " << r.err.substr(0, 2000);
  EXPECT_EQ(terminal_hazard(r.err), "") << r.err.substr(0, 2000);
  EXPECT_EQ(terminal_hazard(r.out), "") << r.out.substr(0, 2000);
  EXPECT_LT(r.err.size(), 64u * 1024) << "a huge value came back whole";
}

TEST(BadInputSweep, EveryFlagThatTakesAPathHostNameOrValue) {
  Folder home;
  for (const auto& flag : kFlags) {
    for (const auto& v : values()) {
      std::string args = flag.args;
      const auto at = args.find("VALUE");
      std::string cmd =
          std::string(PARALLEX_EXE) + " " + args.substr(0, at) + sh_quoted(v.text) + args.substr(at + 5);
      const Ran r = sh("cd " + home.path.string() + " && timeout 20 " + cmd,
                       {{"PARALLEX_HOME", home.path.string()}, {"XDG_RUNTIME_DIR", home.path.string()}});
      expect_sound(r, std::string(flag.args) + " with " + v.name);
    }
  }
}

// Files where a flag wants one: a FIFO (never waited on), a device (never
// read to the end), a folder, /proc's files; for every flag that reads a file.
TEST(BadInputSweep, SpecialFilesWhereAFileIsRead) {
  Folder home;
  const fs::path fifo = home.path / "fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& file : {fifo.string(), std::string("/dev/zero"), std::string("/dev/urandom"),
                                  home.path.string(), std::string("/proc/self/mem")}) {
    for (const char* args : {"policy show --profile ", "run --profile "}) {
      const Ran r = sh("cd " + home.path.string() + " && timeout 20 " + std::string(PARALLEX_EXE) + " " +
                           args + q(file) + " -- true",
                       {{"PARALLEX_HOME", home.path.string()}, {"XDG_RUNTIME_DIR", home.path.string()}});
      expect_sound(r, std::string(args) + file);
      EXPECT_NE(r.status, 0) << args << file;
      EXPECT_NE(r.err.find(file), std::string::npos) << "the file is named: " << r.err;
    }
  }
}

// A NUL byte cannot be in an argument, but it can be in every file and
// message a value comes from: a profile, agent.yaml, an MCP tool's
// arguments. Each is refused at load time, naming the file or argument and
// the value (escaped), never read as its first part.
TEST(BadInputSweep, ANulByteInAProfileAgentYamlOrMcpArgumentIsRefusedNamed) {
  Folder home;
  const fs::path profile = home.path / "nul.yaml";
  write(profile, "version: 1\nfilesystem:\n  read: [\"/tmp/a\\0b\"]\n");
  Ran r = sh("cd " + home.path.string() + " && timeout 20 " + std::string(PARALLEX_EXE) +
                 " policy show --profile " + q(profile.string()),
             {{"PARALLEX_HOME", home.path.string()}, {"XDG_RUNTIME_DIR", home.path.string()}});
  expect_sound(r, "profile");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(
      r.err.find(profile.string() + ":3: filesystem.read[0]: the value \"/tmp/a\\x00b\" holds a NUL byte"),
      std::string::npos)
      << r.err;

  const fs::path env_profile = home.path / "env.yaml";
  write(env_profile, "version: 1\nenvironment:\n  set: {A: \"x\\0y\"}\n");
  r = sh("cd " + home.path.string() + " && timeout 20 " + std::string(PARALLEX_EXE) +
             " policy show --profile " + q(env_profile.string()),
         {{"PARALLEX_HOME", home.path.string()}, {"XDG_RUNTIME_DIR", home.path.string()}});
  expect_sound(r, "environment.set");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("environment.set.A: the value holds a NUL byte"), std::string::npos) << r.err;

  // agent.yaml
  r = sh(std::string(PARALLEX_EXE) + " agent new nulbot --email nulbot@example.com >/dev/null 2>&1; timeout 20 " +
             PARALLEX_EXE +
             " agent show nulbot",
         {{"PARALLEX_HOME", home.path.string()}, {"XDG_RUNTIME_DIR", home.path.string()}});
  ASSERT_EQ(r.status, 0) << r.err;
  const fs::path agent_yaml = home.path / "agents" / "nulbot" / "agent.yaml";
  ASSERT_TRUE(fs::exists(agent_yaml));
  {
    std::string text;
    std::ifstream in(agent_yaml);
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
    write(agent_yaml, text + "grants:\n  - \"/tmp/a\\0b\"\n");
  }
  r = sh("timeout 20 " + std::string(PARALLEX_EXE) + " agent show nulbot",
         {{"PARALLEX_HOME", home.path.string()}, {"XDG_RUNTIME_DIR", home.path.string()}});
  expect_sound(r, "agent.yaml");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("holds a NUL byte"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/tmp/a\\x00b"), std::string::npos) << r.err;

  // An MCP tool's arguments.
  const std::string messages =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
      "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_snapshots","arguments":{"agent":"nul\u0000bot"}}})"
      "\n";
  write(home.path / "mcp.in", messages);
  r = sh("timeout 20 " + std::string(PARALLEX_EXE) + " mcp < " + q((home.path / "mcp.in").string()),
         {{"PARALLEX_HOME", home.path.string()}, {"XDG_RUNTIME_DIR", home.path.string()}});
  EXPECT_NE(r.status, 124);
  EXPECT_NE(r.out.find(R"(the argument \"agent\": the value \"nul\\x00bot\" holds a NUL byte)"),
            std::string::npos)
      << r.out;
}

}  // namespace

namespace {

// A run may write the folder it works in: a system folder, whose files the
// system or a login runs outside any seal, is refused like the home folder,
// naming the flag that insists; a project under /var/tmp is anyone's; a
// folder holding a login's start-up files is said.
TEST(RunFolder, SystemFoldersAreRefusedUnlessInsistedOn) {
  Folder home;
  const std::map<std::string, std::string> env{{"PARALLEX_HOME", home.path.string()},
                                               {"XDG_RUNTIME_DIR", home.path.string()},
                                               {"HOME", home.path.string()}};
  for (const char* folder : {"/etc", "/etc/cron.d", "/usr", "/usr/local/bin", "/var", "/var/lib", "/boot",
                             "/opt", "/srv", "/root", "/tmp", "/home"}) {
    // A folder holding the home is refused as such (a test's home is under /tmp).
    if (!fs::is_directory(folder) || px::is_within(home.path, folder)) continue;
    const Ran r = sh("timeout 20 " + std::string(PARALLEX_EXE) + " policy show --in " + folder, env);
    EXPECT_NE(r.status, 0) << folder;
    EXPECT_NE(r.err.find("the run would work in " + fs::canonical(folder).string()), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("--allow-system-folder"), std::string::npos) << r.err;
  }
  Ran r = sh("timeout 20 " + std::string(PARALLEX_EXE) + " policy show --allow-system-folder --in /etc", env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("the run works in /etc, a system folder"), std::string::npos) << r.err;

  // Below the user's own home (the user database's, /root for root, with
  // $HOME set elsewhere) is the user's own, not a system folder.
  const fs::path own = px::account_home() / ".cache" / ("px-own-" + home.path.filename().string());
  fs::create_directories(own);
  r = sh("timeout 20 " + std::string(PARALLEX_EXE) + " policy show --in " + own.string(), env);
  EXPECT_EQ(r.status, 0) << own << ": " << r.err;
  fs::remove_all(own);

  const fs::path project = fs::path("/var/tmp") / home.path.filename();
  fs::create_directories(project);
  write(project / ".bashrc", "echo hi\n");
  fs::create_directories(project / "cron.d");
  r = sh("timeout 20 " + std::string(PARALLEX_EXE) + " policy show --in " + project.string(), env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("holds .bashrc, cron.d, which a login or the system runs"), std::string::npos)
      << r.err;
  fs::remove_all(project);
}

// A grant a deny (or a read-only path) wins over is said, not dropped in
// silence; a writable grant of Parallex's own state (where the run keeps its
// temp dir, so it is denied entry by entry) is refused: the run could add a
// plugins/ folder there that the next parallex loads outside any seal.
TEST(RunFolder, AGrantADenyOverridesIsSaid) {
  Folder home, work;
  const std::map<std::string, std::string> env{{"PARALLEX_HOME", home.path.string()},
                                               {"XDG_RUNTIME_DIR", home.path.string()}};
  Ran r = sh("cd " + work.path.string() + " && timeout 20 " + std::string(PARALLEX_EXE) +
                 " policy show --grant /etc/shadow",
             env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("--grant /etc/shadow: /etc/shadow stays unreadable in the run"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("wins over a grant"), std::string::npos) << r.err;

  fs::create_directories(home.path / "plugins");
  for (const fs::path& granted : {home.path, home.path / "plugins"}) {
    r = sh("cd " + work.path.string() + " && timeout 20 " + std::string(PARALLEX_EXE) + " run --grant " +
               granted.string() + ":rw -- /bin/sh -c 'mkdir -p " + (home.path / "plugins/evil").string() + "'",
           env);
    EXPECT_EQ(r.status, 125) << r.err;
    EXPECT_NE(r.err.find("writable, and it"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("Parallex's own state " + home.path.string()), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(home.path / "plugins/evil")) << "the run planted a plugin folder";
  }
}

}  // namespace
