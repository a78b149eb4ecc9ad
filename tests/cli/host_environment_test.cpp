// Where Parallex runs: Ubuntu's user namespace restriction, WSL, containers,
// read through a fake host view (PARALLEX_TEST_HOST_ROOT) by the real
// detection, and by the real `parallex check` and `parallex run`.
#include "backend/seal/host_environment.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "cli_support.hpp"
#include "spawn.hpp"
#include "test_paths.hpp"

namespace px::cli_test {
namespace {

// A host view of Ubuntu 24.04 with its restriction on, this process unconfined.
void ubuntu_view(const fs::path& root, const std::string& label = "unconfined") {
  write(root / "proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1\n");
  write(root / "sys/module/apparmor/parameters/enabled", "Y\n");
  write(root / "proc/self/attr/current", label + "\n");
  write(root / "proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
  EXPECT_EQ(std::system(("chmod -R a+rX " + q(root.string())).c_str()), 0);
}

// userns_restriction() as an unprivileged process (root is exempt): a forked
// child drops to nobody and sends back what it found.
seal::UsernsRestriction restriction_as_nobody(const fs::path& root) {
  int p[2];
  EXPECT_EQ(::pipe(p), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(p[0]);
    const passwd* nobody = ::getpwnam("nobody");
    if (::getuid() == 0 && (!nobody || ::setgid(nobody->pw_gid) != 0 || ::setuid(nobody->pw_uid) != 0))
      ::_exit(90);
    ::setenv("PARALLEX_TEST_HOST_ROOT", root.c_str(), 1);
    const auto r = seal::userns_restriction();
    const std::string line = std::string(r.restricted ? "1" : "0") + (r.applies ? "1" : "0") +
                             (r.profile_loaded ? "1" : "0") + r.reason;
    (void)!::write(p[1], line.data(), line.size());
    ::_exit(0);
  }
  ::close(p[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(p[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  seal::UsernsRestriction r;
  if (text.size() < 3) return r;
  r.restricted = text[0] == '1';
  r.applies = text[1] == '1';
  r.profile_loaded = text[2] == '1';
  r.reason = text.substr(3);
  return r;
}

TEST(UsernsRestriction, DetectedFromTheSysctlAndTheLabel) {
  Folder root;
  ubuntu_view(root.path);
  const auto r = restriction_as_nobody(root.path);
  EXPECT_TRUE(r.restricted);
  EXPECT_TRUE(r.applies);
  EXPECT_NE(r.reason.find("kernel.apparmor_restrict_unprivileged_userns=1"), std::string::npos) << r.reason;
  // Not /usr/bin/parallex: the fix is a profile for this executable, and the sysctl.
  EXPECT_NE(r.reason.find("check --apparmor-profile | sudo tee /etc/apparmor.d/"), std::string::npos)
      << r.reason;
  EXPECT_NE(r.reason.find("sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"),
            std::string::npos);

  // The package's profile loaded, for /usr/bin/parallex: this one still needs its own.
  write(root.path / "sys/kernel/security/apparmor/profiles", "parallex (unconfined)\nbwrap (unconfined)\n");
  EXPECT_EQ(std::system(("chmod -R a+rX " + q(root.path.string())).c_str()), 0);
  const auto loaded = restriction_as_nobody(root.path);
  EXPECT_TRUE(loaded.profile_loaded);
  EXPECT_NE(loaded.reason.find("is for /usr/bin/parallex only"), std::string::npos) << loaded.reason;
}

TEST(UsernsRestriction, AProfileOrRootOrTheSysctlOffLiftsIt) {
  Folder confined, off, apparmor_off;
  ubuntu_view(confined.path, "parallex (unconfined)");
  EXPECT_FALSE(restriction_as_nobody(confined.path).applies);
  ubuntu_view(off.path);
  write(off.path / "proc/sys/kernel/apparmor_restrict_unprivileged_userns", "0\n");
  EXPECT_FALSE(restriction_as_nobody(off.path).restricted);
  ubuntu_view(apparmor_off.path);
  write(apparmor_off.path / "sys/module/apparmor/parameters/enabled", "N\n");
  EXPECT_FALSE(restriction_as_nobody(apparmor_off.path).restricted);
  if (::getuid() == 0) {
    Folder as_root;
    ubuntu_view(as_root.path);
    ::setenv("PARALLEX_TEST_HOST_ROOT", as_root.path.c_str(), 1);
    const auto r = seal::userns_restriction();
    ::unsetenv("PARALLEX_TEST_HOST_ROOT");
    EXPECT_TRUE(r.restricted);
    EXPECT_FALSE(r.applies) << "root is exempt from the restriction";
  }
}

// The real executable, as an unprivileged user: `check` prints the fix, `run`
// refuses with the same words (and exit 125, the run's set-up failure) before
// trying anything.
TEST(UsernsRestriction, CheckPrintsTheFixAndRunRefusesWithTheSameWords) {
  if (!have_unprivileged_user())
    GTEST_SKIP() << "needs the unprivileged user pxtest (run as root to create it)";
  Folder root, home;
  ubuntu_view(root.path);
  const std::map<std::string, std::string> env{{"PARALLEX_TEST_HOST_ROOT", root.path.string()}};
  const Ran run = px("run -- /bin/true", home.path, env, true);
  EXPECT_EQ(run.status, 125) << run.err;
  EXPECT_EQ(run.err.rfind("parallex: refusing to run: the seal would lack user namespace", 0), 0u) << run.err;
  EXPECT_NE(run.err.find("--allow-weaker-seal"), std::string::npos) << run.err;
  const auto fix_at = run.err.find("Fix: ");
  ASSERT_NE(fix_at, std::string::npos) << run.err;
  // The guarantee's reason ends with the fix, in brackets among the others missing.
  const std::string fix = run.err.substr(fix_at, run.err.find(".)", fix_at) - fix_at);
  const Ran check = px("check", home.path, env, true);
  EXPECT_EQ(check.status, 1);
  EXPECT_NE(check.out.find(fix), std::string::npos) << "check does not say: " << fix << "\n" << check.out;
  EXPECT_NE(check.out.find("Ubuntu's restriction of unprivileged user namespaces"), std::string::npos)
      << check.out;
  // The profile the fix pipes into /etc/apparmor.d is this executable's, allowing userns and nothing else.
  const Ran profile = px("check --apparmor-profile", home.path);
  EXPECT_NE(profile.out.find(std::string(" ") + PARALLEX_EXE + " flags=(unconfined) {"), std::string::npos)
      << profile.out;
  EXPECT_NE(profile.out.find("  userns,\n"), std::string::npos) << profile.out;
}

// A container made the way runtimes make one by default forbids new user
// namespaces (its seccomp profile), and a run's quick look at the machine does
// not try one: the launch finds out. Stand-in: bwrap's --disable-userns with
// every capability dropped, as the unprivileged user. Unaccepted, the run
// refuses; accepted once in the environment (an image's ENV), it runs with
// Landlock and seccomp, says the seal is weaker, and records it so.
TEST(ContainerStandIn, WithoutUserNamespacesAnAcceptedRunIsWeakerAndStillConfined) {
  if (!have_unprivileged_user())
    GTEST_SKIP() << "needs the unprivileged user pxtest (run as root to create it)";
  if (sh("command -v bwrap").status != 0) GTEST_SKIP() << "bwrap (bubblewrap) makes the container stand-in";
  Folder home, outside;
  write(outside.path / "secret", "outside-secret\n");
  fs::permissions(outside.path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(outside.path / "secret",
                  fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  const fs::path work = home.path / "work";
  fs::create_directories(work);
  fs::create_directories(home.path / "px");
  fs::create_directories(home.path / "runtime");
  ASSERT_EQ(std::system(("chown -R pxtest " + q(home.path.string())).c_str()), 0);
  std::map<std::string, std::string> env{{"PARALLEX_HOME", (home.path / "px").string()},
                                         {"XDG_RUNTIME_DIR", (home.path / "runtime").string()}};
  const std::string container =
      "bwrap --dev-bind / / --proc /proc --unshare-user --unshare-pid --disable-userns --cap-drop ALL -- ";
  const std::string run =
      container + PARALLEX_EXE + " run --in " + q(work.string()) + " -- sh -c " +
      q("echo made > made.txt; cat " + (outside.path / "secret").string() + " || echo refused");

  const Ran refused = sh(run, env, true);
  EXPECT_EQ(refused.status, 125) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("--allow-weaker-seal"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(work / "made.txt")) << "the command ran without the user's acceptance";

  env["PARALLEX_ALLOW_WEAKER_SEAL"] = "1";
  const Ran accepted = sh(run, env, true);
  ASSERT_EQ(accepted.status, 0) << accepted.out << accepted.err;
  EXPECT_TRUE(fs::exists(work / "made.txt")) << accepted.err;
  EXPECT_NE(accepted.out.find("refused"), std::string::npos) << accepted.out;
  EXPECT_EQ(accepted.out.find("outside-secret"), std::string::npos) << "Landlock let the run read outside";
  EXPECT_NE(accepted.err.find("weaker seal: no namespaces"), std::string::npos) << accepted.err;
  int weaker = 0;
  for (const auto& e : fs::recursive_directory_iterator(home.path / "px"))
    if (e.path().filename() == "run.json" &&
        ::px::test::slurp(e.path()).find("\"seal\": \"weaker\"") != std::string::npos)
      ++weaker;
  EXPECT_EQ(weaker, 1) << "the accepted run's record says its seal was weaker";
  // What the policy puts in the run's /tmp (its tool caches: npm's) is in its
  // temp dir, by the host path, and writable there.
  const Ran caches = sh(container + PARALLEX_EXE + " run --in " + q(work.string()) + " -- sh -c " +
                            q("case $npm_config_cache in \"$TMPDIR\"/*) ;; *) echo ELSEWHERE;; esac; "
                              "mkdir -p \"$npm_config_cache\" && echo CACHE-OK"),
                        env, true);
  EXPECT_EQ(caches.out, "CACHE-OK\n") << caches.err;

  // A fork bomb stops at the run's process limit there too: no user namespace
  // of its own, so the user's own RLIMIT_NPROC holds it, above the tasks the
  // user had at the start (process_limit.hpp), and `check` says so.
  write(home.path / "limit.yaml", "limits:\n  processes: 256\n");
  ASSERT_EQ(std::system(("chown pxtest " + q((home.path / "limit.yaml").string())).c_str()), 0);
  const Ran bomb = sh(container + PARALLEX_EXE + " run --profile " + q((home.path / "limit.yaml").string()) +
                          " --in " + q(work.string()) + " -- python3 -c " +
                          q("import os, time\n"
                            "n = 0\n"
                            "try:\n"
                            "    while n < 768:\n"
                            "        if os.fork() == 0:\n"
                            "            time.sleep(3); os._exit(0)\n"
                            "        n += 1\n"
                            "    print('NOT-STOPPED', n)\n"
                            "except OSError as e:\n"
                            "    print('STOPPED', n, e.errno)\n"),
                      env, true);
  ASSERT_EQ(bomb.status, 0) << bomb.out << bomb.err;
  std::istringstream bombed(bomb.out);
  std::string word;
  int forked = -1, err = -1;
  bombed >> word >> forked >> err;
  EXPECT_EQ(word, "STOPPED") << bomb.out << bomb.err;
  EXPECT_EQ(err, EAGAIN) << bomb.out;
  EXPECT_LE(forked, 256) << bomb.out;
  EXPECT_GE(forked, 64) << "something else stopped it well below the limit: " << bomb.out;
  EXPECT_EQ(bomb.err.find("no process limit"), std::string::npos) << bomb.err;
  const Ran check = sh(container + PARALLEX_EXE + " check --json", env, true);
  EXPECT_NE(check.out.find("\"rlimit-nproc-user\""), std::string::npos) << check.out;

  // The run shares the container's network: UDP (DNS to any server
  // included) is refused, TCP reaches only the proxy, and with Local servers
  // naming a port, that port too (a listener of this test on the loopback).
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  const std::string probe =
      "(echo x > /dev/udp/127.0.0.1/53) 2>/dev/null && echo UDP-OPEN || echo UDP-REFUSED; "
      "(echo x > /dev/udp/192.0.2.1/9) 2>/dev/null && echo UDP-OUT-OPEN || echo UDP-OUT-REFUSED; "
      "(echo x > /dev/tcp/127.0.0.1/" +
      port + ") 2>/dev/null && echo TCP-OPEN || echo TCP-REFUSED";
  const auto net_run = [&](const std::string& options) {
    return sh(container + PARALLEX_EXE + " run " + options + " --in " + q(work.string()) + " -- bash -c " +
                  q(probe),
              env, true);
  };
  const Ran net = net_run("");
  ASSERT_EQ(net.status, 0) << net.out << net.err;
  EXPECT_EQ(net.out, "UDP-REFUSED\nUDP-OUT-REFUSED\nTCP-REFUSED\n") << net.err;
  EXPECT_NE(net.err.find("socket AF_INET SOCK_DGRAM"), std::string::npos) << "recorded: " << net.err;
  const Ran local = net_run("--local-servers=" + port);
  ASSERT_EQ(local.status, 0) << local.out << local.err;
  EXPECT_EQ(local.out, "UDP-REFUSED\nUDP-OUT-REFUSED\nTCP-OPEN\n") << local.err;
  const Ran every = net_run("--local-servers");
  ASSERT_EQ(every.status, 0) << every.out << every.err;
  EXPECT_EQ(every.out, "UDP-REFUSED\nUDP-OUT-REFUSED\nTCP-OPEN\n") << every.err;
  EXPECT_NE(every.err.find("TCP reaches any address on any port"), std::string::npos) << every.err;
  ::close(listener);

  // As root in the container (uid 0, no capability): a denied file inside a
  // read grant stays out of reach though its owner could read it.
  if (::geteuid() != 0) return;
  Folder root_home;
  const Ran as_root = sh(container + PARALLEX_EXE + " run --in " + q(root_home.path.string()) +
                             " -- sh -c 'cat /etc/shadow || echo refused; head -c 5 /etc/passwd'",
                         {{"PARALLEX_HOME", (root_home.path / "px").string()},
                          {"XDG_RUNTIME_DIR", (root_home.path / "px-runtime").string()},
                          {"PARALLEX_ALLOW_WEAKER_SEAL", "1"}});
  ASSERT_EQ(as_root.status, 0) << as_root.out << as_root.err;
  EXPECT_NE(as_root.out.find("refused\nroot:"), std::string::npos) << as_root.out << as_root.err;
}

// The profile a container or pod needs for the full seal (tested in a real
// runtime by tests/containers): JSON as runtimes take it, an allowlist whose
// default refuses, with what the seal makes in its own user namespace and
// without the kernel surface nothing of Parallex's uses.
TEST(ContainerProfile, AllowsTheSealsNamespacesAndRefusesWhatNoRunUses) {
  Folder home;
  const Ran r = px("check --seccomp-profile", home.path);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto profile = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(profile.is_object()) << r.out;
  EXPECT_EQ(profile["defaultAction"], "SCMP_ACT_ERRNO");
  EXPECT_EQ(profile["architectures"], nlohmann::json({"SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"}));
  ASSERT_EQ(profile["syscalls"].size(), 1u);
  EXPECT_EQ(profile["syscalls"][0]["action"], "SCMP_ACT_ALLOW");
  std::set<std::string> allowed;
  for (const auto& n : profile["syscalls"][0]["names"]) allowed.insert(n.get<std::string>());
  for (const char* needed :
       {"unshare", "clone", "clone3", "mount", "pivot_root", "fsopen", "fsmount", "move_mount", "open_tree",
        "mount_setattr", "setns", "seccomp", "landlock_restrict_self", "ptrace", "read", "execve"})
    EXPECT_TRUE(allowed.count(needed)) << needed << " is refused";
  for (const char* refused : {"open_by_handle_at", "keyctl", "bpf", "io_uring_setup", "userfaultfd",
                              "perf_event_open", "init_module", "kexec_load", "reboot"})
    EXPECT_FALSE(allowed.count(refused)) << refused << " is allowed";
}

TEST(HostEnvironment, NamesWslAndContainersAndWhatTheyCost) {
  Folder wsl1, wsl2, docker;
  write(wsl1.path / "proc/sys/kernel/osrelease", "4.4.0-19041-Microsoft\n");
  write(wsl1.path / "proc/version", "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com)\n");
  write(wsl2.path / "proc/sys/kernel/osrelease", "5.15.153.1-microsoft-standard-WSL2\n");
  write(docker.path / ".dockerenv", "");
  write(docker.path / "proc/sys/kernel/osrelease", "6.1.0-13-amd64\n");
  auto detect = [](const fs::path& root, bool userns, int landlock, bool cgroup2) {
    ::setenv("PARALLEX_TEST_HOST_ROOT", root.c_str(), 1);
    auto env = seal::detect_environment(userns, landlock, cgroup2);
    ::unsetenv("PARALLEX_TEST_HOST_ROOT");
    return env;
  };
  const auto w1 = detect(wsl1.path, false, 0, false);
  EXPECT_EQ(w1.kind, "wsl1");
  EXPECT_FALSE(w1.supported);
  ASSERT_FALSE(w1.costs.empty());
  EXPECT_NE(w1.costs[0].find("WSL 1 is not supported"), std::string::npos);
  EXPECT_NE(w1.costs[0].find("wsl --set-version"), std::string::npos);
  const auto w2 = detect(wsl2.path, true, 6, true);
  EXPECT_EQ(w2.kind, "wsl2");
  EXPECT_TRUE(w2.supported);
  EXPECT_NE(w2.name.find("WSL 2"), std::string::npos);
  const auto d = detect(docker.path, false, 0, false);
  EXPECT_EQ(d.kind, "container");
  EXPECT_EQ(d.name, "a container (docker)");
  std::string costs;
  for (const auto& c : d.costs) costs += c + "\n";
  EXPECT_NE(costs.find("does not let Parallex make namespaces"), std::string::npos) << costs;
  EXPECT_NE(costs.find("has no Landlock"), std::string::npos) << costs;
  EXPECT_NE(costs.find("no cgroup v2"), std::string::npos) << costs;
  const auto plain = detect(wsl2.path / "nothing-here", true, 7, true);
  EXPECT_EQ(plain.kind, "host");
  EXPECT_TRUE(plain.costs.empty());
}

TEST(HostEnvironment, CheckNamesIt) {
  Folder root, home;
  write(root.path / "proc/sys/kernel/osrelease", "4.4.0-19041-Microsoft\n");
  const Ran check = px("check", home.path, {{"PARALLEX_TEST_HOST_ROOT", root.path.string()}});
  EXPECT_NE(check.out.find("Environment: WSL 1"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("WSL 1 is not supported"), std::string::npos) << check.out;
  const Ran json = px("check --json", home.path, {{"PARALLEX_TEST_HOST_ROOT", root.path.string()}});
  EXPECT_NE(json.out.find("\"kind\": \"wsl1\""), std::string::npos) << json.out;
}

}  // namespace
}  // namespace px::cli_test
