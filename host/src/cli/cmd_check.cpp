// `parallex check [--json] [--sealed]`: what the seal can guarantee on this
// machine (each guarantee enforced, or missing and why); with --sealed, a real
// sealed run tries each way out from inside and a table says what held.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "backend/linux/capabilities.hpp"
#include "backend/linux/host_environment.hpp"
#include "backend/linux/landlock.hpp"
#include "backend/linux/launch.hpp"
#include "backend/linux/sys.hpp"
#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/policy_options.hpp"
#include "common/paths.hpp"
#ifdef PX_HAVE_SUPERVISOR
#include "supervisor/run_control.hpp"
#endif

namespace px::cli {
namespace {

struct Options {
  bool json = false;
  bool sealed = false;
  bool allow_weaker = false;
  bool apparmor_profile = false;
  std::string probe;  // internal: run one probe (inside the seal)
  std::string probe_arg;
};

// ---- probes: run inside the seal, print one token (an errno name, OPEN, EMPTY)

std::string err() {
  return seal::errno_name(errno);
}

std::string probe_read(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return err();
  char buf[64];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n < 0) return err();
  return n == 0 ? "EMPTY" : "OPEN";
}

std::string probe_write(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return err();
  const bool wrote = ::write(fd, "x", 1) == 1;
  ::close(fd);
  return wrote ? "OPEN" : err();
}

std::string probe_connect(int family, int type, const sockaddr* addr, socklen_t len) {
  int s = ::socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s < 0) return err();
  std::string out = "OPEN";
  if (::connect(s, addr, len) != 0) {
    if (errno == EINPROGRESS) {
      pollfd p{s, POLLOUT, 0};
      int e = ETIMEDOUT;
      if (::poll(&p, 1, 3000) > 0) {
        socklen_t l = sizeof e;
        ::getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &l);
      }
      out = e == 0 ? "OPEN" : seal::errno_name(e);
    } else {
      out = err();
    }
  }
  ::close(s);
  return out;
}

