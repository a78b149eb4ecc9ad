// Escape tests (docs/escape-list.md): each test runs a small hostile probe
// inside a real seal (through the Backend seam, as every run) and
// asserts the KIND of denial. ALLOW tests guard against false positives.
//
// Run as root, the suite also re-runs itself in rows (below, "The suite's
// rows"): as an unprivileged user with and without a delegated cgroup,
// creating `pxtest` if needed, and on a machine without a writable pids
// controller; run as a user, it is the unprivileged pass. Every skip says why.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "backend/seal/audit_log.hpp"
#include "backend/seal/capabilities.hpp"
#include "backend/seal/launch.hpp"
#include "backend/seal/seccomp.hpp"
#include "expectations_loader.hpp"
#include "policy/compose.hpp"
#include "policy/profile.hpp"
#include "test_paths.hpp"
#include "unprivileged_user.hpp"

namespace px::seal {
namespace {

namespace fs = std::filesystem;
using Tokens = std::set<std::string>;

// The seal's probes (host/src/probes/catalog.hpp) as a program of their own,
// `px-probe NAME ARG...`, alone in its folder, which each seal grants.
const fs::path kProbes = PX_PROBE_DIR;
const fs::path kProbe = kProbes / "px-probe";

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string shell_out(const std::string& cmd) {
  std::string out;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (!f) return out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f)) out += buf;
  ::pclose(f);
  return out;
}

struct Outcome {
  std::string output;  // the probe's stdout
  std::string token;   // after "RESULT "
  int exit_code = -1;
  std::string error;  // the seal's own failure, if any
  std::string notes;  // what the seal left out or could not enforce
  Refusals refusals;  // what the seal recorded refusing
};

// Runs `argv` inside the seal of `policy`, capturing stdout through a pipe
// (launch passes fds 0-2 through; anything else is closed at exec).
Outcome run_sealed(const policy::Policy& policy, std::vector<std::string> argv, EnvMap env = {}) {
  Outcome out;
  if (env.empty())
    env = {{"PATH", "/usr/bin:/bin"}, {"HOME", policy.run_home().string()}, {"TMPDIR", "/tmp"}};
  // Through the Backend seam, as every run goes.
  backend::LaunchRequest request;
  request.policy = &policy;
  request.executable = argv.front();
  request.argv = argv;
  request.env = env;
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return out;
  const int saved = ::dup(STDOUT_FILENO);
  ::fflush(stdout);
  ::dup2(pipefd[1], STDOUT_FILENO);
  auto result = backend::linux_backend().launch(request);
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(pipefd[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0) out.output.append(buf, static_cast<std::size_t>(n));
  ::close(pipefd[0]);
  if (!result) {
    out.error = result.error().message;
    return out;
  }
  out.exit_code = result.value().exit_code;
  for (const auto& note : result.value().notes) out.notes += note.text + "; ";
  out.refusals = result.value().refusals;
  if (const auto at = out.output.find("RESULT "); at != std::string::npos) {
    std::istringstream line(out.output.substr(at + 7));
    line >> out.token;
  }
  return out;
}

// Test layouts live under the user's home, not /tmp: inside the seal /tmp is
// the run's private temp dir, so a host path under /tmp would not show as is.
fs::path test_base() {
  const char* home = std::getenv("HOME");
  const fs::path base = fs::path(home && *home ? home : "/tmp") / ".cache/parallex-escape-tests";
  fs::create_directories(base);
  return base;
}

// The seal of an agent run over a fresh layout: a git repository as the run
// folder, an agent home holding canary secrets, a user home with its own.
// The kernel audit log is machine-wide: while LandlockRefusalsFromTheAuditLog
// has it on, every other run's refusal record also lists Landlock's refusals,
// and the tests that count a run's refusals exactly would fail beside it (ctest
// runs tests side by side, as root and as the unprivileged user at once). Those
// tests hold this lock shared; the audit test holds it alone.
class KernelAuditLock {
 public:
  explicit KernelAuditLock(int how) {
    const char* path = "/tmp/parallex-tests-kernel-audit.lock";
    // Opened without O_CREAT first: in a sticky /tmp, protected_regular refuses
    // O_CREAT on a file another user made (root and pxtest share it).
    fd_ = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) fd_ = ::open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fd_ = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd_ >= 0) ::flock(fd_, how);
  }
  ~KernelAuditLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  KernelAuditLock(const KernelAuditLock&) = delete;
  KernelAuditLock& operator=(const KernelAuditLock&) = delete;

 private:
  int fd_ = -1;
};

class Escape : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!holds_kernel_audit()) audit_lock_.emplace(LOCK_SH);
    std::string templ = (test_base() / "px-escape-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    base_ = templ;
    ws_ = base_ / "ws";
    agent_ = base_ / "agent";
    user_ = base_ / "user";
    temp_ = base_ / "runtmp";
    for (const auto& d : {ws_, agent_, user_, temp_}) fs::create_directories(d);
    for (const char* s : {".ssh/id_ed25519", ".aws/credentials", ".netrc", ".git-credentials",
                          ".config/gh/hosts.yml", ".docker/config.json"}) {
      write_text(agent_ / s, "SECRET-CANARY\n");
      write_text(user_ / s, "SECRET-CANARY\n");
    }
    write_text(agent_ / ".bashrc", "# rc\n");
    write_text(ws_ / "README", "hello\n");
    const std::string git =
        "git -c user.name=px -c user.email=px@example.com -c init.defaultBranch=main -C " + ws_.string() +
        " ";
    ASSERT_EQ(std::system((git + "init -q && " + git + "add README && " + git + "commit -qm init").c_str()),
              0);

    policy::ComposeInputs in;
    in.user_home = user_;
    in.run_folder = ws_;
    in.temp_dir = temp_;
    auto profile = policy::load_profile("default");
    ASSERT_TRUE(profile) << profile.error().message;
    in.profiles.push_back(profile.value());
    policy::AgentInputs agent;
    agent.name = "escape";
    agent.home = agent_;
    in.agent = agent;
    in.grants.push_back({kProbes, policy::Access::read, "--grant"});
    // What the Claude Code plugin declares (tests/plugins checks the real
    // plugins declare these): read-only whatever the run's harness.
    in.project_files.push_back(
        {"claude-code", "Claude Code", {{".claude/settings.json", "hooks"}, {".mcp.json", "MCP servers"}}});
    auto p = policy::compose(in);
    ASSERT_TRUE(p) << p.error().message;
    policy_.emplace(std::move(p).value());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }

  Outcome probe(const std::string& name, std::vector<std::string> args = {}) {
    std::vector<std::string> argv{kProbe.string(), name};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_sealed(*policy_, argv);
  }

  // The audit test takes the lock alone instead (KernelAuditLock).
  static bool holds_kernel_audit() {
    return std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) ==
           "LandlockRefusalsFromTheAuditLog";
  }

  fs::path base_, ws_, agent_, user_, temp_;
  std::optional<policy::Policy> policy_;
  std::optional<KernelAuditLock> audit_lock_;
};

#define EXPECT_DENIED(outcome, tokens)                                                   \
  do {                                                                                   \
    const Outcome& o_ = (outcome);                                                       \
    const Tokens t_ = tokens;                                                            \
    EXPECT_TRUE(o_.error.empty()) << "the seal failed: " << o_.error;                    \
    EXPECT_TRUE(t_.count(o_.token)) << "got '" << o_.token << "' (exit " << o_.exit_code \
                                    << "), output: " << o_.output;                       \
  } while (0)

// ---- Filesystem -----------------------------------------------------------

