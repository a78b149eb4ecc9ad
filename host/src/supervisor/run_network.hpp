#pragma once
// The proxy of a run, from its Policy: the rules (host rules with their ports,
// Local servers, published ports) and, for a sealed run, the sockets the
// seal's init made inside the run's network namespace (the proxy's listener,
// the run's DNS, the socket channel). NetworkProxy is its place in the run.
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "policy/policy.hpp"
#include "proxy/proxy.hpp"
#include "proxy/terminator.hpp"
#include "run/record.hpp"
#include "supervisor/run_questions.hpp"

namespace px::killswitch {
class RunControl;
}

namespace px::supervisor {

// The proxy's rules come from the Policy and nowhere else; `broker`, the
// run's credential broker (supervisor/run_broker.hpp), terminates what it must.
proxy::ProxyConfig run_proxy_config(const policy::Policy& policy, const std::string& password,
                                    const std::filesystem::path& log,
                                    std::shared_ptr<proxy::Terminator> broker = nullptr);

// Starts the run's proxy with `config` (run_proxy_config's) on the sockets of
// the network hand-off (a sealed run's, made inside its namespace; or only a
// listener on loopback).
Result<std::unique_ptr<proxy::ProxyServer>> start_run_proxy(const policy::Policy& policy,
                                                            proxy::ProxyConfig config,
                                                            backend::NetworkHandOff handoff);

// The run's network as one service of the run (supervisor/run.cpp):
//   start()        before the seal: the password the run's programs give the
//                  proxy (a secret, redacted wherever it would be written);
//   on_socket()    while the seal builds its view, on the sockets it hands
//                  over: the proxy, and the variables that point programs at it;
//   cut(), restore()   the kill switch's pause and resume (any thread);
//   stop()         the proxy ends; what it refused into the record; release()
//                  the same without the record (a run that failed first).
// A run that wants no network (an offline run under a weaker seal without
// published ports) has none of it.
class NetworkProxy {
 public:
  explicit NetworkProxy(const policy::Policy& policy, bool wanted) : policy_(policy), wanted_(wanted) {}
  ~NetworkProxy();
  NetworkProxy(const NetworkProxy&) = delete;
  NetworkProxy& operator=(const NetworkProxy&) = delete;

  bool wanted() const { return wanted_; }
  // `run_id` and `agent` name the run in its questions; `say` gets the start's
  // word on ask mode (before the command starts: never over a TUI).
  Status start(const std::string& run_id, const std::string& agent,
               const std::function<void(const run::Notice&)>& say, const run::EventLog* events = nullptr);
  Result<backend::EnvMap> on_socket(backend::NetworkHandOff handoff, const std::filesystem::path& log,
                                    std::shared_ptr<proxy::Terminator> broker);
  // The run's processes exist: the process that asked a question is looked
  // for among them.
  void on_started(killswitch::RunControl& control);
  void cut();
  void restore();
  // Whether a new connection to `host` on `port` would pass the run's rule
  // as it stands now: the proxy's own decision, live changes (`parallex allow
  // --run`) included; the rule the run started with when it has no proxy
  // (then nothing can change it). Any thread.
  bool allows_now(const std::string& host, std::uint16_t port);
  // A control request about the run's network (supervisor/run_questions.hpp),
  // from the control socket's thread; nullopt for another op.
  std::optional<nlohmann::json> handle(const nlohmann::json& request, const std::string& by);
  // The proxy ends; what it refused, and what was asked and changed while it
  // ran, into the record.
  void stop(run::RunRecord& record);
  void release();

 private:
  const policy::Policy& policy_;
  const bool wanted_;
  std::string password_;
  std::mutex mu_;  // proxy_, cut_: shared with the kill switch's thread
  std::unique_ptr<proxy::ProxyServer> proxy_;
  bool cut_ = false;                         // cut before the proxy existed: it starts cut
  std::unique_ptr<RunQuestions> questions_;  // from start(): its hooks outlive the proxy
  std::string run_id_;
  std::function<std::vector<pid_t>()> processes_;  // the run's processes, from on_started()
};

}  // namespace px::supervisor