std::string probe_dns() {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return err();
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(53);
  ::inet_pton(AF_INET, "8.8.8.8", &a.sin_addr);
  // A query for example.com, type A.
  const unsigned char q[] = {0x12, 0x34, 1,   0,   0,   1, 0,   0,   0,   0, 0, 0, 7, 'e', 'x',
                             'a',  'm',  'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1};
  std::string out;
  if (::sendto(s, q, sizeof q, 0, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0) {
    out = err();
  } else {
    pollfd p{s, POLLIN, 0};
    out = ::poll(&p, 1, 3000) > 0 ? "OPEN" : "ETIMEDOUT";
  }
  ::close(s);
  return out;
}

std::string run_probe(const std::string& name, const std::string& arg) {
  if (name == "read") return probe_read(arg);
  if (name == "write") return probe_write(arg);
  if (name == "connect-ip") {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(443);
    ::inet_pton(AF_INET, "1.1.1.1", &a.sin_addr);
    return probe_connect(AF_INET, SOCK_STREAM, reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  if (name == "dns") return probe_dns();
  if (name == "unix" || name == "abstract") {
    sockaddr_un u{};
    u.sun_family = AF_UNIX;
    const std::size_t off = name == "abstract" ? 1 : 0;
    std::memcpy(u.sun_path + off, arg.data(), std::min(arg.size(), sizeof u.sun_path - 1 - off));
    const auto len =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + off + arg.size() + (off ? 0 : 1));
    return probe_connect(AF_UNIX, SOCK_STREAM, reinterpret_cast<sockaddr*>(&u), len);
  }
  if (name == "signal") return ::kill(std::stoi(arg), 0) == 0 ? "OPEN" : err();
  if (name == "ptrace") {
    if (::ptrace(PTRACE_ATTACH, std::stoi(arg), nullptr, nullptr) == 0) return "OPEN";
    return err();
  }
  if (name == "tiocsti" || name == "tiocsti-high") {
    char c = '\n';
    unsigned long request = TIOCSTI;
    if (name == "tiocsti-high") request |= 1UL << 32;
    return ::syscall(SYS_ioctl, 0, request, &c) == 0 ? "OPEN" : err();
  }
  if (name == "packet-socket") {
    // Raw frames of every interface: refused as an unsupported family.
    const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (fd < 0) return err();
    ::close(fd);
    return "OPEN";
  }
  return "EINVAL";
}

// ---- the supervisor's side of --sealed

struct Way {
  std::string what, probe, arg;
};

int sealed(const Options& o) {
  const fs::path base = parallex_runtime_dir();
  std::error_code ec;
  fs::create_directories(base, ec);
  std::string templ = (base / "check-XXXXXX").string();
  if (!::mkdtemp(templ.data()))
    return report_error(Error::io("create a run folder under " + base.string(), errno));
  const fs::path folder = templ;
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code e;
      fs::remove_all(dir, e);
    }
  } cleanup{folder};
  const fs::path ws = folder / "ws", tmp = folder / "tmp";
  fs::create_directories(ws / ".git/hooks", ec);
  fs::create_directories(tmp, ec);
  const fs::path outside_sock = folder / "outside.sock";
  const std::string abstract_name = "parallex-check-" + std::to_string(::getpid());
  auto listen_unix = [](const std::string& path, bool abstract) {
    int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un u{};
    u.sun_family = AF_UNIX;
    std::memcpy(u.sun_path + (abstract ? 1 : 0), path.data(), path.size());
    const auto len =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + (abstract ? 1 : 0) + path.size());
    ::bind(s, reinterpret_cast<sockaddr*>(&u), len);
    ::listen(s, 4);
    return UniqueFd(s);
  };
  UniqueFd l1 = listen_unix(outside_sock.string(), false), l2 = listen_unix(abstract_name, true);
  const fs::path home = user_home();
  const fs::path canary = home / ("parallex-check-canary-" + std::to_string(::getpid()));

  std::error_code e2;
  const fs::path self = fs::canonical("/proc/self/exe", e2);
  PolicyOptions po;
  po.in = ws.string();
  po.grants.push_back(self.string() + ":ro");
  PrepareContext context;
  context.temp_dir = tmp;
  auto prepared = prepare_policy(po, context);
  if (!prepared) return report_error(prepared.error());
  const auto& policy = prepared.value().policy;

  const std::vector<Way> ways = {
      {"read a secret (~/.ssh)", "read", (home / ".ssh/id_ed25519").string()},
      {"read a secret (/etc/shadow)", "read", "/etc/shadow"},
      {"write outside the run folder (~)", "write", canary.string()},
      {"write .git/hooks", "write", (ws / ".git/hooks/pre-commit").string()},
      {"connect to 1.1.1.1:443", "connect-ip", ""},
      {"DNS query to 8.8.8.8", "dns", ""},
      {"signal an outside process (the seal's init)", "signal", "1"},
      {"signal the supervisor (host pid)", "signal", std::to_string(::getpid())},
      {"ptrace an outside process", "ptrace", "1"},
      {"connect to an outside unix socket", "unix", outside_sock.string()},
      {"connect to an outside abstract socket", "abstract", abstract_name},
      {"inject a keystroke (TIOCSTI)", "tiocsti", ""},
      {"inject a keystroke (TIOCSTI | 1<<32)", "tiocsti-high", ""},
      {"open a raw packet socket (AF_PACKET)", "packet-socket", ""},
  };
  int open_ways = 0;
  nlohmann::json rows = nlohmann::json::array();
  if (!o.json) std::printf("%-46s %-9s %s\n", "way out", "expected", "result");
  for (const auto& way : ways) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return report_error(Error::io("pipe", errno));
    seal::LaunchSpec spec;
    spec.policy = &policy;
    spec.executable = self;
    spec.argv = {"parallex", "check", "--probe", way.probe, "--probe-arg", way.arg};
    spec.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", home.string()}};
    spec.allow_weaker_seal = o.allow_weaker;
    // The probe's stdout is our pipe (launch passes fds 0-2 through).
    const int saved = ::dup(STDOUT_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    auto process = seal::spawn(spec);
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
    ::close(out[1]);
    if (!process) {
      ::close(out[0]);
      return report_error(process.error());
    }
    auto result = seal::wait(process.value());
    std::string token;
    char buf[256];
    ssize_t n;
    while ((n = ::read(out[0], buf, sizeof buf)) > 0) token.append(buf, static_cast<std::size_t>(n));
    ::close(out[0]);
    while (!token.empty() && (token.back() == '\n' || token.back() == ' ')) token.pop_back();
    if (!result)
      token = "seal failed: " + result.error().message;
    else if (token.empty())
      token = "no answer (exit " + std::to_string(result.value().exit_code) + ")";
    const bool held =
        token != "OPEN" && token.rfind("seal failed", 0) != 0 && token.rfind("no answer", 0) != 0;
    if (!held) ++open_ways;
    // Where the seal told the supervisor what it refused (seccomp), say so.
    const std::string recorded = result ? result.value().refusals.summary() : std::string();
    if (o.json)
      rows.push_back({{"way_out", way.what},
                      {"expected", "denied"},
                      {"result", token},
                      {"held", held},
                      {"recorded", recorded}});
    else
      std::printf("%-46s %-9s %s%s%s\n", way.what.c_str(), "denied",
                  held ? "denied: " : "OPEN: ", token.c_str(),
                  recorded.empty() ? "" : ("  [recorded: " + recorded + "]").c_str());
  }
  if (fs::exists(canary, ec)) {
    ++open_ways;
    fs::remove(canary, ec);
    std::printf("the canary %s was created on the host\n", canary.c_str());
  }
  if (o.json)
    print_json({{"ways_out", rows}, {"open", open_ways}});
  else
    std::printf("%s\n", open_ways == 0 ? "Every way out held." : "SOME WAYS OUT ARE OPEN.");
  return open_ways == 0 ? 0 : 1;
}