TEST_F(Escape, ReadHiddenSecretsInAllowedTrees) {  // (a)1
  for (const char* s : {".ssh/id_ed25519", ".aws/credentials", ".netrc", ".git-credentials",
                        ".config/gh/hosts.yml", ".docker/config.json"}) {
    SCOPED_TRACE(s);
    EXPECT_DENIED(probe("read", {(agent_ / s).string()}), (Tokens{"EMPTY", "ENOENT", "EACCES"}));
    EXPECT_DENIED(probe("read", {(user_ / s).string()}), (Tokens{"ENOENT", "EACCES"}));
  }
}

TEST_F(Escape, HiddenDirIsNotAWritableSink) {  // (a)2
  EXPECT_DENIED(probe("write", {(agent_ / ".ssh/new").string()}), (Tokens{"EROFS", "EACCES"}));
  EXPECT_DENIED(probe("write", {(agent_ / ".netrc").string()}), (Tokens{"EROFS", "EACCES"}));
}

TEST_F(Escape, WriteOutsideTheAllowlist) {  // (a)3
  EXPECT_DENIED(probe("write", {(user_ / "x").string()}), (Tokens{"EROFS", "EACCES", "ENOENT"}));
  EXPECT_DENIED(probe("write", {"/etc/x"}), (Tokens{"EROFS", "EACCES"}));
  EXPECT_DENIED(probe("write", {"/usr/local/bin/x"}), (Tokens{"EROFS", "EACCES"}));
  EXPECT_DENIED(probe("write", {"/x"}), (Tokens{"EROFS", "EACCES"}));
}

TEST_F(Escape, AllowWriteInRunFolderAndPrivateTmp) {  // (a)3 ALLOW
  EXPECT_EQ(probe("write", {(ws_ / "x").string()}).token, "OPEN");
  EXPECT_TRUE(fs::exists(ws_ / "x"));
  const std::string name = "px-private-" + std::to_string(::getpid());
  EXPECT_EQ(probe("write", {"/tmp/" + name}).token, "OPEN");
  // /tmp inside is a tmpfs of the run's own: neither the host's /tmp nor the
  // run's temp dir on the host sees it.
  EXPECT_FALSE(fs::exists(temp_ / name)) << "the run's /tmp is its own tmpfs";
  EXPECT_FALSE(fs::exists(fs::path("/tmp") / name)) << "the host's /tmp must not see it";
  const Outcome both =
      run_sealed(*policy_, {"/bin/sh", "-c", "echo x > /tmp/a && cat /var/tmp/a && echo RESULT OK"});
  EXPECT_EQ(both.token, "OK") << "/tmp and /var/tmp are one temp dir: " << both.output << both.error;
  EXPECT_EQ(probe("write", {(agent_ / "notes.txt").string()}).token, "OPEN");
}

TEST_F(Escape, SymlinkOut) {  // (a)4
  EXPECT_DENIED(probe("symlink-read", {(user_ / ".ssh").string(), (ws_ / "k").string(), "id_ed25519"}),
                (Tokens{"ENOENT", "EACCES"}));
  EXPECT_DENIED(probe("symlink-read", {(agent_ / ".ssh").string(), (ws_ / "k2").string(), "id_ed25519"}),
                (Tokens{"ENOENT", "EACCES", "EMPTY"}));
  // ln -s / r && echo x > r/etc/hosts
  ASSERT_EQ(::symlink("/", (ws_ / "r").c_str()), 0);
  EXPECT_DENIED(probe("write", {(ws_ / "r/etc/hosts").string()}), (Tokens{"EROFS", "EACCES"}));
}

TEST_F(Escape, HardlinkASecretIn) {  // (a)6
  EXPECT_DENIED(probe("link", {(agent_ / ".aws/credentials").string(), (ws_ / "c").string()}),
                (Tokens{"EXDEV", "EACCES", "ENOENT", "EPERM"}));
  EXPECT_DENIED(probe("link", {(agent_ / ".netrc").string(), (ws_ / "n").string()}),
                (Tokens{"EXDEV", "EACCES", "EPERM"}));
  EXPECT_DENIED(probe("link", {"/etc/passwd", (ws_ / "p").string()}), (Tokens{"EXDEV", "EACCES", "EPERM"}));
}

TEST_F(Escape, ReadOnlyCarveIns) {  // (a)7
  const fs::path git = ws_ / ".git";
  EXPECT_DENIED(probe("write", {(git / "config").string()}), (Tokens{"EROFS", "EACCES"}));
  EXPECT_DENIED(probe("write", {(git / "hooks/pre-commit").string()}), (Tokens{"EROFS", "EACCES"}));
  EXPECT_DENIED(probe("unlink", {(git / "config").string()}), (Tokens{"EROFS", "EBUSY", "EACCES"}));
  EXPECT_DENIED(probe("rename", {(ws_ / "README").string(), (git / "config").string()}),
                (Tokens{"EROFS", "EBUSY", "EACCES", "EXDEV"}));
  EXPECT_DENIED(probe("write", {(agent_ / ".bashrc").string()}), (Tokens{"EROFS", "EACCES"}));
}

TEST_F(Escape, RenameAroundTheProtectedGitDir) {  // (a)8
  EXPECT_DENIED(probe("rename", {(ws_ / ".git").string(), (ws_ / ".g").string()}), (Tokens{"EBUSY"}));
  EXPECT_DENIED(probe("rename", {(ws_ / ".git/hooks").string(), (ws_ / ".git/h2").string()}),
                (Tokens{"EBUSY", "EROFS"}));
  EXPECT_TRUE(fs::exists(ws_ / ".git/HEAD"));
}

// Files other programs run later (docs/escape-list.md 41-43): read-only in
// every run whatever its harness, and their parent folders rename-proof.
TEST_F(Escape, FilesOtherProgramsRunLaterAreReadOnly) {
  write_text(ws_ / ".vscode/tasks.json", "{}\n");
  write_text(ws_ / ".claude/settings.json", "{}\n");
  write_text(ws_ / ".mcp.json", "{}\n");
  write_text(ws_ / ".envrc", "export A=1\n");
  for (const char* path :
       {".vscode/tasks.json", ".vscode/settings.json", ".claude/settings.json", ".mcp.json", ".envrc"}) {
    SCOPED_TRACE(path);
    EXPECT_DENIED(probe("write", {(ws_ / path).string()}), (Tokens{"EROFS", "EACCES"}));
  }
  // Rename or replace the file, or the folder above it.
  EXPECT_DENIED(probe("unlink", {(ws_ / ".envrc").string()}), (Tokens{"EBUSY", "EROFS"}));
  EXPECT_DENIED(probe("rename", {(ws_ / "README").string(), (ws_ / ".mcp.json").string()}),
                (Tokens{"EBUSY", "EROFS"}));
  EXPECT_DENIED(probe("rename", {(ws_ / ".claude").string(), (ws_ / ".c2").string()}), (Tokens{"EBUSY"}));
  EXPECT_DENIED(probe("rename", {(ws_ / ".vscode").string(), (ws_ / ".v2").string()}), (Tokens{"EBUSY"}));
  EXPECT_EQ(read_text(ws_ / ".claude/settings.json"), "{}\n");
  // ALLOW: the harness's own writable state beside them, and ordinary files.
  EXPECT_EQ(probe("write", {(ws_ / ".claude/worktrees/x").string()}).token, "OPEN");
  EXPECT_EQ(probe("write", {(ws_ / "CLAUDE.md").string()}).token, "OPEN");
}

