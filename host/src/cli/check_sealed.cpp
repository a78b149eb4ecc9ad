#include "cli/check_sealed.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "backend/backend.hpp"
#include "cli/output.hpp"
#include "cli/run_command.hpp"
#include "common/paths.hpp"
#include "common/temp_dir.hpp"
#include "common/unique_fd.hpp"
#include "killswitch/pids_limit.hpp"
#include "policy/profile.hpp"
#include "probes/catalog.hpp"
#include "run/record.hpp"

namespace px::cli {

namespace {

// The name a probe's process has, so the seal's record of what it refused
// (which names the process) says which way out it was.
std::string probe_process_name(std::size_t index) {
  return "px-probe-" + std::to_string(index);
}

// One probe in a child of its own: what one probe does (a successful
// ptrace, a signal) cannot change what the next one finds.
std::string probe_in_child(std::size_t index, const std::string& name, const probes::Args& args) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return "no answer (" + probes::errno_token(errno) + ")";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(out[0]);
    ::prctl(PR_SET_NAME, probe_process_name(index).c_str(), 0, 0, 0);
    probes::Answer answer;
    const std::string token =
        probes::run(name, args, answer) ? answer.token : "no answer (no probe " + name + ")";
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

// The probes of the sealed command line: NAME ARG... groups, one after the
// other, each ended by a lone "," (no argument of check's own probes is one).
constexpr const char* kProbeEnd = ",";

struct CheckProbe {
  std::string name;
  probes::Args args;
};

std::vector<CheckProbe> parse_probes(const std::vector<std::string>& words) {
  std::vector<CheckProbe> out;
  bool next_is_name = true;
  for (const auto& w : words) {
    if (w == kProbeEnd) {
      next_is_name = true;
    } else if (next_is_name) {
      out.push_back({w, {}});
      next_is_name = false;
    } else {
      out.back().args.push_back(w);
    }
  }
  return out;
}

// The check's own run is held to fewer processes than a run's default: the
// mechanisms that hold the limit (the pids cgroup, RLIMIT_NPROC, pid_max) do
// not depend on its number, and a bomb of 4,096 processes, each a fork of
// this executable, took five seconds of a small machine's two cores.
constexpr std::uint64_t kCheckProcessLimit = 256;

policy::Profile check_limits() {
  policy::Profile profile;
  profile.name = "check --sealed";
  profile.description = "the check's own process limit";
  profile.processes = kCheckProcessLimit;
  return profile;
}

struct Way {
  std::string what;
  std::string probe;  // the catalog's name (probes/catalog.hpp)
  probes::Args args;
  // The guarantees (`parallex check --json` ids) each of which alone keeps
  // this way shut: the full seal's, then the seal without namespaces'.
  std::vector<std::string> held_by;
};

// A way's verdict: "blocked" when it held; "ESCAPED" when it was open though
// `check` calls one of its guarantees enforced here (a bug of the seal);
// "not enforced" when it was open and `check` names each of its guarantees
// MISSING (the run said so, and went on only because it was accepted);
// "not run" when the probe gave no answer.
std::string way_verdict(const std::string& token, bool held, const Way& way,
                        const std::vector<backend::Guarantee>& guarantees) {
  if (token.rfind("no answer", 0) == 0) return "not run";
  if (held) return "blocked";
  for (const auto& id : way.held_by)
    for (const auto& g : guarantees)
      if (g.id == id && g.enforced) return "ESCAPED";
  return "not enforced";
}

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

int run_probes(const std::vector<std::string>& words, const std::string& results) {
  std::ofstream out(results, std::ios::trunc);
  if (!out) return 1;
  const std::vector<CheckProbe> list = parse_probes(words);
  for (std::size_t i = 0; i < list.size(); ++i)
    out << i << " " << probe_in_child(i, list[i].name, list[i].args) << "\n" << std::flush;
  return 0;
}

int run_one_probe(const std::vector<std::string>& words) {
  // Named after the probe, so that what the seal records refusing names it,
  // not "parallex" (which a reader would take for Parallex's own doing).
  if (!words.empty()) ::prctl(PR_SET_NAME, words[0].c_str(), 0, 0, 0);
  probes::Answer answer;
  if (words.empty() || !probes::run(words[0], probes::Args(words.begin() + 1, words.end()), answer)) {
    say("check --probe needs a probe's name and its arguments" +
        (words.empty() ? std::string() : " (" + words[0] + " is not one, or takes more)") +
        "; the probes:\n" + probes::usage());
    return 2;
  }
  std::printf("%s\n", probes::result_line(answer).c_str());
  return answer.token == "OPEN" ? 0 : 1;
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

  const std::vector<std::string> files = {"namespaces.mount", "landlock.fs"};
  const std::vector<Way> ways = {
      {"read a secret (~/.ssh)", "read", {(home / ".ssh/id_ed25519").string()}, files},
      {"read a secret (/etc/shadow)", "read", {"/etc/shadow"}, files},
      {"write outside the run folder (~)", "write", {canary.string()}, files},
      // Inside the run's writable folder: only the private view makes it
      // read-only (without it, what the run wrote there is moved aside at
      // the end, never run by the host's git).
      {"write .git/hooks", "write", {(ws / ".git/hooks/pre-commit").string()}, {"namespaces.mount"}},
      {"connect to 1.1.1.1:443", "tcp", {"1.1.1.1", "443"}, {"namespaces.network", "landlock.tcp"}},
      // Without a network namespace, seccomp refuses every socket but TCP.
      {"DNS query to 8.8.8.8", "udp-dns", {"8.8.8.8"}, {"namespaces.network", "seccomp"}},
      {"signal an outside process (the seal's init)", "signal", {"1"}, {"namespaces.pid", "landlock.scopes"}},
      {"signal the supervisor (host pid)",
       "signal",
       {std::to_string(::getpid())},
       {"namespaces.pid", "landlock.scopes"}},
      {"ptrace an outside process", "ptrace", {"1"}, {"namespaces.pid", "seccomp"}},
      // Landlock does not check a unix socket's connect: only the private
      // view, where the socket is not, keeps it out of reach.
      {"connect to an outside unix socket", "unix", {outside_sock.string()}, {"namespaces.mount"}},
      {"connect to an outside abstract socket",
       "abstract",
       {abstract_name},
       {"namespaces.network", "landlock.scopes"}},
      {"inject a keystroke (TIOCSTI)", "tiocsti", {}, {"seccomp"}},
      {"inject a keystroke (TIOCSTI | 1<<32)", "tiocsti-high", {}, {"seccomp"}},
      {"open a raw packet socket (AF_PACKET)", "socket", {std::to_string(AF_PACKET)}, {"seccomp"}},
      // Well past what the loosest mechanism lets through (pid_max: the limit
      // and up to 299 more): where nothing held the limit, the probe stops there.
      {"fork past the process limit (" + std::to_string(kCheckProcessLimit) + ")",
       "fork-bomb",
       {std::to_string(4 * kCheckProcessLimit)},
       {"limits.processes"}},
  };
  run::RunInputs inputs;
  inputs.kind = run::RunKind::check;
  inputs.options.in = ws.string();
  inputs.options.grants.push_back(self.string() + ":ro");
  inputs.options.allow_weaker_seal = allow_weaker_seal;
  inputs.command = {self.string(), "check", "--probe-results", (ws / "results.txt").string()};
  for (const auto& w : ways) {
    inputs.command.push_back(w.probe);
    inputs.command.insert(inputs.command.end(), w.args.begin(), w.args.end());
    inputs.command.push_back(kProbeEnd);
  }
  inputs.host_env = {{"PATH", "/usr/bin:/bin"}, {"HOME", home.string()}};
  inputs.extra_profiles.push_back(check_limits());
  // What the seal recorded refusing, per way out (by the probe's process name).
  std::vector<std::string> recorded(ways.size());
  std::string seal_level = "none";  // the run's, as its record says; "none" when it never started
  RunCommandHooks hooks;
  hooks.finished = [&recorded, &seal_level](const supervisor::RunResult& r) {
    if (!r.record.seal_refusals) return;
    seal_level = run::to_string(r.record.seal);
    for (const auto& item : r.record.seal_refusals->refused)
      for (std::size_t i = 0; i < recorded.size(); ++i)
        if (item.process == probe_process_name(i))
          recorded[i] += (recorded[i].empty() ? "" : ", ") + item.call;
  };
  const int status = run_command(std::move(inputs), hooks);

  std::vector<std::string> tokens(ways.size());
  std::ifstream results(ws / "results.txt");
  // The rest of the line is the token: "no answer (…)" is several words.
  for (std::string line; std::getline(results, line);) {
    std::istringstream in(line);
    std::size_t index = 0;
    std::string token;
    if (in >> index >> std::ws && std::getline(in, token) && index < tokens.size()) tokens[index] = token;
  }
  // What `check` says of this machine, to judge each open way by.
  const auto guarantees =
      killswitch::seal_guarantees(backend::sealing_backend(), backend::Backend::Probe::thorough);
  int open_ways = 0, escaped = 0;
  nlohmann::json rows = nlohmann::json::array();
  if (!json) std::printf("%-46s %-9s %s\n", "way out", "expected", "result");
  for (std::size_t i = 0; i < ways.size(); ++i) {
    std::string token = tokens[i];
    if (token.empty()) token = "no answer (the run exited " + std::to_string(status) + ")";
    // A write the probe saw succeed is judged on the host: a path under /tmp
    // (a home or clone there) names, inside the run, the run's own /tmp, so
    // the write can succeed there and leave the host's file untouched.
    // Elsewhere, a file written and gone was written on the host: the seal
    // without namespaces moves what the run wrote into .git/hooks aside at
    // its end.
    const std::string path = ways[i].args.empty() ? std::string() : ways[i].args.front();
    if (token == "OPEN" && ways[i].probe == "write" && !fs::exists(path, ec))
      token = path.rfind("/tmp/", 0) == 0 ? "VIEW-ONLY (written in the run's own /tmp; nothing on the host)"
                                          : "OPEN (written; moved aside when the run ended)";
    const bool held = token.rfind("OPEN", 0) != 0 && token.rfind("no answer", 0) != 0;
    if (!held) ++open_ways;
    const std::string verdict = way_verdict(token, held, ways[i], guarantees);
    if (verdict == "ESCAPED") ++escaped;
    if (json)
      rows.push_back({{"way_out", ways[i].what},
                      {"probe", ways[i].probe},
                      {"expected", "denied"},
                      {"result", token},
                      {"held", held},
                      {"held_by", ways[i].held_by},
                      {"verdict", verdict},
                      {"recorded", recorded[i]}});
    else
      std::printf("%-46s %-9s %s%s%s%s\n", ways[i].what.c_str(), "denied",
                  held ? "denied: " : "OPEN: ", token.c_str(),
                  verdict == "not enforced" ? "  [not enforced here: `parallex check` names it MISSING]" : "",
                  recorded[i].empty() ? "" : ("  [recorded: " + recorded[i] + "]").c_str());
  }
  if (fs::exists(canary, ec)) {
    ++open_ways;
    fs::remove(canary, ec);
    std::printf("the canary %s was created on the host\n", canary.c_str());
  }
  if (json)
    print_json({{"ways_out", rows}, {"open", open_ways}, {"escaped", escaped}, {"seal", seal_level}});
  else
    std::printf("%s\n", open_ways == 0 ? "Every way out held." : "SOME WAYS OUT ARE OPEN.");
  return open_ways == 0 ? 0 : 1;
}

}  // namespace px::cli
