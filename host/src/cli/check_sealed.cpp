#include "cli/check_sealed.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cli/output.hpp"
#include "cli/run_command.hpp"
#include "common/paths.hpp"
#include "common/temp_dir.hpp"
#include "common/unique_fd.hpp"
#include "policy/policy.hpp"

namespace px::cli {

namespace {

// ---- probes: run inside the seal, each answers one token (an errno name, OPEN, EMPTY)

std::string errno_token(int e) {
  const char* name = ::strerrorname_np(e);
  return name ? name : "E" + std::to_string(e);
}
std::string err() {
  return errno_token(errno);
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
      out = e == 0 ? "OPEN" : errno_token(e);
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
  if (name == "fork-past-the-limit") {
    // Children that wait (each holds a slot) until fork fails or `arg` exist:
    // the run's process limit answers EAGAIN long before.
    const long cap = std::stol(arg);
    int hold[2];
    if (::pipe2(hold, O_CLOEXEC) != 0) return err();
    long made = 0;
    int failed = 0;
    for (; made < cap; ++made) {
      const pid_t child = ::fork();
      if (child < 0) {
        failed = errno;
        break;
      }
      if (child == 0) {
        char b;
        ::close(hold[1]);
        (void)!::read(hold[0], &b, 1);
        ::_exit(0);
      }
    }
    ::close(hold[1]);
    ::close(hold[0]);
    while (::wait(nullptr) > 0 || errno == EINTR) {
    }
    return made >= cap ? "OPEN" : errno_token(failed);
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

// The name a probe's process has, so the seal's record of what it refused
// (which names the process) says which way out it was.
std::string probe_process_name(std::size_t index) {
  return "px-probe-" + std::to_string(index);
}

// One probe in a child of its own: what one probe does (a successful
// ptrace, a signal) cannot change what the next one finds.
std::string probe_in_child(std::size_t index, const std::string& name, const std::string& arg) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return err();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(out[0]);
    ::prctl(PR_SET_NAME, probe_process_name(index).c_str(), 0, 0, 0);
    const std::string token = run_probe(name, arg);
    [[maybe_unused]] const ssize_t n = ::write(out[1], token.data(), token.size());
    ::_exit(0);
  }
  ::close(out[1]);
  std::string token;
  char buf[64];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0) token.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  if (pid > 0) ::waitpid(pid, nullptr, 0);
  return token.empty() ? "no answer" : token;
}

struct Way {
  std::string what, probe, arg;
};

UniqueFd listen_unix(const std::string& path, bool abstract) {
  UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un u{};
  u.sun_family = AF_UNIX;
  std::memcpy(u.sun_path + (abstract ? 1 : 0), path.data(), std::min(path.size(), sizeof u.sun_path - 2));
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + (abstract ? 1 : 0) + path.size());
  // A socket that did not come up would make its way out look refused.
  if (path.size() > sizeof u.sun_path - 2) {
    errno = ENAMETOOLONG;
    return UniqueFd();
  }
  if (!s || ::bind(s.get(), reinterpret_cast<sockaddr*>(&u), len) != 0 || ::listen(s.get(), 4) != 0)
    return UniqueFd();
  return s;
}

}  // namespace

int run_probes(const std::vector<std::string>& probes, const std::string& results) {
  std::ofstream out(results, std::ios::trunc);
  if (!out) return 1;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const auto colon = probes[i].find(':');
    const std::string name = probes[i].substr(0, colon);
    const std::string arg = colon == std::string::npos ? "" : probes[i].substr(colon + 1);
    out << i << " " << probe_in_child(i, name, arg) << "\n" << std::flush;
  }
  return 0;
}