// A protected path that is a link leading out of the run folder: protected as
// it is (the link cannot be replaced, and what it names is not written
// through it), said once; a run folder's .git that is such a link still
// refuses the run (git would use a repository outside it).
TEST_F(Escape, AProtectedPathLinkingOutOfTheRunFolderIsProtectedAsItIs) {
  const fs::path decoy = base_ / "decoy-envrc";
  write_text(decoy, "untouched\n");
  fs::create_symlink(decoy, ws_ / ".envrc");
  const Outcome o = probe("write", {(ws_ / ".envrc").string()});
  EXPECT_TRUE(o.error.empty()) << o.error;
  EXPECT_TRUE(o.token == "ENOENT" || o.token == "EROFS" || o.token == "EACCES") << o.output;
  EXPECT_NE(o.notes.find("protected as they are, links leading out of the run folder: .envrc (a link to " +
                         decoy.string() + ")"),
            std::string::npos)
      << o.notes;
  EXPECT_DENIED(probe("unlink", {(ws_ / ".envrc").string()}), (Tokens{"EBUSY"}));
  EXPECT_DENIED(probe("rename", {(ws_ / ".envrc").string(), (ws_ / "moved").string()}), (Tokens{"EBUSY"}));
  EXPECT_EQ(read_text(decoy), "untouched\n");
  EXPECT_EQ(fs::read_symlink(ws_ / ".envrc"), decoy);
  // One that stays inside: what it names is protected.
  fs::remove(ws_ / ".envrc");
  write_text(ws_ / "envrc.real", "inside\n");
  fs::create_symlink("envrc.real", ws_ / ".envrc");
  EXPECT_DENIED(probe("write", {(ws_ / ".envrc").string()}), (Tokens{"EROFS"}));
  EXPECT_EQ(read_text(ws_ / "envrc.real"), "inside\n");
  // .git as a link leading out: the run does not start.
  const fs::path git_elsewhere = base_ / "elsewhere.git";
  fs::rename(ws_ / ".git", git_elsewhere);
  fs::create_symlink(git_elsewhere, ws_ / ".git");
  const Outcome git = probe("write", {(ws_ / ".git/config").string()});
  EXPECT_NE(git.error.find((ws_ / ".git").string() + " is a symbolic link to " + git_elsewhere.string()),
            std::string::npos)
      << git.error;
  EXPECT_EQ(git.token, "") << "the command must not have run";
}

// Set-up races (issue 16, item 2): a process outside the run flips .git
// between the real folder and a link to a decoy outside while 200 sealed runs
// start, each writing .git/hooks/pre-commit and appending to .git/config.
// Every run either refuses to start or runs with the real ones protected;
// neither they nor the decoy change.
struct RaceResult {
  long flips = 0;
  int started = 0, refused = 0, wrote = 0;
  int wrote_folder_found = 0;  // runs that wrote though their seal found the folder, not the link
};

// A racer outside the run swaps `real` (a folder) with a link to `decoy`
// (RENAME_EXCHANGE with a link made beside it) while `runs` sealed runs start,
// each running `script`, which prints "RESULT N" (N: writes that succeeded).
// Puts the real folder back at the end.
RaceResult race_folder_against_a_link(const policy::Policy& policy, const fs::path& real,
                                      const fs::path& decoy, const std::string& script, int runs) {
  const fs::path flip = real.parent_path() / (real.filename().string() + "-flip");
  fs::create_symlink(decoy, flip);
  std::atomic<bool> stop{false};
  RaceResult r;
  std::atomic<long> flips{0};
  std::thread racer([&] {
    while (!stop)
      if (::syscall(SYS_renameat2, AT_FDCWD, real.c_str(), AT_FDCWD, flip.c_str(), 2 /*RENAME_EXCHANGE*/) ==
          0)
        ++flips;
  });
  for (int i = 0; i < runs; ++i) {
    const Outcome o = run_sealed(policy, {"/bin/sh", "-c", script});
    if (!o.error.empty()) {
      ++r.refused;
    } else {
      ++r.started;
      if (o.token != "0") ++r.wrote;
      if (o.token != "0" && o.notes.find("links leading out of the run folder: " +
                                         real.filename().string()) == std::string::npos)
        ++r.wrote_folder_found;
    }
  }
  stop = true;
  racer.join();
  struct stat st {};
  if (::lstat(real.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    ::syscall(SYS_renameat2, AT_FDCWD, real.c_str(), AT_FDCWD, flip.c_str(), 2);
  fs::remove(flip);
  r.flips = flips.load();
  std::printf(
      "[  RACE    ] %s: %ld flips; %d runs started, %d refused to start, %d wrote what the racer swapped in "
      "after their seal found the link\n",
      real.filename().c_str(), r.flips, r.started, r.refused, r.wrote - r.wrote_folder_found);
  return r;
}

TEST_F(Escape, RacingGitBetweenAFolderAndALinkNeverUnprotectsIt) {
  const fs::path git = ws_ / ".git";
  const fs::path decoy = base_ / "decoy-git";
  fs::create_directories(decoy / "hooks");
  write_text(decoy / "config", "[core]\n\tdecoy = true\n");
  const std::string config_before = read_text(git / "config");
  const RaceResult r = race_folder_against_a_link(
      *policy_, git, decoy,
      "n=0; echo 'id' >> .git/hooks/pre-commit && n=$((n+1)); "
      "printf '[core]\\n\\tfsmonitor = id\\n' >> .git/config && n=$((n+1)); echo RESULT $n",
      200);
  EXPECT_GT(r.flips, 100);
  EXPECT_GT(r.started, 0) << "no run started at all: the test proves nothing";
  EXPECT_EQ(r.wrote, 0) << "a run wrote a protected file";
  EXPECT_FALSE(fs::exists(git / "hooks/pre-commit"));
  EXPECT_EQ(read_text(git / "config"), config_before);
  EXPECT_FALSE(fs::exists(decoy / "hooks/pre-commit"));
  EXPECT_EQ(read_text(decoy / "config"), "[core]\n\tdecoy = true\n");
}

// The same race on a file another program runs later: `.claude` (holding
// Claude Code's settings.json, protected in every run) flipped with a link to
// an outside decoy while 100 runs start and append a hook to it. A protected
// name is protected as the seal found it: a run that found the folder never
// writes it; one that found the link (the seal says so) protects the link as
// it is, and the folder the racer swaps in afterwards is not the one it
// found (for .git a link out refuses instead: the test above). The decoy,
// outside every grant, never changes.
TEST_F(Escape, RacingAProtectedFoldersParentAgainstALinkNeverUnprotectsIt) {
  const fs::path claude = ws_ / ".claude";
  const fs::path decoy = base_ / "decoy-claude";
  write_text(claude / "settings.json", "{}\n");
  write_text(decoy / "settings.json", "{\"decoy\": true}\n");
  const RaceResult r = race_folder_against_a_link(
      *policy_, claude, decoy,
      "n=0; echo '{\"hooks\": {}}' >> .claude/settings.json && n=$((n+1)); echo RESULT $n", 100);
  EXPECT_GT(r.flips, 50);
  EXPECT_GT(r.started, 0) << "no run started at all: the test proves nothing";
  EXPECT_EQ(r.wrote_folder_found, 0) << "a run that found the folder wrote a protected file";
  EXPECT_EQ(read_text(decoy / "settings.json"), "{\"decoy\": true}\n");
}

TEST_F(Escape, AllowGitCommitInRunFolder) {  // (a)7 ALLOW
  const Outcome o =
      run_sealed(*policy_, {"/usr/bin/git", "-c", "user.name=px", "-c", "user.email=px@example.com", "commit",
                            "-q", "--allow-empty", "-m", "sealed"});
  EXPECT_EQ(o.exit_code, 0) << o.error << o.output;
  EXPECT_NE(shell_out("git -C " + ws_.string() + " log --oneline").find("sealed"), std::string::npos);
}

TEST_F(Escape, OtherProcessesRootAndEnviron) {  // (a)11, (a)16
  EXPECT_DENIED(probe("read", {"/proc/1/environ"}), (Tokens{"EACCES", "EPERM"}));
  EXPECT_DENIED(probe("read", {"/proc/1/root/etc/hostname"}), (Tokens{"EACCES", "EPERM"}));
  EXPECT_DENIED(probe("read", {"/proc/1/cwd/README"}), (Tokens{"EACCES", "EPERM", "ENOENT"}));
}

TEST_F(Escape, OnlyStandardFdsAreInherited) {              // (a)12
  const int leaked = ::open("/", O_RDONLY | O_DIRECTORY);  // no O_CLOEXEC on purpose
  ASSERT_GE(leaked, 0);
  const Outcome o = probe("fds");
  ::close(leaked);
  EXPECT_EQ(o.token, "NONE") << o.output << " exit " << o.exit_code << " " << o.error;
}

// The seal's init keeps nothing of the supervisor's: a descriptor the
// supervisor held (the run's cgroup directory, its sockets, a file it
// opened) is closed in the init as soon as it starts.
TEST_F(Escape, TheSealsInitKeepsNoneOfTheSupervisorsDescriptors) {
  const fs::path marker = base_ / "supervisor-only";
  write_text(marker, "x");
  const int held = ::open(marker.c_str(), O_RDONLY);  // inheritable on purpose
  ASSERT_GE(held, 0);
  std::thread run([&] { run_sealed(*policy_, {"/bin/sleep", "3"}); });
  // The init is the grandchild of this process whose children include the
  // command. Its descriptors are read once the command runs (its set-up holds
  // the view's own folders open until then; a slow build, ASan's, is caught
  // there otherwise), and the last reading before the command ends is kept.
  std::string init_fds;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2500);
  while (std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    for (const auto& task : fs::directory_iterator("/proc/self/task")) {
      std::istringstream outer(read_text(task.path() / "children"));
      for (pid_t o; outer >> o;) {
        std::istringstream inits(
            read_text("/proc/" + std::to_string(o) + "/task/" + std::to_string(o) + "/children"));
        for (pid_t init; inits >> init;) {
          const std::string command =
              read_text("/proc/" + std::to_string(init) + "/task/" + std::to_string(init) + "/children");
          if (command.find_first_of("0123456789") == std::string::npos) continue;  // not started yet
          std::string fds;
          std::error_code ec;
          for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(init) + "/fd", ec))
            fds += fd.path().filename().string() + " -> " + fs::read_symlink(fd.path(), ec).string() + "\n";
          if (!fds.empty()) init_fds = fds;
        }
      }
    }
  }
  run.join();
  ::close(held);
  ASSERT_FALSE(init_fds.empty()) << "the seal's init was not found";
  EXPECT_EQ(init_fds.find(marker.string()), std::string::npos) << init_fds;
  EXPECT_EQ(init_fds.find("cgroup"), std::string::npos) << init_fds;
}

