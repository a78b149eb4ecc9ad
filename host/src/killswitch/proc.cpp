#include "killswitch/proc.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/port.hpp"
#include "common/unique_fd.hpp"

namespace px::killswitch {
namespace {

// A stat file of /proc: a process's (/proc/<pid>/stat) or one of its
// threads' (/proc/<pid>/task/<tid>/stat); nullopt when it is gone.
std::optional<ProcStat> read_stat_file(const std::string& path, pid_t pid) {
  auto text = read_proc_file(path);
  if (!text) return std::nullopt;
  // The comm field may hold spaces and parentheses: the state follows the last ')'.
  const auto close = text->rfind(')');
  if (close == std::string::npos || close + 2 >= text->size()) return std::nullopt;
  ProcStat st;
  st.pid = pid;
  st.state = (*text)[close + 2];
  // Fields after the state: ppid(4) ... flags(9) ... starttime(22); we are at field 3.
  const char* p = text->c_str() + close + 3;
  int field = 4;
  char* end = nullptr;
  while (*p && field <= 22) {
    const unsigned long long v = std::strtoull(p, &end, 10);
    if (end == p) return std::nullopt;
    if (field == 4) st.ppid = static_cast<pid_t>(v);
    if (field == 9) st.flags = v;
    if (field == 22) st.start_time = v;
    p = end;
    while (*p == ' ') ++p;
    ++field;
  }
  if (field <= 22) return std::nullopt;
  return st;
}

// Calls fn("/proc/<pid>/task/<tid>") for each thread until it returns false.
template <typename Fn>
void for_each_thread(pid_t pid, Fn fn) {
  const std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(task_dir.c_str());
  if (!dir) return;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    if (!fn(task_dir + "/" + e->d_name)) break;
  }
  ::closedir(dir);
}

// Whether `sig` is pending in a /proc status file's text: SigPnd for the
// thread, ShdPnd for the whole process (hex masks).
bool pending_in(const std::string& status, int sig) {
  const unsigned long long bit = 1ULL << (sig - 1);
  for (const std::string_view key : {"\nSigPnd:", "\nShdPnd:"}) {
    const auto at = status.find(key);
    if (at != std::string::npos && (std::strtoull(status.c_str() + at + key.size(), nullptr, 16) & bit))
      return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> read_proc_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

int sys_pidfd_open(pid_t pid, unsigned flags) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, flags));
}

int sys_pidfd_send_signal(int pidfd, int sig) {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  return read_stat_file("/proc/" + std::to_string(pid) + "/stat", pid);
}

std::optional<char> thread_group_state(pid_t pid) {
  std::optional<char> group;
  for_each_thread(pid, [&](const std::string& task) {
    const auto st = read_stat_file(task + "/stat", pid);
    if (!st) return true;  // exited meanwhile
    const bool exited = st->state == 'Z' || st->state == 'X';
    if (!exited && !is_stopped_state(st->state)) {
      group = st->state;
      return false;
    }
    if (!group || *group == 'Z') group = exited ? 'Z' : st->state;
    return true;
  });
  return group;
}

bool is_dying(pid_t pid) {
  constexpr unsigned long long kPfExiting = 0x4;  // include/linux/sched.h
  bool dying = true;
  for_each_thread(pid, [&](const std::string& task) {
    const auto st = read_stat_file(task + "/stat", pid);
    if (!st || st->state == 'Z' || st->state == 'X' || (st->flags & kPfExiting)) return true;
    const auto status = read_proc_file(task + "/status");
    if (!status || pending_in(*status, SIGKILL)) return true;
    dying = false;
    return false;
  });
  return dying;
}

bool stop_pending(pid_t pid) {
  const auto status = read_proc_file("/proc/" + std::to_string(pid) + "/status");
  return status && pending_in(*status, SIGSTOP);
}