int check(const Options& o) {
  if (!o.probe.empty()) {
    std::printf("%s\n", run_probe(o.probe, o.probe_arg).c_str());
    return 0;
  }
  if (o.apparmor_profile) {
    std::error_code ec;
    std::fputs(seal::apparmor_profile_for(fs::read_symlink("/proc/self/exe", ec)).c_str(), stdout);
    return 0;
  }
  if (o.sealed) return sealed(o);
  const auto guarantees = seal::detect_guarantees();
  const auto recording = seal::detect_refusal_recording();
  bool required_missing = false;
  auto enforced = [&](const char* id) {
    for (const auto& g : guarantees)
      if (g.id == id) return g.enforced;
    return false;
  };
  for (const auto& g : guarantees) required_missing |= g.required && !g.enforced;
  const auto environment = seal::detect_environment(enforced("namespaces.mount"),
                                                    seal::landlock::abi_version(), enforced("cgroup2"));
#ifdef PX_HAVE_SUPERVISOR
  const auto tracking = supervisor::probe_tracking();
  nlohmann::json kill_switch{{"mechanism", supervisor::to_string(tracking.mechanism)},
                             {"description", tracking.description},
                             {"cannot_catch", tracking.cannot_catch}};
#else
  nlohmann::json kill_switch{{"mechanism", "none"},
                             {"description", "this build of Parallex has no supervisor"},
                             {"cannot_catch", "every process: runs are not tracked"}};
#endif
  if (o.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& g : guarantees)
      list.push_back({{"id", g.id},
                      {"guarantee", g.name},
                      {"enforced", g.enforced},
                      {"required", g.required},
                      {"detail", g.detail}});
    nlohmann::json recorded = nlohmann::json::array();
    for (const auto& g : recording)
      recorded.push_back({{"id", g.id}, {"what", g.name}, {"recorded", g.enforced}, {"detail", g.detail}});
    print_json({{"platform", "linux"},
                {"environment",
                 {{"kind", environment.kind},
                  {"name", environment.name},
                  {"supported", environment.supported},
                  {"costs", environment.costs}}},
                {"landlock_abi", seal::landlock::abi_version()},
                {"guarantees", list},
                {"refusals_recorded", recorded},
                {"kill_switch", kill_switch},
                {"ready", !required_missing}});
  } else {
    utsname u{};
    ::uname(&u);
    std::printf("Environment: %s%s\n", environment.name.c_str(),
                environment.costs.empty() ? "; it costs the seal nothing" : "");
    for (const auto& cost : environment.costs) std::printf("  costs: %s\n", cost.c_str());
    std::printf("Seal guarantees on this machine (Linux %s, Landlock ABI %d):\n", u.release,
                seal::landlock::abi_version());
    for (const auto& g : guarantees)
      std::printf(
          "  %-8s %s\n           %s%s\n", g.enforced ? "enforced" : "MISSING", g.name.c_str(),
          g.detail.c_str(),
          !g.enforced && g.required ? " [required: `parallex run` refuses without --allow-weaker-seal]" : "");
    std::printf("What a run records of the seal's refusals:\n");
    for (const auto& g : recording)
      std::printf("  %-8s %s\n           %s\n", g.enforced ? "recorded" : "NOT", g.name.c_str(),
                  g.detail.c_str());
    std::printf("Kill switch (process tracking): %s\n           %s\n",
                kill_switch["description"].get<std::string>().c_str(),
                kill_switch["cannot_catch"].get<std::string>().c_str());
    std::printf("%s\n", required_missing ? "Some required guarantees are missing."
                                         : "Every required guarantee is enforced.");
  }
  return required_missing ? 1 : 0;
}

Action setup(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<Options>();
  app.add_flag("--json", o->json, "Print JSON");
  app.add_flag("--sealed", o->sealed, "Run a real sealed run and try each way out from inside it");
  app.add_flag("--allow-weaker-seal", o->allow_weaker, "With --sealed: run even if a guarantee is missing");
  app.add_flag("--apparmor-profile", o->apparmor_profile,
               "Print an AppArmor profile that lets this executable create user namespaces, and nothing more "
               "(for Ubuntu's restriction; the package installs its own)");
  app.add_option("--probe", o->probe)->group("");
  app.add_option("--probe-arg", o->probe_arg)->group("");
  return [o] { return check(*o); };
}

}  // namespace

PARALLEX_COMMAND("check", "Show what the seal guarantees on this machine; --sealed tries the ways out", 25,
                 setup);

}  // namespace px::cli
