#include "backend/seal/launch.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>

#include "backend/seal/audit_log.hpp"
#include "backend/seal/cgroup_spawn.hpp"
#include "backend/seal/landlock.hpp"
#include "backend/seal/mounts.hpp"
#include "backend/seal/net.hpp"
#include "backend/seal/net_capture.hpp"
#include "backend/seal/new_state.hpp"
#include "backend/seal/pidns.hpp"
#include "backend/seal/process_limit.hpp"
#include "backend/seal/seal_protocol.hpp"
#include "backend/seal/seccomp.hpp"
#include "backend/seal/sys.hpp"
#include "backend/seal/userns.hpp"
#include "common/background.hpp"
#include "common/paths.hpp"

namespace px::seal {

namespace {

// Everything the child needs, computed in the supervisor before fork; the
// seccomp program comes later, with the supervisor's go-ahead.
struct Prepared {
  mounts::ViewPlan view;
  landlock::Plan landlock_view;  // paths as the command sees them in the view
  landlock::Plan landlock_host;  // the weaker seal without namespaces: host paths
  seccomp::Program seccomp;      // from the supervisor's go-ahead (`released`)
  // With a weaker seal accepted: the program for a run left without a network
  // namespace (it also refuses IPv4/IPv6 sockets other than TCP), loaded
  // instead when the namespaces cannot be made.
  std::optional<seccomp::Program> seccomp_host_network;
  bool released = false;
  fs::path executable;
  fs::path cwd;
  fs::path temp_dir;
  std::vector<std::string> argv;
  EnvMap env;
  bool allow_weaker_seal = false;
  bool want_proxy = false;
  // seccomp lets ptrace through, for Landlock to scope it to the run: a
  // command that ends up without a Landlock domain loads a second filter.
  bool ptrace_in_run = false;
  bool timing = false;  // PARALLEX_SEAL_TIMING=1: each step's duration as a note
  // The run's broker put files in the view (LaunchRequest::view_files);
  // `masked` names those that stand in for a file holding a secret.
  bool broker_files = false;
  std::vector<std::string> masked;
  // The process limit (the policy's process_limit()): which of the seal's own
  // mechanisms to set, which were set, and whether the supervisor's cgroup
  // holds it already. `pids_cgroup` is entered first (v1 pids hierarchy).
  std::uint64_t max_processes = 0;
  bool limit_held_outside = false;
  bool want_rlimit = false, want_pid_max = false;
  bool rlimit_set = false, rlimit_user_set = false, pid_max_set = false;
  int pids_cgroup = -1;
};

// The most descriptors one control message carries (the network hand-off:
// proxy, channel, two DNS sockets per family).
constexpr std::size_t kMaxPassedFds = 8;

double now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// ---- control socket: one SOCK_SEQPACKET message per event (seal_protocol.hpp)

bool send_message(int sock, SealMessage kind, const std::string& text, const std::vector<int>& fds) {
  std::string buf(1, static_cast<char>(kind));
  buf += text;
  iovec iov{buf.data(), buf.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * kMaxPassedFds)] = {};
  if (!fds.empty()) {
    if (fds.size() > kMaxPassedFds) return false;
    msg.msg_control = cbuf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  return ::sendmsg(sock, &msg, MSG_NOSIGNAL) >= 0;
}

bool send_message(int sock, SealMessage kind, const std::string& text, int fd = -1) {
  return send_message(sock, kind, text, fd >= 0 ? std::vector<int>{fd} : std::vector<int>{});
}

// Returns false at EOF or error. `fds` receives the passed descriptors, if any
// (without `fds` they are closed).
bool receive_message(int sock, std::string& out, std::vector<UniqueFd>* fds, pid_t* sender = nullptr) {
  // One buffer per thread, never zeroed: recvmsg writes what it reads. Zeroed
  // (per message, and later once per thread) it touched all 64 of its pages,
  // a page fault each, in every process that received a message: the seal's
  // init and the supervisor's reader, every run.
  constexpr std::size_t kBufferSize = 256 * 1024;
  static thread_local const std::unique_ptr<char[]> buf = std::make_unique_for_overwrite<char[]>(kBufferSize);
  iovec iov{buf.get(), kBufferSize};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * kMaxPassedFds) + CMSG_SPACE(sizeof(ucred))] = {};
  msg.msg_control = cbuf;
  msg.msg_controllen = sizeof cbuf;
  ssize_t n;
  do n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  out.assign(buf.get(), static_cast<std::size_t>(n));
  if (fds) fds->clear();
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int passed = -1;
        std::memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof passed);
        if (fds)
          fds->emplace_back(passed);
        else
          ::close(passed);
      }
    } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS && sender) {
      ucred cred{};
      std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
      *sender = cred.pid;  // translated by the kernel into the receiver's pid namespace
    }
  }
  return true;
}

[[noreturn]] void fail(int control, const Error& error) {
  send_message(control, SealMessage::error, encode_error(error));
  ::_exit(kSetupFailed);
}

template <class T>
T value_or_fail(int control, Result<T> r) {
  if (!r) fail(control, r.error());
  return std::move(r).value();
}

void step(int control, const Status& s) {
  if (!s) fail(control, s.error());
}

// The supervisor's go-ahead: its own set-up is done (the kill switch's socket
// and watchdog, the protected files' watch, the record), and it carries the
// seccomp program the supervisor compiled meanwhile.
Status take_go(const std::string& message, Prepared& p) {
  PX_TRY_ASSIGN(p.seccomp, seccomp::decode(std::string_view(message).substr(1)));
  p.released = true;
  return ok();
}