// /proc/self/mountinfo inside names no host path for the run's temp dir.
TEST_F(Escape, MountinfoShowsNoHostPathOfTheTempDir) {
  const Outcome o = run_sealed(*policy_, {"/bin/cat", "/proc/self/mountinfo"});
  ASSERT_EQ(o.exit_code, 0) << o.error;
  EXPECT_EQ(o.output.find(temp_.string()), std::string::npos) << o.output;
  std::istringstream lines(o.output);
  int temp_mounts = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" /tmp ") == std::string::npos && line.find(" /var/tmp ") == std::string::npos) continue;
    ++temp_mounts;
    EXPECT_NE(line.find(" / /"), std::string::npos)
        << "the temp dir is the root of a filesystem of its own: " << line;
    EXPECT_NE(line.find(" - tmpfs "), std::string::npos) << line;
  }
  EXPECT_EQ(temp_mounts, 2) << o.output;
}

TEST_F(Escape, UndoMountsFromANewNamespace) {  // (a)13
  EXPECT_DENIED(probe("unshare-mount-then-umount", {(agent_ / ".ssh").string()}), (Tokens{"EPERM"}));
  for (const char* call : {"umount", "mount", "open_tree", "fsopen", "setns", "unshare-user"}) {
    SCOPED_TRACE(call);
    EXPECT_DENIED(probe(call), (Tokens{"EPERM"}));
  }
}

// ---- Credentials / environment --------------------------------------------

TEST_F(Escape, EnvironmentCanaries) {  // (a)15
  std::map<std::string, std::string> host = {{"PATH", "/usr/bin:/bin"},
                                             {"OPENAI_API_KEY", "c1"},
                                             {"HF_TOKEN", "c2"},
                                             {"MYSQL_PWD", "c3"},
                                             {"npm_config__authToken", "c4"},
                                             {"GOOGLE_APPLICATION_CREDENTIALS", "c5"},
                                             {"HTTPS_PROXY", "http://u:p@corp"},
                                             {"GIT_CONFIG_PARAMETERS", "c6"},
                                             {"DBUS_SESSION_BUS_ADDRESS", "c7"},
                                             {"AWS_SECRET_ACCESS_KEY", "c8"},
                                             {"GITHUB_TOKEN", "c9"},
                                             {"SSH_AUTH_SOCK", "/run/x"},
                                             {"LC_TOKEN", "c10"},
                                             {"LC_SECRET_KEY", "c11"},
                                             {"LANG", "C.UTF-8"},
                                             {"LC_ALL", "C.UTF-8"}};
  const auto env = policy_->environment().apply(host);
  const Outcome o = run_sealed(*policy_, {"/usr/bin/env"}, env);
  EXPECT_EQ(o.exit_code, 0) << o.error;
  for (const auto& [name, value] : host) {
    if (name == "PATH" || name == "LANG" || name == "LC_ALL") continue;
    EXPECT_EQ(o.output.find(name + "="), std::string::npos) << name << " reached the command";
  }
  EXPECT_NE(o.output.find("LANG=C.UTF-8"), std::string::npos) << "kept variables must pass: " << o.output;
  EXPECT_NE(o.output.find("LC_ALL=C.UTF-8"), std::string::npos) << "the locale variables pass: " << o.output;
}

TEST_F(Escape, KernelKeyring) {  // (a)19
  EXPECT_DENIED(probe("keyctl"), (Tokens{"EPERM"}));
  EXPECT_DENIED(probe("add_key"), (Tokens{"EPERM"}));
}

// ---- Processes, signals, ptrace, seccomp ----------------------------------

TEST_F(Escape, PtraceOut) {  // (a)21
  EXPECT_DENIED(probe("ptrace", {"1"}), (Tokens{"EPERM"}));
  EXPECT_DENIED(probe("mem", {"1"}), (Tokens{"EACCES", "EPERM"}));
}

TEST_F(Escape, SignalsOut) {  // (a)22
  EXPECT_DENIED(probe("signal", {"1"}), (Tokens{"EPERM"}));
  EXPECT_DENIED(probe("signal", {std::to_string(::getpid())}), (Tokens{"ESRCH", "EPERM"}));
}

TEST_F(Escape, TerminalInjection) {  // (a)23
  EXPECT_DENIED(probe("tiocsti"), (Tokens{"EPERM"}));
  EXPECT_DENIED(probe("tiocsti-high"), (Tokens{"EPERM"}));
  EXPECT_DENIED(probe("tioclinux"), (Tokens{"EPERM"}));
}

// What the seal refused reaches the supervisor (issue 3, item 6): each refused
// call, named with its argument where that is the point, and the process.
bool recorded(const Refusals& r, const std::string& call, const std::string& process) {
  return std::any_of(r.items.begin(), r.items.end(), [&](const Refusal& x) {
    return x.call == call && x.process == process && x.count >= 1;
  });
}

