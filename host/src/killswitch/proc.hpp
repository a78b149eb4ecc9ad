#pragma once
// Reading /proc for the kill switch: a process's state, start time, children,
// namespaces and cgroup, and signalling a process through a pidfd so that a
// pid reused between a look and a signal is never hit.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace px::killswitch {

struct ProcStat {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = '?';              // R S D T t Z X I ...
  std::uint64_t start_time = 0;  // clock ticks after boot: (pid, start_time) names a process for good
  unsigned long long flags = 0;  // the kernel's PF_* flags (of the thread read)
};

// A whole /proc (or cgroupfs) file through one fd; nullopt when it cannot be
// read, e.g. the process is gone. Never an iostream: libstdc++'s filebuf
// throws when read() fails, which /proc does (ESRCH) for an exiting process.
std::optional<std::string> read_proc_file(const std::string& path);
// Whether a kernel list holds `word`: cgroup.controllers and
// cgroup.subtree_control separate by spaces, /proc/self/cgroup's controllers by
// commas; a trailing newline is not part of the last word.
bool has_word(std::string_view list, std::string_view word, char sep = ' ');
// Parses /proc/<pid>/stat; nullopt when the process is gone.
std::optional<ProcStat> read_proc_stat(pid_t pid);
// "curl (pid 1234): curl -s https://example.com/" (the command line cut at 300
// bytes), "pid 1234 (gone)". Not redacted: callers redact before it is shown.
std::string describe_process(pid_t pid);
// Which of `candidates` holds the client's end of the TCP connection from
// `client` to `server` ("127.0.0.1:50412", "[::1]:8080": the ends as the
// candidates' network namespace sees them); 0 when none does or it cannot be
// told (gone, not readable).
pid_t tcp_socket_owner(const std::vector<pid_t>& candidates, const std::string& client,
                       const std::string& server);
// Children of every thread of `pid` (/proc/<pid>/task/*/children).
std::vector<pid_t> proc_children(pid_t pid);
// The inode of /proc/<pid>/ns/<kind> ("pid", "net", ...); 0 when unreadable.
std::uint64_t proc_ns_inode(pid_t pid, const char* kind);
// The cgroup v2 path of `pid` ("0::" line of /proc/<pid>/cgroup), empty when none.
std::string proc_cgroup_v2(pid_t pid);
// True when /proc/<pid>/environ holds `entry` ("PARALLEX_RUN=1").
bool proc_environ_has(pid_t pid, const std::string& entry);
// A stopped or frozen process: 'T'/'t' from SIGSTOP, or a cgroup-frozen task
// (the kernel shows those as 'S'/'D' in stat, so the freezer is checked apart).
bool is_stopped_state(char state);

// The state of the process as a whole, from its threads' states: a thread
// that runs (anything but stopped, zombie or dead) decides, then a stopped
// one; 'Z' once every thread has exited; nullopt when the process is gone.
// The main thread's own state is not enough: it shows 'Z' once it has called
// pthread_exit while the other threads run on, and 'T' while another thread
// has yet to take a SIGSTOP.
std::optional<char> thread_group_state(pid_t pid);
// Whether the process will never run another instruction of its own: each
// of its threads has exited, is exiting (PF_EXITING) or has SIGKILL pending,
// which it takes before it returns to user space (a fork it is in the middle
// of then fails, so it makes no new process either). Tearing down a large
// address space keeps such a process in /proc for a long time on a loaded
// machine; it is killed all the same. True when it is gone.
bool is_dying(pid_t pid);
// Whether SIGSTOP is pending for the process: it stops before it runs another
// instruction of its own (a fork it is in the middle of is restarted once it
// is continued, so it makes no new process meanwhile). A running process
// shows 'R' until the scheduler gets to it, which on a loaded machine takes a
// while; SIGCONT from anyone clears it.
bool stop_pending(pid_t pid);

// Sends `sig` to the process named by (pid, start_time) through a pidfd, so a
// reused pid is left alone. Returns false when the process is already gone.
bool signal_process(pid_t pid, std::uint64_t start_time, int sig);

int sys_pidfd_open(pid_t pid, unsigned flags);
int sys_pidfd_send_signal(int pidfd, int sig);

}  // namespace px::killswitch