// In the init, last before the command's fork: nothing of the command runs
// before the supervisor is ready to pause, kill and sweep it. An end of the
// socket instead (the supervisor gave up, or died) ends the seal.
Status await_go(int control, Prepared& p) {
  std::string message;
  while (!p.released) {
    if (!receive_message(control, message, nullptr))
      return Error::conflict("the supervisor ended the run before its command started");
    if (!message.empty() && message[0] == static_cast<char>(SealMessage::go)) PX_TRY(take_go(message, p));
  }
  return ok();
}

// In the init, before the command exists: the run's network is made inside
// its network namespace and handed to the supervisor (the proxy's socket;
// with a namespace also the DNS sockets, the synthetic ranges routed to lo and
// the socket channel, whose other end the init keeps: `channel`). The
// supervisor's answer holds the variables that point the command at the proxy.
Status hand_off_network(int control, Prepared& p, landlock::Plan& plan, bool ns, UniqueFd& channel,
                        net::SyntheticRanges& ranges, std::vector<run::Notice>& notes) {
  PX_TRY_ASSIGN(auto listener, net::listen_on_loopback());
  auto& [fd, port] = listener;
  std::string text = std::to_string(port);
  std::vector<int> fds{fd.get()};
  std::optional<net::CaptureSockets> capture;
  if (ns) {
    auto opened = net::open_capture();
    if (!opened) return opened.error();
    capture.emplace(std::move(opened).value());
    text += "\n" + net::format_ranges(capture->ranges) + "\n" + std::to_string(capture->dns_udp.size()) +
            " " + std::to_string(capture->dns_tcp.size());
    fds.push_back(capture->channel_theirs.get());
    for (const auto& u : capture->dns_udp) fds.push_back(u.get());
    for (const auto& t : capture->dns_tcp) fds.push_back(t.get());
    for (const auto& n : capture->notes) notes.push_back({run::NoticeKind::seal, n});
  }
  if (!send_message(control, SealMessage::proxy, text, fds))
    return sys_error("send the run's network sockets");
  // The supervisor owns them now; the command never holds any of them.
  fd.reset();
  if (capture) {
    channel = std::move(capture->channel_mine);
    ranges = capture->ranges;
    capture.reset();
  }
  // While the supervisor answers, it may already ask for sockets (the host
  // ports it mirrors into the run): served now, so that they exist before the
  // command does. Its go-ahead may come first: kept for later.
  std::string reply;
  for (;;) {
    while (channel) {
      pollfd waiting[2] = {{control, POLLIN, 0}, {channel.get(), POLLIN, 0}};
      if (::poll(waiting, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return sys_error("poll the control socket");
      }
      if (waiting[0].revents != 0) break;
      if (waiting[1].revents != 0 && !net::serve_socket_request(channel.get(), ranges)) break;
    }
    if (!receive_message(control, reply, nullptr))
      return Error::internal("the supervisor did not answer the proxy hand-off");
    if (reply.empty() || reply[0] != static_cast<char>(SealMessage::go)) break;
    PX_TRY(take_go(reply, p));
  }
  if (reply.empty() || reply[0] != static_cast<char>(SealMessage::proxy_env))
    return Error::internal("the proxy refused the socket: " + reply.substr(1));
  for (std::size_t pos = 1; pos < reply.size();) {
    const std::size_t end = reply.find('\0', pos);
    const std::string item = reply.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (const auto eq = item.find('='); eq != std::string::npos)
      p.env[item.substr(0, eq)] = item.substr(eq + 1);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  // Landlock limits TCP only where there is no network namespace (the weaker
  // seal): there the proxy is the only port the command may connect to.
  if (plan.tcp_connect_ports) plan.tcp_connect_ports->push_back(port);
  return ok();
}

// The command's argv and environment as execve takes them, made by the init
// before the command's process exists (that process shares the init's memory
// until its execve: it must not build them).
struct ExecArgs {
  std::vector<std::string> env_items;
  std::vector<char*> envp;
  std::vector<char*> argv;

  explicit ExecArgs(Prepared& p) {
    for (const auto& [k, v] : p.env) env_items.push_back(k + "=" + v);
    for (auto& e : env_items) envp.push_back(e.data());
    envp.push_back(nullptr);
    for (auto& a : p.argv) argv.push_back(a.data());
    argv.push_back(nullptr);
  }
};

// The command's process: the last steps, in this order, then execve. After
// close_range every inherited fd but 0-2 closes at exec; the capability drop
// and no_new_privs come before Landlock and seccomp, and seccomp is last.
// It runs in the init's memory (vfork, below): each step is a system call on
// this process's own state (its descriptors, credentials, filters, signal
// dispositions: Parallex installs no handler that could run here). What it
// allocates (a message's bytes, an error's text) comes from the init's heap
// while the init is suspended, single-threaded, as after any vfork.
[[noreturn]] void exec_command(Prepared& p, ExecArgs& args, int control, landlock::Ruleset* ruleset) {
  for (int sig : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_DFL);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  if (::chdir(p.cwd.c_str()) != 0) fail(control, sys_error("chdir " + p.cwd.string() + " (the run folder)"));
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
    fail(control, sys_error("close_range(3, ~0, CLOEXEC)"));
  step(control, userns::drop_capabilities());
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(control, sys_error("prctl(PR_SET_NO_NEW_PRIVS)"));
  if (ruleset) step(control, landlock::restrict_self(*ruleset));
  auto loaded = seccomp::load(p.seccomp);
  if (!loaded)
    fail(control, Error::unsupported(
                      "refusing to run: the seal's seccomp filter cannot be installed here (" +
                      loaded.error().message +
                      "), and no seal goes without it, weaker or not. The container's seccomp profile must "
                      "let the seccomp call through (the defaults of Docker, Podman and Kubernetes' "
                      "RuntimeDefault do), and the kernel needs CONFIG_SECCOMP_FILTER"));
  seccomp::Loaded filter = std::move(loaded.value());
  if (!ruleset && p.ptrace_in_run) step(control, seccomp::refuse_ptrace());
  if (!filter.not_collected.empty()) send_message(control, SealMessage::uncollected, filter.not_collected);
  // The listener must not cross execve: whoever holds it can let refused calls
  // through. The message also tells the supervisor (by its credentials) which
  // process created the run's Landlock domain.
  if (!send_message(control, SealMessage::exec, "", filter.listener.get()))
    fail(control, sys_error("hand the seccomp listener to the supervisor"));
  filter.listener.reset();
  ::execve(p.executable.c_str(), args.argv.data(), args.envp.data());
  const int err = errno;
  send_message(control, SealMessage::exec_failed,
               std::to_string(err) + " " + sys_error("execve " + p.executable.string(), err).message);
  ::_exit(err == ENOENT ? 127 : 126);
}

// In the init, before the command exists: the process limit holds by at
// least one mechanism (the supervisor's pids cgroup, RLIMIT_NPROC set by the
// outer process, the pid namespace's pid_max), or the seal fails closed
// unless a weaker seal was accepted (then the run's seal is weaker: a required
// guarantee is missing). Tells the supervisor which of its own it set.
Status hold_process_limit(int control, const Prepared& p) {
  if (p.max_processes == 0) return ok();
  std::string set;
  if (p.rlimit_set) set = process_limit::kRlimit;
  if (p.rlimit_user_set) set = process_limit::kRlimitUser;
  if (p.pid_max_set) set += std::string(set.empty() ? "" : ",") + process_limit::kPidMax;
  if (!set.empty()) send_message(control, SealMessage::limits, set);
  if (!set.empty() || p.limit_held_outside) return ok();
  const std::string why =
      "nothing holds the run's process limit of " + std::to_string(p.max_processes) +
      " here: no pids cgroup the supervisor may write, " +
      std::string(::geteuid() == 0 ? "RLIMIT_NPROC does not bind the host's root"
                                   : "RLIMIT_NPROC was not set (Linux 5.14 counts it per user namespace)") +
      ", and pid_max of a pid namespace needs Linux 6.14 (see `parallex check`)";
  if (!p.allow_weaker_seal) return Error::unsupported(why);
  send_message(control, SealMessage::weakened, "no process limit: " + why);
  return ok();
}

// THE ordered function: pid 1 of the seal applies the steps, one a line.
[[noreturn]] void run_init(Prepared& p, int control, userns::Mode mode, int parent_alive) {
  const bool ns = mode != userns::Mode::none;
  std::vector<run::Notice> notes;
  landlock::Plan plan = ns ? p.landlock_view : p.landlock_host;
  double t = now_ms();
  auto lap = [&](const char* what) {
    if (!p.timing) return;
    const double n = now_ms();
    notes.push_back({run::NoticeKind::timing, std::string(what) + " " + std::to_string(n - t) + " ms"});
    t = n;
  };
  step(control, pidns::die_with_parent(parent_alive));
  if (ns) step(control, mounts::enter_private_namespace());
  lap("mount namespace");
  if (ns) step(control, net::enter_namespace_with_loopback());
  if (ns)
    if (auto low = net::allow_every_port(); !low)
      notes.push_back({run::NoticeKind::seal,
                       "servers of the run cannot bind ports below 1024 (" + low.error().message + ")"});
  lap("network namespace");
  UniqueFd channel;  // the socket channel: served until the command ends
  net::SyntheticRanges ranges;
  if (p.want_proxy) step(control, hand_off_network(control, p, plan, ns, channel, ranges, notes));
  lap("network hand-off");
  UniqueFd view = ns ? value_or_fail(control, mounts::build_view(p.view, notes)) : UniqueFd();
  if (!ns && !plan.tcp_connect_ports)
    notes.push_back({run::NoticeKind::weaker_seal,
                     "Local servers for every port, without a network namespace: TCP reaches any address on "
                     "any port (Landlock tells ports apart, not this machine from the internet); name the "
                     "ports (--local-servers=3000,5432) to keep the rest to the proxy"});
  if (!ns && p.broker_files) {
    std::string masked;
    for (const auto& m : p.masked) masked += (masked.empty() ? "" : ", ") + m;
    notes.push_back(
        {run::NoticeKind::weaker_seal,
         "no private view: the run's CA bundle is not in place (terminated hosts fail TLS)" +
             (masked.empty() ? std::string()
                             : "; the run can read the secret in " + masked + ", not the placeholder")});
  }
  lap("view");
  if (ns)
    if (auto proc = pidns::mount_proc(view.get()); !proc) {
      const std::string why = "no /proc of the run's own (" + proc.error().message +
                              "): this container masks parts of /proc; unmask it (docker: --security-opt "
                              "systempaths=unconfined; podman: --security-opt unmask=ALL; Kubernetes: "
                              "procMount: Unmasked)";
      if (!p.allow_weaker_seal) fail(control, Error::unsupported(why + ", or pass --allow-weaker-seal"));
      step(control, pidns::bind_outer_proc(view.get()));
      send_message(control, SealMessage::weakened,
                   why +
                       ". The run's /proc is the container's: it lists the container's processes "
                       "(Landlock keeps them out of the run's reach)");
    }
  lap("proc");
  if (ns && p.want_pid_max) {
    if (auto set = process_limit::limit_pid_numbers(view.get(), p.max_processes))
      p.pid_max_set = true;
    else
      notes.push_back({run::NoticeKind::seal, "the run's pid_max could not be set: " + set.error().message});
  }
  step(control, hold_process_limit(control, p));
  lap("process limit");
  if (ns) step(control, mounts::enter_view(std::move(view)));
  lap("pivot");
  auto ruleset = landlock::prepare(plan);
  lap("landlock ruleset");
  if (!ruleset && !p.allow_weaker_seal) fail(control, ruleset.error());
  // The floor of an accepted weaker seal (run/stage.cpp says it before the
  // run; here, for namespaces that failed only now): without the view and
  // without Landlock, nothing would keep the run out of ungranted files.
  if (!ruleset && !ns)
    fail(control, Error::unsupported(
                      "refusing to run, even with the weaker seal accepted: neither Landlock (" +
                      ruleset.error().message +
                      ") nor namespaces here, so nothing would keep the run out of the files it was not "
                      "granted. Landlock needs landlock in the kernel's lsm= boot parameter and a seccomp "
                      "profile that lets the landlock_* calls through; or give the container the full seal's "
                      "settings (see `parallex check`)"));
  if (!ruleset) send_message(control, SealMessage::weakened, "no Landlock (" + ruleset.error().message + ")");
  if (ruleset) notes.insert(notes.end(), ruleset.value().notes.begin(), ruleset.value().notes.end());
  step(control, await_go(control, p));
  if (!ns && p.seccomp_host_network) p.seccomp = std::move(*p.seccomp_host_network);
  lap("go-ahead");
  for (const auto& n : notes) send_message(control, SealMessage::notice, encode_notice(n));

  // vfork: the command's process borrows the init's memory until its execve
  // instead of copying the whole address space (every page of it forked from
  // the supervisor) only to drop the copy at once. The init is single-threaded
  // and suspended meanwhile; the child changes only its own process state.
  ExecArgs args(p);
  const pid_t command = ::vfork();
  if (command < 0) fail(control, sys_error("vfork the command"));
  if (command == 0) exec_command(p, args, control, ruleset ? &ruleset.value() : nullptr);
  if (ruleset) ruleset.value().fd.reset();
  // The command's own wait status goes to the supervisor: an exit code alone
  // cannot tell "exit 137" from "killed by SIGKILL".
  const int channel_fd = channel.get();
  const int status = pidns::reap_until_status(command, channel_fd,
                                              [&] { return net::serve_socket_request(channel_fd, ranges); });
  send_message(control, SealMessage::exited, std::to_string(status));
  ::close(control);
  ::_exit(pidns::exit_code(status));
}

// The supervisor's child: enters the user and pid namespaces, forks pid 1, and
// passes its exit status up. It ignores SIGINT/SIGQUIT, so Ctrl-C reaches the
// command (same process group) without tearing the seal down.
[[noreturn]] void run_outer(Prepared& p, int control, pid_t supervisor) {
  // Before anything else, as for the cgroup v2 (born in it): every process
  // the run makes from here on counts against the v1 pids cgroup's pids.max.
  if (p.pids_cgroup >= 0) {
    const int procs = ::openat(p.pids_cgroup, "cgroup.procs", O_WRONLY | O_CLOEXEC);
    if (procs < 0 || ::write(procs, "0", 1) != 1)
      fail(control, sys_error("enter the run's pids cgroup (v1)"));
    ::close(procs);
  }
  // The seal keeps nothing of the supervisor but 0-2 and the control socket:
  // fork copied every descriptor it held (the run's cgroup directory, the
  // kill switch's socket, the audit log's subscription, log files), and the
  // init never execs, so close-on-exec would never close them.
  if (control > 3) ::close_range(3, static_cast<unsigned>(control) - 1, 0);
  ::close_range(static_cast<unsigned>(control) + 1, ~0U, 0);
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGQUIT, SIG_IGN);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || ::getppid() != supervisor) ::_exit(kSetupFailed);
  userns::Mode mode = userns::Mode::none;
  if (auto entered = userns::enter()) {
    mode = entered.value();
  } else if (p.allow_weaker_seal) {
    send_message(
        control, SealMessage::weakened,
        "no namespaces (" + entered.error().message +
            "): no private view, network or pid namespace; denied paths inside read grants are kept out by "
            "Landlock (their names stay listable), denied paths inside writable grants are NOT, nor are unix "
            "sockets outside the grants (Landlock does not check a connect to one)");
    // The policy names the run's temp dir /tmp, where the view puts it
    // (TMPDIR, the tool caches: npm's, pip's): without the view, the same
    // folder is reached by its host path, and the host's /tmp is not the run's.
    // (A value may hold it after an '=': MAVEN_OPTS=-Dmaven.repo.local=/tmp/...)
    for (auto& [name, value] : p.env) {
      if (value == "/tmp" || value.rfind("/tmp/", 0) == 0) value = p.temp_dir.string() + value.substr(4);
      for (auto at = value.find("=/tmp/"); at != std::string::npos; at = value.find("=/tmp/", at + 1))
        value.replace(at + 1, 4, p.temp_dir.string());
    }
  } else {
    fail(control, entered.error());
  }
  if (mode == userns::Mode::user_namespace && p.want_rlimit) {
    if (auto set = process_limit::limit_nproc(p.max_processes))
      p.rlimit_set = true;  // the init, forked below, sees it in its copy
    else
      send_message(control, SealMessage::notice, encode_notice({run::NoticeKind::seal, set.error().message}));
  } else if (mode == userns::Mode::none && p.max_processes > 0 && process_limit::user_rlimit_holds(false)) {
    // No namespace of the run's own: the user's own RLIMIT_NPROC, above the
    // tasks the user has now (process_limit.hpp). The run cannot raise it.
    if (auto set = process_limit::limit_nproc_of_user(p.max_processes))
      p.rlimit_user_set = true;
    else
      send_message(control, SealMessage::notice, encode_notice({run::NoticeKind::seal, set.error().message}));
  }
  if (mode == userns::Mode::root_only)
    send_message(
        control, SealMessage::notice,
        encode_notice({run::NoticeKind::weaker_seal,
                       "no user namespace (off in this kernel): running as root with every capability "
                       "dropped"}));
  int alive[2];
  if (::pipe2(alive, O_CLOEXEC) != 0) fail(control, sys_error("pipe2"));
  const pid_t init = ::fork();
  if (init < 0) fail(control, sys_error("fork the seal's init"));
  if (init == 0) {
    ::close(alive[1]);
    run_init(p, control, mode, alive[0]);
  }
  ::close(alive[0]);
  ::close(control);
  int status = 0;
  while (::waitpid(init, &status, 0) < 0 && errno == EINTR) {
  }
  ::_exit(pidns::exit_code(status));
}