std::string listing(const Refusals& r) {
  return "recorded: [" + r.summary() +
         "], not collected: " + (r.not_collected.empty() ? std::string("-") : r.not_collected.front());
}

TEST_F(Escape, RefusedCallsAreRecorded) {
  const Outcome ptrace = probe("keyctl");
  EXPECT_DENIED(ptrace, (Tokens{"EPERM"}));
  ASSERT_EQ(ptrace.refusals.collected_from, std::vector<std::string>{"seccomp (user notification)"})
      << listing(ptrace.refusals);
  EXPECT_TRUE(recorded(ptrace.refusals, "keyctl", "px-probe")) << listing(ptrace.refusals);

  const Outcome sti = probe("tiocsti-high");
  EXPECT_DENIED(sti, (Tokens{"EPERM"}));
  EXPECT_TRUE(recorded(sti.refusals, "ioctl TIOCSTI", "px-probe")) << listing(sti.refusals);

  const Outcome userns = probe("unshare-user");
  EXPECT_DENIED(userns, (Tokens{"EPERM"}));
  EXPECT_TRUE(recorded(userns.refusals, "unshare CLONE_NEWUSER", "px-probe")) << listing(userns.refusals);

  // Landlock's refusals are not collected, and the record says so.
  ASSERT_FALSE(ptrace.refusals.not_collected.empty());
  EXPECT_NE(ptrace.refusals.not_collected.back().find("Landlock"), std::string::npos);
}

// Landlock's refusals come from the kernel audit log. Root switches audit on
// for this test when it is off, and back off after.
TEST_F(Escape, LandlockRefusalsFromTheAuditLog) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to switch the kernel audit on";
  const KernelAuditLock alone(LOCK_EX);
  const audit::KernelAudit before = audit::kernel_audit();
  if (before == audit::KernelAudit::unknown) GTEST_SKIP() << "the kernel audit status cannot be read here";
  if (before == audit::KernelAudit::off) {
    ASSERT_TRUE(audit::set_kernel_audit(true));
  }
  // The run folder's parent is part of the view's skeleton: there, not listable.
  const Outcome o = run_sealed(*policy_, {"/bin/ls", base_.string()});
  if (before == audit::KernelAudit::off) {
    EXPECT_TRUE(audit::set_kernel_audit(false));
  }
  EXPECT_NE(o.exit_code, 0) << o.output;
  ASSERT_TRUE(std::count(o.refusals.collected_from.begin(), o.refusals.collected_from.end(),
                         "Landlock (kernel audit log)"))
      << listing(o.refusals);
  const bool found = std::any_of(o.refusals.items.begin(), o.refusals.items.end(), [&](const Refusal& r) {
    return r.source == "landlock" && r.call == "fs.read_dir " + base_.string() && r.process == "ls";
  });
  EXPECT_TRUE(found) << listing(o.refusals);
}

TEST(LandlockLog, KeepsOnlyTheRunsDomain) {
  auto rec = [](int type, const std::string& text) {
    auto r = audit::parse_record(type, text);
    EXPECT_TRUE(r) << text;
    return r.value_or(audit::Record{});
  };
  // Quoted and hex-encoded (the kernel's form for strings with spaces) values.
  const auto hex = rec(
      1423,
      "audit(1.2:7): domain=abc blockers=fs.read_file path=2F746D702F6120622F7365637265 dev=\"vda\" ino=9");
  EXPECT_EQ(hex.serial, 7u);
  EXPECT_EQ(hex.fields.at("path"), "/tmp/a b/secre");
  EXPECT_FALSE(audit::parse_record(1423, "garbage"));
  EXPECT_FALSE(audit::parse_record(1423, "audit(1.2:x): domain=1"));

  const auto log_of = [&](pid_t creator) {
    auto log = audit::LandlockLog();
    log.set_domain_creator(creator);
    log.take(rec(1423, "audit(1.2:7): domain=abc blockers=fs.read_file path=\"/etc/x\" dev=\"vda\" ino=9"));
    log.take(rec(
        1424, "audit(1.2:7): domain=abc status=allocated mode=enforcing pid=42 uid=0 exe=\"/p\" comm=\"p\""));
    log.take(rec(1300, "audit(1.2:7): arch=c000003e syscall=257 pid=43 comm=\"cat\" exe=\"/usr/bin/cat\""));
    log.take(rec(1423, "audit(1.3:8): domain=def blockers=fs.write_file path=\"/other\" dev=\"vda\" ino=9"));
    log.take(rec(
        1424, "audit(1.3:8): domain=def status=allocated mode=enforcing pid=99 uid=0 exe=\"/q\" comm=\"q\""));
    log.take(rec(1424, "audit(1.4:9): domain=abc status=deallocated denials=1"));
    Refusals out;
    log.finish(out);
    return out;
  };
  const Refusals ours = log_of(42);
  ASSERT_EQ(ours.items.size(), 1u) << ours.summary();
  EXPECT_EQ(ours.items[0].call, "fs.read_file /etc/x");
  EXPECT_EQ(ours.items[0].process, "cat");
  EXPECT_EQ(log_of(7).items.size(), 0u) << "another run's domain was attributed";
}

TEST_F(Escape, AllowOrdinaryWorkRecordsNoRefusal) {
  const Outcome o = run_sealed(*policy_, {"/bin/sh", "-c", "ls /usr/bin >/dev/null && echo RESULT OK"});
  EXPECT_EQ(o.token, "OK") << o.output << o.error;
  EXPECT_EQ(o.refusals.total(), 0u) << listing(o.refusals);
}

// A sandbox around parallex may already hold the one seccomp listener a
// process may have: the same refusals then come from the kernel, and the
// record says they were not collected.
TEST(SeccompListener, TakenListenerFallsBackToKernelAnswers) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sock_filter allow_all[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    sock_fprog outer{1, allow_all};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(10);
    const long held =
        ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &outer);
    if (held < 0) ::_exit(11);
    auto program = seccomp::prepare();
    if (!program || !program.value().notifies) ::_exit(12);
    auto loaded = seccomp::load(program.value());
    if (!loaded) ::_exit(13);
    if (loaded.value().listener) ::_exit(14);
    if (loaded.value().not_collected.find("EBUSY") == std::string::npos) ::_exit(15);
    // Refused by the kernel's own answer, without waiting on a listener.
    if (::syscall(SYS_ptrace, PTRACE_ATTACH, 1, 0, 0) != -1 || errno != EPERM) ::_exit(16);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "step " << WEXITSTATUS(status)
                                    << " failed (10 nnp, 11 outer listener, 12 prepare, 13 load, 14 listener "
                                       "given, 15 no EBUSY note, 16 ptrace not EPERM)";
}

// A command prepared to trace its own processes that ends up without a
// Landlock domain (a weaker seal) gets ptrace refused by a second filter;
// every other call still works.
TEST(SeccompPtrace, RefusedWithoutALandlockDomain) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(10);
    auto program = seccomp::prepare(/*ptrace_in_run=*/true);
    if (!program) ::_exit(11);
    seccomp::answer_in_kernel(program.value());
    if (!seccomp::load(program.value())) ::_exit(12);
    // Prepared for the run's own tracing: ptrace passes the first filter.
    if (::syscall(SYS_ptrace, PTRACE_PEEKUSER, ::getppid(), 0, 0) == -1 && errno == EPERM) {
      // (the kernel's own answer for a process we do not trace is ESRCH)
      ::_exit(13);
    }
    if (!seccomp::refuse_ptrace()) ::_exit(14);
    if (::syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0) != -1 || errno != EPERM) ::_exit(15);
    if (::syscall(SYS_process_vm_readv, ::getpid(), nullptr, 0, nullptr, 0, 0) != -1 || errno != EPERM)
      ::_exit(16);
    if (::getpid() <= 0 || ::access("/", F_OK) != 0) ::_exit(17);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "step " << WEXITSTATUS(status)
                                    << " failed (10 nnp, 11 prepare, 12 load, 13 ptrace refused by the first "
                                       "filter, 14 second filter, 15 PTRACE_TRACEME not EPERM, 16 "
                                       "process_vm_readv not EPERM, 17 an ordinary call failed)";
}

