#pragma once
// A run's control channel: a unix socket (0600, in the 0700 runtime dir) served
// by one thread of the supervisor. Protocol, version 1: the client sends one
// JSON object on one line and gets one JSON line back, then the connection
// closes.
//   request:  {"v":1,"op":"status"|"pause"|"resume"|"kill", "by":"parallex pause --all"}
//   response: {"v":1,"ok":true,"run":{...}}  or  {"v":1,"ok":false,"error":"...","refused":true?}
// A request from inside a run is refused: the seal hides the runtime dir and
// gives the run its own network namespace, and the server checks the peer
// (SO_PEERCRED) besides: another pid namespace, a run's cgroup, PARALLEX_RUN=1
// in its environment, or a process of this very run.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "common/watch_thread.hpp"

namespace px::killswitch {

namespace fs = std::filesystem;

inline constexpr int kControlProtocolVersion = 1;

// Why a peer may not control runs, or nullopt. `extra` adds the server's own
// test (e.g. "is this pid a process of my run?").
std::optional<std::string> refuse_reason_for_peer(
    pid_t pid, uid_t uid, const std::function<std::optional<std::string>(pid_t)>& extra = {});
// For clients: why this very process may not control runs (PARALLEX_RUN=1,
// or it runs in a run's cgroup), or nullopt.
std::optional<std::string> client_inside_run_reason();
// True when a cgroup v2 path names a run's cgroup (".../parallex/<id>" or ".../parallex-<id>").
bool is_run_cgroup_path(const std::string& cgroup_path);

class ControlServer {
 public:
  using Handler = std::function<nlohmann::json(const nlohmann::json& request, pid_t peer_pid)>;
  using PeerCheck = std::function<std::optional<std::string>(pid_t)>;

  // Called from the server's thread when no request came for a while
  // (kIdleEvery): the run's supervisor looks there for what was done to its
  // run while it did not answer (RunControl::take_direct).
  using Idle = std::function<void()>;
  static constexpr std::chrono::milliseconds kIdleEvery{250};

  // Binds `path` (removing a stale socket there) and serves from a thread.
  static Result<std::unique_ptr<ControlServer>> start(fs::path path, Handler handler,
                                                      PeerCheck extra_check = {}, Idle idle = {});
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Stops the thread and unlinks the socket; idempotent.
  void stop();
  const fs::path& path() const { return path_; }

 private:
  ControlServer() = default;
  // One connection waiting on the listening socket: accepted and answered.
  void serve_one();
  void handle(int conn);

  fs::path path_;
  UniqueFd listen_fd_;
  Handler handler_;
  PeerCheck extra_check_;
  Idle idle_;
  bool stopped_ = false;
  WatchThread watch_;  // last: stopped before what its callbacks use goes
};

// How long a client waits for a supervisor's answer before it acts on the
// run without it (killswitch/direct_control.hpp): a pause of 200 processes
// answers in 25 ms on a loaded machine, a second is far beyond any healthy one.
inline constexpr std::chrono::milliseconds kAnswerWithin{1000};

// One request, one response. Error kind not_found when nothing listens there
// (ENOENT / ECONNREFUSED: a stale socket); kind conflict, with "did not
// answer within N ms", when the supervisor took longer than `timeout` to
// answer (stopped, hung): the request carries its deadline, and a supervisor
// that reads it later drops it unanswered rather than act on it late.
Result<nlohmann::json> send_request(const fs::path& socket, const nlohmann::json& request,
                                    std::chrono::milliseconds timeout = kAnswerWithin);
// 0 when something accepts connections on `socket`, else the connect errno
// (EAGAIN when its backlog is full: a supervisor that stopped accepting).
int probe_socket(const fs::path& socket);
// Milliseconds of CLOCK_BOOTTIME: a request's deadline, the same clock on
// both sides of the socket (and across a suspend).
std::int64_t boottime_ms();

}  // namespace px::killswitch