// spawn_in_cgroup's helper, long exited by the time this is called.
void reap_helper(pid_t& helper) {
  if (helper <= 0) return;
  while (::waitpid(helper, nullptr, 0) < 0 && errno == EINTR) {
  }
  helper = 0;
}

// Opens the run's reader of Landlock's audit records, or says why there is none.
std::string landlock_log_for_run(std::optional<audit::LandlockLog>& log) {
  const std::string prefix = "Landlock refusals (files, TCP) are not recorded: ";
  if (landlock::abi_version() < 7) return prefix + "Landlock reports them from ABI 7 on";
  switch (audit::kernel_audit()) {
    case audit::KernelAudit::off:
      return prefix +
             "Landlock reports them only to the kernel audit log, which is off (auditctl -e 1 turns it on)";
    case audit::KernelAudit::unknown:
      return prefix +
             "Landlock reports them only to the kernel audit log, which needs root to read "
             "(CAP_AUDIT_CONTROL, CAP_AUDIT_READ)";
    case audit::KernelAudit::on:
      break;
  }
  auto subscribed = audit::LandlockLog::subscribe();
  if (!subscribed) return prefix + subscribed.error().message;
  log.emplace(std::move(subscribed).value());
  return {};
}

// Landlock only adds rights, so without a view to hide it, a deny inside a
// read grant cannot be one rule: the grant becomes rules on what lies beside
// the denied path instead, and each folder on the way down may only be listed
// (its names are seen, not its files). Entries are taken as they are now; one
// made later in such a folder is refused, which is the safe side.
void grant_beside_denies(landlock::Plan& plan, const fs::path& root, landlock::Grant grant,
                         const std::vector<fs::path>& denied) {
  if (denied.empty()) {
    plan.paths.push_back({root, grant});
    return;
  }
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(root, ec))) return;  // a deny at or above a file: no rule
  plan.paths.push_back({root, landlock::Grant::list});
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path child = it->path();
    std::vector<fs::path> inside;
    bool is_denied = false;
    for (const auto& d : denied) {
      if (d == child) is_denied = true;
      if (is_within(d, child)) inside.push_back(d);
    }
    if (!is_denied) grant_beside_denies(plan, child, grant, inside);
  }
}