// The seal's init gets the program with the supervisor's go-ahead, as bytes:
// what it decodes is the program compiled, and it still refuses once loaded;
// bytes that are not a whole program fail the set-up instead of loading part.
TEST(SeccompProgram, TheGoAheadCarriesTheSameProgramAndRefusesWhatIsNotOne) {
  auto program = seccomp::prepare();
  ASSERT_TRUE(program) << program.error().message;
  const std::string bytes = seccomp::encode(program.value());
  auto decoded = seccomp::decode(bytes);
  ASSERT_TRUE(decoded) << decoded.error().message;
  ASSERT_EQ(decoded.value().instructions.size(), program.value().instructions.size());
  EXPECT_EQ(std::memcmp(decoded.value().instructions.data(), program.value().instructions.data(),
                        program.value().instructions.size() * sizeof(sock_filter)),
            0);
  EXPECT_EQ(decoded.value().notifies, program.value().notifies);
  EXPECT_FALSE(seccomp::decode(""));
  EXPECT_FALSE(seccomp::decode("1"));                                // no instruction
  EXPECT_FALSE(seccomp::decode(bytes.substr(0, bytes.size() - 3)));  // torn
  EXPECT_FALSE(seccomp::decode("x" + bytes.substr(1)));              // not a flag
  EXPECT_FALSE(seccomp::decode("0" + std::string(8 * 4097, '\0')));  // over BPF_MAXINSNS

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    seccomp::answer_in_kernel(decoded.value());
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(10);
    if (!seccomp::load(decoded.value())) ::_exit(11);
    if (::syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0) != -1 || errno != EPERM) ::_exit(12);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "step " << WEXITSTATUS(status)
                                    << " failed (10 nnp, 11 load, 12 ptrace not refused)";
}

TEST(SeccompListener, AnsweredInKernelHasNoWaitingReturn) {
  auto program = seccomp::prepare();
  ASSERT_TRUE(program) << program.error().message;
  auto count = [](const seccomp::Program& p, std::uint32_t k) {
    return std::count_if(p.instructions.begin(), p.instructions.end(),
                         [&](const sock_filter& i) { return i.code == (BPF_RET | BPF_K) && i.k == k; });
  };
  ASSERT_GT(count(program.value(), SECCOMP_RET_USER_NOTIF), 0);
  seccomp::answer_in_kernel(program.value());
  EXPECT_EQ(count(program.value(), SECCOMP_RET_USER_NOTIF), 0);
  EXPECT_GT(count(program.value(), SECCOMP_RET_ERRNO | EPERM), 0);
  EXPECT_FALSE(program.value().notifies);
}