std::vector<pid_t> proc_children(pid_t pid) {
  std::vector<pid_t> out;
  for_each_thread(pid, [&](const std::string& task) {
    const auto text = read_proc_file(task + "/children");
    if (!text) return true;
    const char* p = text->c_str();
    char* end = nullptr;
    for (;;) {
      const long v = std::strtol(p, &end, 10);
      if (end == p) break;
      out.push_back(static_cast<pid_t>(v));
      p = end;
    }
    return true;
  });
  return out;
}

std::uint64_t proc_ns_inode(pid_t pid, const char* kind) {
  struct stat st {};
  const std::string path = "/proc/" + std::to_string(pid) + "/ns/" + kind;
  if (::stat(path.c_str(), &st) != 0) return 0;
  return st.st_ino;
}

std::string proc_cgroup_v2(pid_t pid) {
  auto text = read_proc_file("/proc/" + std::to_string(pid) + "/cgroup");
  if (!text) return {};
  std::size_t pos = 0;
  while (pos < text->size()) {
    std::size_t nl = text->find('\n', pos);
    if (nl == std::string::npos) nl = text->size();
    const std::string line = text->substr(pos, nl - pos);
    if (line.rfind("0::", 0) == 0) return line.substr(3);
    pos = nl + 1;
  }
  return {};
}

bool proc_environ_has(pid_t pid, const std::string& entry) {
  auto text = read_proc_file("/proc/" + std::to_string(pid) + "/environ");
  if (!text) return false;
  std::size_t pos = 0;
  while (pos < text->size()) {
    std::size_t nul = text->find('\0', pos);
    if (nul == std::string::npos) nul = text->size();
    if (text->compare(pos, nul - pos, entry) == 0) return true;
    pos = nul + 1;
  }
  return false;
}

bool is_stopped_state(char state) {
  return state == 'T' || state == 't';
}

bool signal_process(pid_t pid, std::uint64_t start_time, int sig) {
  UniqueFd pidfd(sys_pidfd_open(pid, 0));
  if (!pidfd) return false;
  // The pidfd now pins this very process; check it is the one we saw.
  const auto st = read_proc_stat(pid);
  if (!st || st->start_time != start_time) return false;
  return sys_pidfd_send_signal(pidfd.get(), sig) == 0;
}

bool has_word(std::string_view list, std::string_view word, char sep) {
  while (!list.empty()) {
    const std::size_t end = list.find(sep);
    std::string_view w = list.substr(0, end);
    while (!w.empty() && (w.back() == '\n' || w.back() == ' ')) w.remove_suffix(1);
    if (w == word) return true;
    if (end == std::string_view::npos) break;
    list.remove_prefix(end + 1);
  }
  return false;
}

}  // namespace px::killswitch