int check_sealed(bool json, bool allow_weaker_seal) {
  // The scratch dir: the rest of Parallex's own state is denied to every run.
  const fs::path base = parallex_scratch_dir();
  std::error_code ec;
  fs::create_directories(base, ec);
  auto scratch = TempDir::make(base, "check-");
  if (!scratch) return report_error(scratch.error());
  const fs::path folder = scratch.value().path();
  const fs::path ws = folder / "ws";
  fs::create_directories(ws / ".git/hooks", ec);
  // A repository's config too, so the seal protects it as in a real one
  // (and says nothing of a missing one).
  std::ofstream(ws / ".git/config") << "[core]\n\trepositoryformatversion = 0\n";
  const fs::path outside_sock = folder / "outside.sock";
  const std::string abstract_name = "parallex-check-" + std::to_string(::getpid());
  const UniqueFd l1 = listen_unix(outside_sock.string(), false), l2 = listen_unix(abstract_name, true);
  if (!l1 || !l2)
    return report_error(Error::io("open the unix sockets the check tries to reach (" + outside_sock.string() +
                                      ", @" + abstract_name + ")",
                                  errno));
  const fs::path home = user_home();
  const fs::path canary = home / ("parallex-check-canary-" + std::to_string(::getpid()));
  const fs::path self = parallex_executable();

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
      // Twice the default limit: where nothing held it, the probe stops there.
      {"fork past the process limit", "fork-past-the-limit",
       std::to_string(2 * policy::ProcessLimit::kDefault)},
  };
  run::RunInputs inputs;
  inputs.kind = run::RunKind::check;
  inputs.options.in = ws.string();
  inputs.options.grants.push_back(self.string() + ":ro");
  inputs.options.allow_weaker_seal = allow_weaker_seal;
  inputs.command = {self.string(), "check", "--probe-results", (ws / "results.txt").string()};
  for (const auto& w : ways) inputs.command.push_back(w.probe + ":" + w.arg);
  inputs.host_env = {{"PATH", "/usr/bin:/bin"}, {"HOME", home.string()}};
  // What the seal recorded refusing, per way out (by the probe's process name).
  std::vector<std::string> recorded(ways.size());
  RunCommandHooks hooks;
  hooks.finished = [&recorded](const supervisor::RunResult& r) {
    if (!r.record.seal_refusals.is_object() || !r.record.seal_refusals.contains("refused")) return;
    for (const auto& item : r.record.seal_refusals["refused"])
      for (std::size_t i = 0; i < recorded.size(); ++i)
        if (item.value("process", std::string()) == probe_process_name(i))
          recorded[i] += (recorded[i].empty() ? "" : ", ") + item.value("call", std::string());
  };
  const int status = run_command(std::move(inputs), hooks);

  std::vector<std::string> tokens(ways.size());
  std::ifstream results(ws / "results.txt");
  for (std::string line; std::getline(results, line);) {
    std::istringstream in(line);
    std::size_t index = 0;
    std::string token;
    if (in >> index >> token && index < tokens.size()) tokens[index] = token;
  }
  int open_ways = 0;
  nlohmann::json rows = nlohmann::json::array();
  if (!json) std::printf("%-46s %-9s %s\n", "way out", "expected", "result");
  for (std::size_t i = 0; i < ways.size(); ++i) {
    std::string token = tokens[i];
    if (token.empty()) token = "no answer (the run exited " + std::to_string(status) + ")";
    // A write the probe saw succeed is judged on the host: a path under /tmp
    // (a home or clone there) names, inside the run, the run's own /tmp, so
    // the write can succeed there and leave the host's file untouched.
    if (token == "OPEN" && ways[i].probe == "write" && !fs::exists(ways[i].arg, ec))
      token = "VIEW-ONLY (written in the run's own /tmp; nothing on the host)";
    const bool held = token != "OPEN" && token.rfind("no answer", 0) != 0;
    if (!held) ++open_ways;
    if (json)
      rows.push_back({{"way_out", ways[i].what},
                      {"expected", "denied"},
                      {"result", token},
                      {"held", held},
                      {"recorded", recorded[i]}});
    else
      std::printf("%-46s %-9s %s%s%s\n", ways[i].what.c_str(), "denied",
                  held ? "denied: " : "OPEN: ", token.c_str(),
                  recorded[i].empty() ? "" : ("  [recorded: " + recorded[i] + "]").c_str());
  }
  if (fs::exists(canary, ec)) {
    ++open_ways;
    fs::remove(canary, ec);
    std::printf("the canary %s was created on the host\n", canary.c_str());
  }
  if (json)
    print_json({{"ways_out", rows}, {"open", open_ways}});
  else
    std::printf("%s\n", open_ways == 0 ? "Every way out held." : "SOME WAYS OUT ARE OPEN.");
  return open_ways == 0 ? 0 : 1;
}

}  // namespace px::cli
