#include "backend/seal/refusals.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "backend/seal/audit_log.hpp"
#include "common/shown.hpp"

namespace px::seal {

namespace {

std::string namespace_flags(std::uint64_t flags) {
  static const std::pair<std::uint64_t, const char*> kNames[] = {
      {CLONE_NEWUSER, "CLONE_NEWUSER"},     {CLONE_NEWNS, "CLONE_NEWNS"},   {CLONE_NEWNET, "CLONE_NEWNET"},
      {CLONE_NEWPID, "CLONE_NEWPID"},       {CLONE_NEWIPC, "CLONE_NEWIPC"}, {CLONE_NEWUTS, "CLONE_NEWUTS"},
      {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"}, {0x00000080, "CLONE_NEWTIME"}};
  std::string out;
  for (const auto& [bit, name] : kNames)
    if (flags & bit) out += (out.empty() ? "" : "|") + std::string(name);
  return out;
}

std::string family_name(std::uint64_t family) {
  static const std::pair<std::uint64_t, const char*> kNames[] = {{AF_INET, "AF_INET"},
                                                                 {AF_INET6, "AF_INET6"},
                                                                 {AF_AX25, "AF_AX25"},
                                                                 {AF_IPX, "AF_IPX"},
                                                                 {AF_APPLETALK, "AF_APPLETALK"},
                                                                 {AF_BRIDGE, "AF_BRIDGE"},
                                                                 {AF_X25, "AF_X25"},
                                                                 {AF_KEY, "AF_KEY"},
                                                                 {AF_PACKET, "AF_PACKET"},
                                                                 {AF_RDS, "AF_RDS"},
                                                                 {AF_PPPOX, "AF_PPPOX"},
                                                                 {AF_LLC, "AF_LLC"},
                                                                 {AF_CAN, "AF_CAN"},
                                                                 {AF_TIPC, "AF_TIPC"},
                                                                 {AF_BLUETOOTH, "AF_BLUETOOTH"},
                                                                 {AF_ALG, "AF_ALG"},
                                                                 {AF_NFC, "AF_NFC"},
                                                                 {AF_VSOCK, "AF_VSOCK"},
                                                                 {AF_KCM, "AF_KCM"},
                                                                 {AF_QIPCRTR, "AF_QIPCRTR"},
                                                                 {AF_SMC, "AF_SMC"},
                                                                 {AF_XDP, "AF_XDP"},
                                                                 {AF_MCTP, "AF_MCTP"}};
  for (const auto& [value, name] : kNames)
    if (value == family) return name;
  return "family " + std::to_string(family);
}

// The errno a refused call gets: what a program expects from an unsupported
// socket family, else "not permitted". Only native calls reach the listener
// (another ABI is answered ENOSYS by the filter itself).
// An IPv4 or IPv6 socket other than TCP, refused where the run shares the
// host's network (seccomp::Network::host), gets "access denied", as Landlock
// answers a TCP connect outside the rule (a family with high bits set was
// refused as unsupported).
int refusal_errno(int nr, std::uint64_t family) {
  static const int socket_nr = seccomp_syscall_resolve_name("socket");
  static const int socketpair_nr = seccomp_syscall_resolve_name("socketpair");
  if (nr == socket_nr && (family == AF_INET || family == AF_INET6)) return EACCES;
  return nr == socket_nr || nr == socketpair_nr ? EAFNOSUPPORT : EPERM;
}

// The type of a socket the rule above refused, as a program names it.
std::string socket_type_name(std::uint64_t type) {
  switch (type & 0xF) {
    case SOCK_DGRAM:
      return "SOCK_DGRAM";
    case SOCK_RAW:
      return "SOCK_RAW";
    case SOCK_SEQPACKET:
      return "SOCK_SEQPACKET";
    case SOCK_STREAM:
      return "SOCK_STREAM (not TCP)";
    default:
      return "type " + std::to_string(type & 0xF);
  }
}

// The comm of `pid` in the supervisor's pid namespace; the process is blocked
// in the refused call while this reads, so the pid is still its own (checked
// after with the notification id).
std::string comm_of(std::uint32_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/comm";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[64];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0) return {};
  std::string comm(buf, static_cast<std::size_t>(n));
  while (!comm.empty() && (comm.back() == '\n' || comm.back() == '\0')) comm.pop_back();
  return shown(comm);
}

struct NotifyDeleter {
  seccomp_notif* req;
  seccomp_notif_resp* resp;
  ~NotifyDeleter() { seccomp_notify_free(req, resp); }
};

}  // namespace

std::string describe_refused_call(std::uint32_t arch, int nr, std::uint64_t arg0, std::uint64_t arg1) {
  std::unique_ptr<char, decltype(&std::free)> name(seccomp_syscall_resolve_num_arch(arch, nr), &std::free);
  std::string call = name ? name.get() : "syscall " + std::to_string(nr);
  if (call == "ioctl") {
    const std::uint32_t request = static_cast<std::uint32_t>(arg1);
    if (request == TIOCSTI) return "ioctl TIOCSTI";
    if (request == TIOCLINUX) return "ioctl TIOCLINUX";
  }
  if (call == "socket" && (arg0 == AF_INET || arg0 == AF_INET6))
    return call + " " + family_name(arg0) + " " + socket_type_name(arg1);
  if (call == "socket" || call == "socketpair") return call + " " + family_name(arg0);
  if (call == "unshare" || call == "clone") {
    const std::string flags = namespace_flags(arg0);
    if (!flags.empty()) return call + " " + flags;
  }
  return call;
}

void serve_refusals(int listener, int seal_exited, audit::LandlockLog* landlock, Refusals& out) {
  seccomp_notif* req = nullptr;
  seccomp_notif_resp* resp = nullptr;
  if (listener >= 0 && seccomp_notify_alloc(&req, &resp) != 0) listener = -1;
  NotifyDeleter owner{req, resp};
  for (;;) {
    pollfd fds[3] = {
        {listener, POLLIN, 0}, {seal_exited, POLLIN, 0}, {landlock ? landlock->fd() : -1, POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (landlock && (fds[2].revents & POLLIN)) landlock->read_available();
    // (poll leaves revents 0 for a negative fd; the checks say so to the analyzer too.)
    if (req && resp && (fds[0].revents & POLLIN)) {
      // The kernel fills the whole struct; libseccomp wants it zeroed first.
      std::memset(req, 0, sizeof *req);
      if (seccomp_notify_receive(listener, req) != 0) continue;  // the caller died meanwhile
      const std::string call =
          describe_refused_call(req->data.arch, req->data.nr, req->data.args[0], req->data.args[1]);
      std::string process = comm_of(req->pid);
      if (seccomp_notify_id_valid(listener, req->id) != 0) process.clear();
      out.add("seccomp", call, process);
      resp->id = req->id;
      resp->val = 0;
      resp->error = -refusal_errno(req->data.nr, req->data.args[0]);
      resp->flags = 0;
      seccomp_notify_respond(listener, resp);
      continue;
    }
    // Stop listening when every process of the seal is gone (the filter has
    // no users), or the seal's outer process exited; without a pidfd, on hang-up.
    if (fds[1].revents & POLLIN) break;
    if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
      if (seal_exited < 0 || !landlock) break;
      listener = -1;
    }
    if (listener < 0 && seal_exited < 0 && !landlock) break;
  }
}

}  // namespace px::seal