namespace px::killswitch {

std::string describe_process(pid_t pid) {
  if (pid <= 0) return {};
  std::string name = read_proc_file("/proc/" + std::to_string(pid) + "/comm").value_or("");
  if (const auto nl = name.find('\n'); nl != std::string::npos) name.resize(nl);
  std::string args = read_proc_file("/proc/" + std::to_string(pid) + "/cmdline").value_or("");
  for (auto& c : args)
    if (c == '\0') c = ' ';
  while (!args.empty() && args.back() == ' ') args.pop_back();
  if (name.empty()) return "pid " + std::to_string(pid) + " (gone)";
  return name + " (pid " + std::to_string(pid) + ")" + (args.empty() ? "" : ": " + args.substr(0, 300));
}

namespace {

// The kernel's spelling of an endpoint in /proc/net/tcp{,6}: each 32-bit word
// of the address's network-order bytes printed as the host reads it, "%08X",
// then ":%04X" of the port. "127.0.0.1:50412" and "[::1]:8080" are read; empty
// for anything else. `v6` says which table holds it.
std::string proc_net_endpoint(const std::string& endpoint, bool& v6) {
  const auto colon = endpoint.rfind(':');
  if (colon == std::string::npos) return {};
  std::string address = endpoint.substr(0, colon);
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']')
    address = address.substr(1, address.size() - 2);
  const auto port = parse_port(std::string_view(endpoint).substr(colon + 1));
  if (!port) return {};
  unsigned char bytes[16];
  v6 = address.find(':') != std::string::npos;
  if (::inet_pton(v6 ? AF_INET6 : AF_INET, address.c_str(), bytes) != 1) return {};
  std::string out;
  for (int word = 0; word < (v6 ? 4 : 1); ++word) {
    std::uint32_t v = 0;
    std::memcpy(&v, bytes + 4 * word, 4);
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08X", v);
    out += hex;
  }
  char port_hex[6];
  std::snprintf(port_hex, sizeof port_hex, ":%04X", static_cast<unsigned>(*port));
  return out + port_hex;
}

// Adds to `inodes` the inode of each TCP socket in the network namespace of
// `pid` whose ends are `local` and `remote` (the kernel's spelling).
void socket_inodes_in(pid_t pid, bool v6, const std::string& local, const std::string& remote,
                      std::vector<std::string>& inodes) {
  const auto table = read_proc_file("/proc/" + std::to_string(pid) + (v6 ? "/net/tcp6" : "/net/tcp"));
  if (!table) return;
  // "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"
  std::size_t at = 0;
  while (at < table->size()) {
    std::size_t end = table->find('\n', at);
    if (end == std::string::npos) end = table->size();
    char sl[16], loc[64], rem[64], st[8], queues[40], timer[40], retr[16], uid[16], timeout[16], ino[24];
    const std::string line = table->substr(at, end - at);
    if (std::sscanf(line.c_str(), "%15s %63s %63s %7s %39s %39s %15s %15s %15s %23s", sl, loc, rem, st,
                    queues, timer, retr, uid, timeout, ino) == 10 &&
        local == loc && remote == rem && std::strcmp(ino, "0") != 0)
      inodes.emplace_back(ino);
    at = end + 1;
  }
}

// Whether `pid` holds one of the sockets `targets` ("socket:[INODE]").
bool holds_socket(pid_t pid, const std::vector<std::string>& targets) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return false;
  bool found = false;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char link[64];
    const ssize_t n = ::readlinkat(::dirfd(d), e->d_name, link, sizeof link - 1);
    if (n <= 0) continue;
    const std::string_view held(link, static_cast<std::size_t>(n));
    found = std::find(targets.begin(), targets.end(), held) != targets.end();
    if (found) break;
  }
  ::closedir(d);
  return found;
}

}  // namespace

pid_t tcp_socket_owner(const std::vector<pid_t>& candidates, const std::string& client,
                       const std::string& server) {
  bool v6 = false, server_v6 = false;
  const std::string local = proc_net_endpoint(client, v6);
  const std::string remote = proc_net_endpoint(server, server_v6);
  if (local.empty() || remote.empty() || v6 != server_v6) return 0;
  // The table of each network namespace the candidates are in (a run's
  // first process may still be in the one it was started from). Both ends
  // are matched, in every namespace: the client's end alone may name another
  // socket in another namespace (ephemeral ports are each namespace's own),
  // and a socket's inode is the machine's, so only the run's socket is held
  // by a process of the run.
  std::vector<std::string> targets;
  std::vector<std::uint64_t> seen;
  for (const pid_t pid : candidates) {
    const std::uint64_t ns = proc_ns_inode(pid, "net");
    if (ns == 0 || std::find(seen.begin(), seen.end(), ns) != seen.end()) continue;
    seen.push_back(ns);
    std::vector<std::string> inodes;
    socket_inodes_in(pid, v6, local, remote, inodes);
    for (const auto& inode : inodes) targets.push_back("socket:[" + inode + "]");
  }
  if (targets.empty()) return 0;
  for (const pid_t pid : candidates)
    if (holds_socket(pid, targets)) return pid;
  return 0;
}

}  // namespace px::killswitch