// `secret_files`: files the view shows with a placeholder (the broker's); on
// host paths, without the view, they are denied like the policy's denies.
landlock::Plan plan_landlock(const policy::Policy& policy, const mounts::ViewPlan& view, bool in_view,
                             const std::vector<fs::path>& secret_files = {}) {
  using landlock::Grant;
  landlock::Plan plan;
  if (in_view) {
    // No rule on "/": the skeleton's directories (parents of grants) are not
    // listable, as the Policy's oracle says.
    // A writable skeleton folder (mounts.hpp: writable_dir) gets no rule: a
    // file made there is refused (EACCES).
    for (const auto& b : view.binds)
      if (b.symlink_target.empty() && !b.writable_dir)
        plan.paths.push_back({b.view, b.writable ? Grant::write : Grant::read});
  } else {
    // Without a view there is no layer of the run's own: the harness's
    // guarded files in the user's home stay read-only (a folder that holds
    // one is the harness's data, and stays writable: said at the launch).
    for (const auto& g : policy.grants()) {
      const policy::HomeFile* home = policy::home_file_for(policy.home_files(), g.path);
      const bool guarded = home && home->guarded() && home->path == normal_absolute(g.path);
      const Grant grant = g.access == policy::Access::write && !guarded ? Grant::write : Grant::read;
      std::vector<fs::path> denied;
      if (grant == Grant::read) {
        for (const auto& d : policy.denies())
          if (is_within(d.path, g.path)) denied.push_back(d.path);
        for (const auto& f : secret_files)
          if (is_within(f, g.path)) denied.push_back(f);
      }
      grant_beside_denies(plan, g.path, grant, denied);
    }
    if (!policy.temp_dir().empty()) plan.paths.push_back({policy.temp_dir(), Grant::write});
  }
  plan.paths.push_back({"/proc", Grant::read});
  plan.paths.push_back({"/dev", Grant::list});
  for (const char* node :
       {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/pts"})
    plan.paths.push_back({node, Grant::device});
  if (in_view) plan.paths.push_back({"/dev/shm", Grant::write});
  // TCP inside the run's own network namespace is free: it holds only lo, so
  // the run's own servers (test suites, dev servers) bind and connect on any
  // port, and what lies outside is reachable only through the proxy's
  // listeners. Without a namespace (a weaker seal): no bind, and connect only
  // to the proxy, and to the ports Local servers names (on any address:
  // Landlock knows ports, not addresses); Local servers for every port lifts
  // the rule (said at the run's start).
  const policy::NetworkRule& net = policy.network();
  if (!in_view && !net.local_servers) plan.tcp_connect_ports = std::vector<std::uint16_t>{};
  if (!in_view && net.local_servers && !net.local_server_ports.empty())
    plan.tcp_connect_ports = net.local_server_ports;
  return plan;
}

// The 'P' message's text and descriptors as a NetworkHandOff.
Result<NetworkHandOff> network_hand_off(const std::string& text, std::vector<UniqueFd>& fds) {
  NetworkHandOff h;
  const auto bad = [] { return Error::internal("the seal's init sent a malformed network hand-off"); };
  const std::size_t nl = text.find('\n');
  try {
    h.proxy_port = static_cast<std::uint16_t>(std::stoi(text.substr(0, nl)));
  } catch (...) {
    return bad();
  }
  if (fds.empty()) return bad();
  h.proxy_listener = std::move(fds[0]);
  if (nl == std::string::npos) return h;
  const std::size_t nl2 = text.find('\n', nl + 1);
  if (nl2 == std::string::npos) return bad();
  const auto ranges = net::parse_ranges(text.substr(nl + 1, nl2 - nl - 1));
  if (!ranges) return bad();
  std::memcpy(h.synthetic_ranges.v4_base.data(), &ranges->v4_base.s_addr, 4);
  h.synthetic_ranges.v4_bits = ranges->v4_bits;
  if (ranges->v6_prefix) {
    h.synthetic_ranges.v6_prefix.emplace();
    std::memcpy(h.synthetic_ranges.v6_prefix->data(), ranges->v6_prefix->s6_addr, 16);
  }
  unsigned udp = 0, tcp = 0;
  if (std::sscanf(text.c_str() + nl2 + 1, "%u %u", &udp, &tcp) != 2 || fds.size() != 2 + udp + tcp)
    return bad();
  h.socket_channel = std::move(fds[1]);
  for (unsigned i = 0; i < udp; ++i) h.dns_udp.push_back(std::move(fds[2 + i]));
  for (unsigned i = 0; i < tcp; ++i) h.dns_tcp.push_back(std::move(fds[2 + udp + i]));
  return h;
}

}  // namespace

namespace {

// Test-only: PARALLEX_TEST_THREADS_AT_FORK=FILE writes how many threads this
// process has as the seal is forked (one, the forking thread, is the claim
// spawn() makes), so a test can check that claim. It changes nothing else.
void note_threads_at_fork() {
  const char* file = std::getenv("PARALLEX_TEST_THREADS_AT_FORK");
  if (!file || !*file) return;
  std::error_code ec;
  int threads = 0;
  for (fs::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) ++threads;
  if (FILE* out = std::fopen(file, "w")) {
    std::fprintf(out, "%d\n", threads);
    std::fclose(out);
  }
}

}  // namespace

Result<SealedProcess> spawn(const LaunchRequest& request) {
  if (!request.policy) return Error::internal("seal::spawn without a policy");
  if (request.executable.empty() || !request.executable.is_absolute())
    return Error::internal("seal::spawn needs an absolute executable");
  const policy::Policy& policy = *request.policy;
  Prepared p;
  p.ptrace_in_run = landlock::abi_version() >= 1;
  // The seccomp program is the same every run and needed only at the
  // go-ahead: compiled on another thread while the view is planned, and
  // joined before the fork below (no thread of ours runs while the seal is
  // forked: a child copies only the forking thread, and an allocator lock
  // held by another would stay held in the child).
  Background<Result<seccomp::Program>> program(
      [ptrace = p.ptrace_in_run] { return seccomp::prepare(ptrace); });
  // The weaker seal's, only where it may be needed (the user accepted it).
  if (request.allow_weaker_seal) {
    auto host_network = seccomp::prepare(p.ptrace_in_run, seccomp::Network::host);
    if (!host_network) return host_network.error();
    p.seccomp_host_network = std::move(host_network.value());
  }
  // The run folder's .git: the folder the supervisor opened once before the
  // run (its descriptor), or opened here once when it did not look.
  UniqueFd own_git;
  int run_git = request.run_git_fd;
  if (!request.run_git_looked) {
    own_git = mounts::open_git_folder(policy.run_folder());
    run_git = own_git.get();
  }
  p.view = mounts::plan_view(policy, request.state_dir.empty() ? fs::path() : request.state_dir / "new-state",
                             run_git, request.home_layers);
  mounts::create_placeholders(p.view, run_git);
  p.landlock_view = plan_landlock(policy, p.view, true);
  p.executable = request.executable;
  p.argv = request.argv.empty() ? std::vector<std::string>{request.executable.string()} : request.argv;
  p.env = request.env;
  p.cwd = request.cwd.empty() ? policy.run_folder() : request.cwd;
  p.temp_dir = policy.temp_dir();
  p.allow_weaker_seal = request.allow_weaker_seal;
  p.want_proxy = static_cast<bool>(request.on_proxy_socket);
  p.max_processes = policy.process_limit().max;
  p.limit_held_outside = !request.process_limit_held_by.empty();
  p.want_rlimit = p.max_processes > 0 && process_limit::rlimit_holds(false);
  p.want_pid_max = p.max_processes > 0 && process_limit::pid_max_holds(false);
  p.pids_cgroup = request.pids_cgroup_fd;
  const char* timing = std::getenv("PARALLEX_SEAL_TIMING");
  p.timing = timing && std::string(timing) == "1";
  if (p.want_proxy) {
    // The run's own resolver, and its own hosts file: names resolve only
    // through the rule (the host's entries could name any address).
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::string self = host;
    if (self.find_first_of(" \t\n#") != std::string::npos) self.clear();
    p.view.generated.push_back(
        {"/etc/resolv.conf",
         "# The run's own resolver (parallex): it answers the names this run's network rule allows, and no\n"
         "# other; nothing is forwarded.\nnameserver 127.0.0.1\n"});
    p.view.generated.push_back({"/etc/hosts", "127.0.0.1\tlocalhost" + (self.empty() ? "" : " " + self) +
                                                  "\n::1\tlocalhost ip6-localhost ip6-loopback\n"});
  }

  // The run's broker: its CA bundle over the system bundle, files that hold a
  // brokered secret shown with the placeholder (the view only).
  // Without the view (a weaker seal), Landlock keeps such a file out where a
  // read grant holds it; one in a writable grant stays readable: `masked`.
  p.broker_files = !request.view_files.empty();
  std::vector<fs::path> secret_files;
  for (const auto& f : request.view_files) {
    p.view.generated.push_back({f.view, f.content});
    if (f.secret_of.empty()) continue;
    secret_files.push_back(f.view);
    for (const auto& g : policy.grants())
      if (g.access == policy::Access::write && is_within(f.view, g.path)) {
        p.masked.push_back(f.view.string() + " (credential " + f.secret_of + ")");
        break;
      }
  }
  p.landlock_host = plan_landlock(policy, p.view, false, secret_files);

  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return sys_error("socketpair for the seal");
  UniqueFd mine(sv[0]);
  // Each message carries its sender's pid: the command's is its Landlock domain's creator.
  const int on = 1;
  ::setsockopt(mine.get(), SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
  std::optional<Result<seccomp::Program>> compiled(program.take());
  const pid_t supervisor = ::getpid();
  note_threads_at_fork();
  const int cgroup_fd = request.cgroup_fd;
  pid_t pid = 0;
  pid_t helper = 0;
  if (cgroup_fd >= 0 && !std::getenv("PARALLEX_NO_CLONE_INTO_CGROUP")) {
    // Born in the run's cgroup: tracked from its first instruction, and no migration.
    pid = spawn_in_cgroup(
        cgroup_fd,
        [&] {
          mine.reset();
          run_outer(p, sv[1], supervisor);
        },
        helper);
    if (pid < 0) {
      const int err = errno;
      reap_helper(helper);
      ::close(sv[1]);
      errno = err;
      return sys_error("start the seal in the run's cgroup");
    }
  }
  if (pid == 0) pid = ::fork();
  if (pid < 0) {
    reap_helper(helper);
    ::close(sv[1]);
    return sys_error("fork the seal");
  }
  if (pid == 0) {
    mine.reset();
    if (cgroup_fd >= 0) {
      // Before anything else: a process of the run outside its cgroup could
      // escape a pause. Failing to enter it fails the run.
      const int procs = ::openat(cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
      if (procs < 0 || ::write(procs, "0\n", 2) != 2) {
        std::fprintf(stderr, "parallex: cannot enter the run's cgroup: %s\n", std::strerror(errno));
        _exit(kSetupFailed);
      }
      ::close(procs);
    }
    run_outer(p, sv[1], supervisor);
  }
  ::close(sv[1]);
  SealedProcess out;
  out.pid = pid;
  out.program = std::move(compiled);
  out.helper = helper;
  out.control = std::move(mine);
  out.request = &request;
  out.notes = std::move(p.view.notes);
  for (const auto& b : p.view.binds)
    if (b.fresh && !b.host.empty()) out.fresh.push_back(b);
  return out;
}

Status release(SealedProcess& process) {
  if (!process.program) return Error::internal("the seal was released twice");
  auto program = std::move(*process.program);
  process.program.reset();
  if (!program) {
    abandon(process);
    return program.error();
  }
  // Subscribed before the command exists, so none of its records is missed.
  process.landlock_not_collected = landlock_log_for_run(process.landlock_log);
  // A seal that already gave up has closed its end: wait() reads why.
  send_message(process.control.get(), SealMessage::go, seccomp::encode(program.value()));
  return ok();
}

void abandon(SealedProcess& process) {
  // The init waits for the go-ahead and ends at the socket's end; the kill
  // makes that immediate for the outer process and, with it, the init
  // (its parent-death pipe).
  process.control.reset();
  if (process.pid > 0) {
    ::kill(process.pid, SIGKILL);
    while (::waitpid(process.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    process.pid = -1;
  }
  process.landlock_log.reset();
  reap_helper(process.helper);
}

namespace {

// What the supervisor learns from the seal's messages.
struct Heard {
  std::optional<Error> setup_error;
  std::optional<int> command_status;  // the command's raw wait status, from the seal's init
  UniqueFd listener;                  // the seccomp filter's listener
  bool exec_reached = false;
};

// Handles one message; answers the proxy hand-off.
void handle_message(SealedProcess& process, const std::string& msg, std::vector<UniqueFd>& passed,
                    pid_t sender, Heard& heard, LaunchResult& result) {
  if (msg.empty() || !is_seal_message(msg[0])) return;  // not ours: ignored, never trusted
  const auto kind = static_cast<SealMessage>(msg[0]);
  const std::string_view text = std::string_view(msg).substr(1);
  switch (kind) {
    case SealMessage::notice:
      result.notes.push_back(decode_notice(text));
      break;
    case SealMessage::weakened:
      result.notes.push_back({run::NoticeKind::weaker_seal, std::string(text)});
      result.weakened = true;
      break;
    case SealMessage::error:
      if (!heard.setup_error) heard.setup_error = decode_error(text);
      break;
    case SealMessage::exec_failed:
      result.message = std::string(text.substr(text.find(' ') + 1));
      break;
    case SealMessage::exec:
      heard.exec_reached = true;
      if (!passed.empty()) heard.listener = std::move(passed.front());
      if (process.landlock_log && sender > 0) process.landlock_log->set_domain_creator(sender);
      break;
    case SealMessage::uncollected:
      result.refusals.not_collected.emplace_back(text);
      break;
    case SealMessage::limits:
      for (std::size_t at = 0; at <= text.size();) {
        const std::size_t comma = std::min(text.find(',', at), text.size());
        if (comma > at)
          result.process_limit.push_back(process_limit::mechanism(std::string(text.substr(at, comma - at))));
        at = comma + 1;
      }
      break;
    case SealMessage::exited:
      try {
        heard.command_status = std::stoi(std::string(text));
      } catch (...) {
      }
      if (process.request && process.request->on_command_ended) process.request->on_command_ended();
      break;
    case SealMessage::proxy: {
      std::pair<SealMessage, std::string> reply{SealMessage::proxy_fail, "no proxy socket was passed"};
      if (!passed.empty() && process.request && process.request->on_proxy_socket) {
        auto handoff = network_hand_off(std::string(text), passed);
        auto env = handoff ? process.request->on_proxy_socket(std::move(handoff).value())
                           : Result<EnvMap>(handoff.error());
        if (env) {
          reply = {SealMessage::proxy_env, {}};
          for (const auto& [k, v] : env.value()) reply.second += k + "=" + v + '\0';
        } else {
          reply.second = env.error().message;
        }
      }
      send_message(process.control.get(), reply.first, reply.second);
      break;
    }
    case SealMessage::proxy_env:
    case SealMessage::proxy_fail:
    case SealMessage::go:
      break;  // the supervisor's own answers never come back
  }
}

}  // namespace

Result<LaunchResult> wait(SealedProcess& process) {
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  LaunchResult result;
  result.notes = process.notes;
  if (process.request) result.process_limit = process.request->process_limit_held_by;
  Heard heard;
  std::string msg;
  std::vector<UniqueFd> passed;
  pid_t sender = -1;
  // 1. Set-up, until the command is about to exec (or the seal gave up).
  while (!heard.exec_reached && receive_message(process.control.get(), msg, &passed, &sender)) {
    handle_message(process, msg, passed, sender, heard, result);
    passed.clear();
  }
  if (heard.listener) result.refusals.collected_from.push_back("seccomp (user notification)");
  if (process.landlock_log)
    result.refusals.collected_from.push_back("Landlock (kernel audit log)");
  else
    result.refusals.not_collected.push_back(process.landlock_not_collected);
  // 2. The run: refused calls are answered and recorded until the seal exits.
  if (heard.listener || process.landlock_log) {
    const UniqueFd seal_exited(static_cast<int>(::syscall(SYS_pidfd_open, process.pid, 0)));
    serve_refusals(heard.listener ? heard.listener.get() : -1, seal_exited.get(),
                   process.landlock_log ? &*process.landlock_log : nullptr, result.refusals);
    heard.listener.reset();
  }
  // 3. What the seal said last (the command's status): read to the end.
  while (receive_message(process.control.get(), msg, &passed, &sender)) {
    handle_message(process, msg, passed, sender, heard, result);
    passed.clear();
  }
  process.control.reset();
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(process.pid, &status, 0)) < 0 && errno == EINTR) {
  }
  // After the reap: the kernel frees the run's Landlock domain, and says so
  // in its last record, only once nothing of the seal is left.
  if (process.landlock_log) {
    process.landlock_log->finish(result.refusals);
    process.landlock_log.reset();
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  reap_helper(process.helper);
  if (r < 0) return sys_error("waitpid the seal");
  // Nothing of the seal is left: what it wrote into fresh state dirs goes to
  // the paths the policy granted, and their backing dirs go.
  if (!process.fresh.empty()) {
    std::vector<NewStateDir> dirs;
    for (const auto& b : process.fresh) dirs.push_back({b.view, b.host});
    // What the run made at a guarded path of the harness's (a setting) is the
    // supervisor's to settle (protect/home_settings.hpp), not kept here.
    if (process.request && !process.request->home_held_dir.empty())
      for (auto& note : hold_guarded_new_state(dirs, process.request->policy->home_files(),
                                               process.request->home_held_dir))
        result.notes.push_back({run::NoticeKind::seal, std::move(note)});
    for (auto& note : keep_new_state(dirs)) result.notes.push_back({run::NoticeKind::seal, std::move(note)});
    std::error_code ec;
    fs::remove_all(process.fresh.front().host.parent_path(), ec);
  }
  // The command's own status when the init could tell it; else the seal's
  // (the init was killed with the run, or set-up failed).
  const int command_status = heard.command_status.value_or(status);
  result.exit_code = pidns::exit_code(command_status);
  result.signal = WIFSIGNALED(command_status) ? WTERMSIG(command_status) : 0;
  if (!heard.command_status && WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  if (heard.setup_error) {
    heard.setup_error->message = "the seal could not be set up: " + heard.setup_error->message;
    return *heard.setup_error;
  }
  return result;
}

}  // namespace px::seal