TEST_F(Escape, KillTheSupervisorKillsTheRun) {  // (a)27
  const std::string marker = "31.4159" + std::to_string(::getpid() % 1000);
  const pid_t supervisor = ::fork();
  if (supervisor == 0) {
    // A stand-in supervisor: it launches the seal, then is killed with -9.
    auto r = run_sealed(*policy_, {"/bin/sleep", marker});
    ::_exit(0);
  }
  auto sleeping = [&] {
    return !shell_out("pgrep -f '[s]leep " + marker + "'").empty();  // [s]: not pgrep's own shell
  };
  for (int i = 0; i < 100 && !sleeping(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(sleeping()) << "the sealed sleep never started";
  ::kill(supervisor, SIGKILL);
  ::waitpid(supervisor, nullptr, 0);
  for (int i = 0; i < 100 && sleeping(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(sleeping()) << "the sealed command outlived its supervisor";
}

TEST_F(Escape, SyscallAbiTricks) {  // (a)28
  // With IA32 emulation the filter's arch check answers ENOSYS. Without it
  // (CONFIG_IA32_EMULATION=n, ia32_emulation=0) the kernel has no int 0x80
  // entry: the instruction faults and no call runs, a refusal by the kernel
  // itself (NO_IA32). Which kernel this is, the same probe run unsealed says;
  // a real getpid result (OPEN) fails either way.
  const std::string bare = shell_out(kProbe.string() + " int80");
  const bool no_ia32 = bare.find("RESULT NO_IA32") != std::string::npos;
  const Outcome int80 = probe("int80");
  if (no_ia32) {
    std::printf("[ note ] int 0x80: refused by the kernel (no IA32 emulation), before the seal's filter\n");
    EXPECT_DENIED(int80, (Tokens{"NO_IA32"}));
  } else {
    EXPECT_NE(bare.find("RESULT OPEN"), std::string::npos)
        << "unsealed, int 0x80 getpid should run: " << bare;
    EXPECT_DENIED(int80, (Tokens{"ENOSYS"}));
  }
  EXPECT_DENIED(probe("x32"), (Tokens{"ENOSYS"}));
}

TEST_F(Escape, DangerousSyscalls) {  // (a)29
  for (const char* call :
       {"io_uring_setup", "bpf", "userfaultfd", "perf_event_open", "open_by_handle_at", "kexec_load"}) {
    SCOPED_TRACE(call);
    EXPECT_DENIED(probe(call), (Tokens{"EPERM"}));
  }
  EXPECT_DENIED(probe("clone3"), (Tokens{"ENOSYS"}));
}

// Socket families: kernel surface a sealed run has no use for is refused as
// unsupported, whatever the high bits of the argument; the four a program
// needs open (the ALLOW guard).
TEST_F(Escape, SocketFamiliesOutsideTheFourAreUnsupported) {
  for (const char* family :
       {"17" /*AF_PACKET*/, "40" /*AF_VSOCK*/, "38" /*AF_ALG*/, "31" /*AF_BLUETOOTH*/, "44" /*AF_XDP*/,
        "0x100000011" /*AF_PACKET with a high bit*/, "46", "0x7fffffff"}) {
    SCOPED_TRACE(family);
    const Outcome o = probe("socket", {family});
    EXPECT_DENIED(o, (Tokens{"EAFNOSUPPORT"}));
    EXPECT_EQ(o.refusals.total(), 1u) << listing(o.refusals);
  }
  const Outcome packet = probe("socket", {"17"});
  EXPECT_TRUE(recorded(packet.refusals, "socket AF_PACKET", "px-probe")) << listing(packet.refusals);
}

TEST_F(Escape, AllowUnixInetInet6NetlinkSockets) {
  for (const char* family : {"1", "2", "10", "16", "0x100000002" /*AF_INET: the kernel reads an int*/}) {
    SCOPED_TRACE(family);
    const Outcome o = probe("socket", {family});
    if (std::string(family) == "0x100000002") {
      // High bits: refused outright rather than reasoned about.
      EXPECT_DENIED(o, (Tokens{"EAFNOSUPPORT"}));
      continue;
    }
    EXPECT_EQ(o.token, "OPEN") << o.output << o.error;
    EXPECT_EQ(o.refusals.total(), 0u) << listing(o.refusals);
  }
}

TEST_F(Escape, NoNewPrivileges) {  // (a)30
  EXPECT_EQ(probe("nnp").token, "NNP1");
}

// ---- IPC / unix sockets ----------------------------------------------------

UniqueFd listen_unix(const std::string& name, bool abstract) {
  UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un u{};
  u.sun_family = AF_UNIX;
  const std::size_t off = abstract ? 1 : 0;
  std::memcpy(u.sun_path + off, name.data(), name.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + off + name.size());
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&u), len) != 0 || ::listen(s.get(), 4) != 0)
    return UniqueFd();
  return s;
}

TEST_F(Escape, HostUnixSocket) {  // (a)18, (a)31, (a)33
  const fs::path sock = user_ / "daemon.sock";
  UniqueFd l = listen_unix(sock.string(), false);
  ASSERT_TRUE(l.valid());
  EXPECT_DENIED(probe("unix", {sock.string()}), (Tokens{"ENOENT", "EACCES", "ECONNREFUSED"}));
  EXPECT_DENIED(probe("unix", {"/run/dbus/system_bus_socket"}), (Tokens{"ENOENT", "EACCES"}));
  EXPECT_DENIED(probe("unix", {"/var/run/docker.sock"}), (Tokens{"ENOENT", "EACCES"}));
}

TEST_F(Escape, AbstractSocket) {  // (a)32
  const std::string name = "px-escape-" + std::to_string(::getpid());
  UniqueFd l = listen_unix(name, true);
  ASSERT_TRUE(l.valid());
  EXPECT_DENIED(probe("abstract", {name}), (Tokens{"ECONNREFUSED", "EPERM", "EACCES"}));
}

// ---- Network ------------------------------------------------------------------

TEST_F(Escape, BypassTheProxy) {  // (a)35
  EXPECT_DENIED(probe("tcp", {"1.1.1.1", "443"}), (Tokens{"ENETUNREACH", "EACCES"}));
  EXPECT_DENIED(probe("udp-dns", {"8.8.8.8"}), (Tokens{"ENETUNREACH"}));
  EXPECT_DENIED(probe("resolve", {"example.com"}), (Tokens{"EAI"}));
  // A server on the host's loopback is not the run's loopback.
  EXPECT_DENIED(probe("tcp", {"127.0.0.1", "22"}), (Tokens{"ECONNREFUSED"}));
}

// Test suites and dev servers: bind, listen and connect on the run's own
// loopback, any port (Landlock's TCP rules apply only without a network
// namespace). tests/network checks that the host cannot reach such a server.
TEST_F(Escape, AllowServersOnTheRunsOwnLoopback) {
  for (const char* port : {"8080", "3000", "80", "5432", "1"}) {
    SCOPED_TRACE(port);
    EXPECT_EQ(probe("serve", {port}).token, "OPEN");
  }
  const bool python = ::access("/usr/bin/python3", X_OK) == 0;
  if (!python) GTEST_SKIP() << "python3 is not in /usr/bin: the http.server half is skipped";
  const Outcome o = run_sealed(
      *policy_,
      {"/bin/sh", "-c",
       "/usr/bin/python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & "
       "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "
       "/usr/bin/python3 -c 'import urllib.request,sys; urllib.request.urlopen(\"http://127.0.0.1:8765/\"); "
       "print(\"RESULT OPEN\")' 2>/dev/null && break; sleep 0.2; done; kill $!"});
  EXPECT_EQ(o.token, "OPEN") << o.output << o.error;
}

// Debuggers and tracers of the run's own processes work; the seal's init and
// everything outside the run stay out of reach (Landlock scopes ptrace to the
// run's domain, the pid namespace hides the rest).
TEST_F(Escape, AllowTracingTheRunsOwnProcesses) {
  if (::access("/usr/bin/strace", X_OK) != 0) GTEST_SKIP() << "strace is not installed";
  const Outcome strace = run_sealed(*policy_, {"/usr/bin/strace", "-f", "-o", "/dev/null", "/bin/sh", "-c",
                                               "/bin/true && echo RESULT OPEN"});
  EXPECT_EQ(strace.token, "OPEN") << strace.output << strace.error;
  EXPECT_EQ(strace.exit_code, 0);
  if (::access("/usr/bin/gdb", X_OK) == 0) {
    const Outcome gdb = run_sealed(
        *policy_, {"/bin/sh", "-c",
                   "/bin/sleep 30 & child=$!; /usr/bin/gdb -nx -batch -ex 'info inferiors' -p $child 2>&1 | "
                   "grep -q 'process '$child && echo RESULT OPEN; kill $child"});
    EXPECT_EQ(gdb.token, "OPEN") << gdb.output << gdb.error;
  }
  // PTRACE_TRACEME of a child (the way debuggers start a program).
  const Outcome traceme = run_sealed(*policy_, {"/usr/bin/strace", "-o", "/dev/null", "/bin/true"});
  EXPECT_EQ(traceme.exit_code, 0) << traceme.output << traceme.error;
  // Still out of reach: the seal's init (pid 1, no Landlock domain of the
  // run's) and the supervisor (outside the pid namespace).
  EXPECT_DENIED(probe("ptrace", {"1"}), (Tokens{"EPERM"}));
  EXPECT_DENIED(probe("ptrace", {std::to_string(::getpid())}), (Tokens{"ESRCH", "EPERM"}));
}

// ---- ALLOW guards and exit statuses ---------------------------------------------

TEST_F(Escape, AllowReadUsrAndRunShell) {
  EXPECT_EQ(probe("read", {"/usr/lib/os-release"}).token, "OPEN");
  EXPECT_EQ(probe("read", {(ws_ / "README").string()}).token, "OPEN");
  EXPECT_EQ(run_sealed(*policy_, {"/bin/sh", "-c", "exit 7"}).exit_code, 7);
  EXPECT_EQ(run_sealed(*policy_, {"/bin/sh", "-c", "kill -9 $$"}).exit_code, 128 + 9);
  EXPECT_EQ(run_sealed(*policy_, {"/bin/sh", "-c", "echo hi | cat >/dev/null; ls /usr >/dev/null"}).exit_code,
            0);
}

// ---- Real harnesses ----------------------------------------------------------------

TEST_F(Escape, RealHarnessesStartInside) {
  int ran = 0;
  for (const char* name : {"claude", "codex", "opencode"}) {
    const std::string path = "/usr/bin/" + std::string(name);
    if (::access(path.c_str(), X_OK) != 0) {
      std::printf("[  SKIP    ] %s is not installed (npm i -g ...)\n", name);
      continue;
    }
    // opencode needs writable XDG dirs: the agent's home is writable here.
    EnvMap env{{"PATH", "/usr/bin:/bin"}, {"HOME", agent_.string()}, {"TMPDIR", "/tmp"}};
    const Outcome o = run_sealed(*policy_, {path, "--version"}, env);
    EXPECT_EQ(o.exit_code, 0) << name << " --version failed inside the seal: " << o.error << o.output;
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "none of claude, codex, opencode is installed";
}

// ---- The expectation matrix, for real -----------------------------------------------

TEST(EscapeMatrix, EveryRowHoldsThroughTheLinuxBackend) {
  int checked = 0, gaps = 0;
  for (const auto& file : expectations::expectation_files()) {
    SCOPED_TRACE(file.string());
    auto e = expectations::load(file);
    ASSERT_TRUE(e) << e.error().message;
    // Not under /tmp: inside the seal /tmp is the run's private temp dir.
    auto layout = expectations::Layout::create(test_base());
    ASSERT_TRUE(layout) << layout.error().message;
    ASSERT_TRUE(layout.value().materialize(e.value()));
    auto in = expectations::compose_inputs(e.value(), layout.value());
    ASSERT_TRUE(in) << in.error().message;
    in.value().grants.push_back({kProbes, policy::Access::read, "--grant"});
    auto p = policy::compose(in.value());
    ASSERT_TRUE(p) << p.error().message;
    auto rows = layout.value().resolve(e.value().rows);
    ASSERT_TRUE(rows) << rows.error().message;
    const fs::path temp = layout.value().temp;
    for (const auto& row : rows.value()) {
      // The run's temp dir is /tmp inside the seal.
      std::string path = row.path;
      if (!path.empty() && (fs::path(path) == temp || path.rfind(temp.string() + "/", 0) == 0))
        path = "/tmp" + path.substr(temp.string().size());
      Outcome o;
      bool allowed = false;
      const bool in_temp = path != row.path;
      switch (row.op) {
        case expectations::Op::read:
          if (in_temp && fs::exists(row.path)) {
            // The run's /tmp is a tmpfs of its own: the file the layout made
            // in its temp dir on the host is made inside first.
            o = run_sealed(
                p.value(),
                {"/bin/sh", "-c", "mkdir -p \"$(dirname \"$1\")\" && : > \"$1\" && exec \"$2\" read \"$1\"",
                 "sh", path, kProbe.string()});
            allowed = o.token == "OPEN" || o.token == "EMPTY";
            break;
          }
          o = run_sealed(p.value(), {kProbe.string(), "read", path});
          allowed = o.token == "OPEN";
          break;
        case expectations::Op::write: {
          const bool existed = fs::exists(path);
          // A read-only path, or a path inside an absent read-only folder,
          // judged before the probe (which may make the folder).
          const bool read_only_path =
              std::any_of(p.value().read_only().begin(), p.value().read_only().end(), [&](const auto& r) {
                const auto rel = fs::path(path).lexically_relative(r.path);
                return r.path == fs::path(path) ||
                       (!rel.empty() && *rel.begin() != ".." && !fs::exists(r.path));
              });
          o = run_sealed(p.value(), {kProbe.string(), "write", path});
          allowed = o.token == "OPEN";
          if (allowed && !row.allowed && !existed && read_only_path) {
            std::printf(
                "[  GAP     ] %s: a read-only path that does not exist can be created; the supervisor "
                "moves it aside (%s)\n",
                row.describe(file).c_str(), "docs/linux-seal.md, Limitations");
            ++gaps;
            continue;
          }
          break;
        }
        case expectations::Op::create_git:
          o = run_sealed(p.value(), {kProbe.string(), "mkdir", path});
          allowed = o.token == "OPEN";
          if (allowed && !row.allowed) {
            std::printf(
                "[  GAP     ] %s: a new .git in the run folder is not blocked by the Linux view (%s)\n",
                row.describe(file).c_str(), "docs/linux-seal.md, Limitations");
            ++gaps;
            continue;
          }
          break;
        case expectations::Op::connect:
          o = run_sealed(p.value(), {kProbe.string(), "connect", row.host, std::to_string(row.port)});
          allowed = o.token == "OPEN";
          if (row.allowed && !allowed) {
            const bool local = row.host == "localhost" || row.host.rfind("127.", 0) == 0 || row.host == "::1";
            std::printf(
                "[  GAP     ] %s: %s\n", row.describe(file).c_str(),
                local ? "Local servers on Linux reach only servers inside the run's own network namespace"
                      : "the proxy is not wired into sealed runs yet, so every run is offline");
            ++gaps;
            continue;
          }
          break;
      }
      EXPECT_TRUE(o.error.empty()) << row.describe(file) << ": " << o.error;
      EXPECT_EQ(allowed, row.allowed)
          << row.describe(file) << " (probe said " << o.token << "; seal notes: " << o.notes << ")";
      ++checked;
    }
  }
  std::printf("[  MATRIX  ] %d rows checked through the seal, %d known gaps shown above\n", checked, gaps);
}

// ---- The suite's rows -------------------------------------------------------------------
// The suite runs in rows, each a test of its own here (so each runs in CI):
// root (this pass) and a user without a delegated cgroup (the kill switch's
// process-tree fallback) run all of it; a user with cgroups delegated to it
// and a machine without a writable pids controller (simulated: the
// supervisor's pids controller hidden) run the tests whose outcome depends on
// what those rows change: the supervisor's cgroups (the process limit, the
// kill switch, pause, the watchdog). The rest goes through the same code in
// every row (the seal itself never looks at the supervisor's cgroups), so
// running it again would cost CI minutes and prove nothing new. Each row's
// tests assert what `parallex check` claims there (limits_test.cpp compares
// the two).

constexpr const char* kWholeSuite = "Escape*:-EscapeUnprivileged.*:EscapeRows.*";
constexpr const char* kCgroupTests =
    "EscapeFrontDoor.AForkBomb*:EscapeFrontDoor.WithNothingToHoldTheProcessLimit*:"
    "EscapeFrontDoor.AKilledSupervisor*:EscapeFrontDoor.ALaterParallexSweeps*:EscapeFrontDoor.APause*:"
    "EscapeFrontDoor.ARunStartedDuringAGlobalPause*";

void print_pass(const char* row, const test::Pass& pass) {
  std::printf("---- the suite %s, %d skip lines ----\n%s---- end ----\n", row, pass.inner_skips,
              pass.output.c_str());
}

TEST(EscapeUnprivileged, AsUnprivilegedUser) {
  if (::getuid() != 0) GTEST_SKIP() << "already unprivileged: this whole run is the unprivileged pass";
  if (std::getenv("PX_ESCAPE_CHILD")) GTEST_SKIP() << "nested";
  const auto user = test::unprivileged_user();
  if (!user) GTEST_SKIP() << "cannot create the unprivileged user pxtest (useradd failed)";
  const test::Pass pass = test::rerun_self_as(*user, kWholeSuite, "PX_ESCAPE_CHILD");
  print_pass(("as " + user->name + " (uid " + std::to_string(user->uid) + "), no delegated cgroup").c_str(),
             pass);
  EXPECT_TRUE(pass.passed()) << "the unprivileged pass failed (status " << pass.status << ")";
}

// The closest honest equivalent of a user's delegated cgroup on this
// machine's hybrid layout (cgroup v2 without controllers, pids on v1): a
// cgroup v2 and a v1 pids cgroup owned by pxtest, as systemd's Delegate=yes
// gives a user's scope (tests/support/delegated_cgroups.hpp). On a pure v2
// machine it is a cgroup v2 with whatever controllers the root one offers.
TEST(EscapeRows, UnprivilegedWithADelegatedCgroup) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to delegate cgroups to pxtest";
  if (std::getenv("PX_ESCAPE_CHILD")) GTEST_SKIP() << "nested";
  const auto user = test::unprivileged_user();
  if (!user) GTEST_SKIP() << "cannot create the unprivileged user pxtest (useradd failed)";
  test::PassOptions options;
  options.delegated_cgroups = true;
  options.env = {{"PX_ESCAPE_ROW", "delegated"}};
  const test::Pass pass = test::rerun_self_as(*user, kCgroupTests, "PX_ESCAPE_CHILD", options);
  print_pass(("as " + user->name + " with delegated cgroups").c_str(), pass);
  EXPECT_TRUE(pass.passed()) << "the delegated-cgroup pass failed (status " << pass.status << ")";
}

TEST(EscapeRows, WithoutAWritablePidsController) {
  if (std::getenv("PX_ESCAPE_CHILD")) GTEST_SKIP() << "nested";
  test::PassOptions options;
  options.env = {{"PARALLEX_TEST_PROCESS_LIMIT_WITHOUT", "pids-cgroup"}, {"PX_ESCAPE_ROW", "no-pids"}};
  const test::Pass pass = test::rerun_self(kCgroupTests, "PX_ESCAPE_CHILD", options);
  print_pass("without a writable pids controller (simulated)", pass);
  EXPECT_TRUE(pass.passed()) << "the pass without a pids controller failed (status " << pass.status << ")";
}

}  // namespace
}  // namespace px::seal
