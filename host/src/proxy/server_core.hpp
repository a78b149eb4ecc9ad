#pragma once
// The server's shared state and its io thread. Connections reach it by
// reference; everything below marked (io) is touched by the io thread only.
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_set>

#include "proxy/connection.hpp"
#include "proxy/decision_log.hpp"
#include "proxy/host_rules.hpp"
#include "proxy/proxy.hpp"
#include "proxy/run_network.hpp"

namespace px::proxy {

class ServerCore {
 public:
  ServerCore(ProxyConfig config, Resolver resolver, DecisionLog log);
  ~ServerCore();
  ServerCore(const ServerCore&) = delete;
  ServerCore& operator=(const ServerCore&) = delete;

  void start();  // acceptor must be open and listening
  Status serve_run_network(RunNetwork network);
  void cut();
  void restore();
  void stop();
  std::vector<RefusedHost> refused_hosts() const;

  // For connections (io).
  void remove(const std::shared_ptr<Connection>& c) { connections_.erase(c); }
  // A new client connection, or nullptr when the run has as many open as the
  // limit allows: refused then at once, and named with `target` (where a
  // captured or published connection was going; a proxy client's is not
  // read) in the log and in the run's refusals.
  std::shared_ptr<Connection> admit(boost::asio::ip::tcp::socket socket, Connection::Kind kind,
                                    const HostPort& target = {});
  void note_refused(const std::string& host, std::uint16_t port, std::string_view reason, bool dns = false);
  // A request without the password gets 407, the challenge clients answer by
  // asking again with it (git, Codex): listed as refused only when no request
  // for the same target came with the password afterwards.
  void note_challenged(const std::string& target);
  void note_authenticated(const std::string& target);
  std::chrono::milliseconds auth_failure_delay();  // grows with consecutive failures
  // Successful lookups, kept for a few seconds (any thread).
  std::optional<std::vector<boost::asio::ip::address>> cached_addresses(const std::string& host);
  void cache_addresses(const std::string& host, const std::vector<boost::asio::ip::address>& addresses);
  void auth_succeeded() { auth_failures_ = 0; }

  // The rule as it stands now (questions.cpp): where `name` may go, by the
  // run's own rule with its live changes applied (io).
  std::vector<std::uint16_t> ports_for(std::string_view name) const;
  // Where the run's DNS makes a name reachable: ports_for, or in ask mode the
  // network's ports for a name outside the rule, so its connection can be
  // held and asked about (io).
  std::vector<std::uint16_t> capture_ports_for(std::string_view name) const;
  // Ask mode (io): holds `c` (null: none) on the question about `target`,
  // opening one when none is open for it. Returns the question's id.
  std::uint64_t ask(const std::shared_ptr<Connection>& c, const HostPort& target,
                    std::string_view rule_reason);
  // A question with no connection waiting: a run's request (run_service.cpp)
  // for a host the user may allow (io). Returns its id.
  std::uint64_t ask_for(const HostPort& target, std::string_view why);
  // Any thread.
  void change_rule(RuleChange change);
  std::vector<RuleChange> rule_changes();
  bool allows_now(const std::string& host, std::uint16_t port);
  std::vector<Question> questions();
  Status answer(std::uint64_t id, bool allow, bool for_run, const std::string& by);

  boost::asio::io_context io;  // first member: destroyed last
  boost::asio::ip::tcp::acceptor acceptor{io};
  boost::asio::thread_pool resolver_pool{2};
  const ProxyConfig config;
  const Resolver resolver;
  DecisionLog log;            // (io)
  std::vector<char> scratch;  // (io) shared read buffer of every relay
  std::atomic<bool> paused{false};

 private:
  void accept();
  void sweep();
  void close_all(std::string_view how);
  void run_on_io(const std::function<void()>& fn);
  // Ends question `id` (io): its connections go on or are refused; the
  // hooks hear of it.
  void close_question(std::uint64_t id, bool allow, std::string_view why, QuestionEnd end);
  void expire_questions(Clock::time_point now);

  struct OpenQuestion {
    Question question;
    std::vector<std::weak_ptr<Connection>> waiting;
  };

  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{io.get_executor()};
  boost::asio::steady_timer sweep_timer_{io};
  boost::asio::steady_timer accept_retry_{io};
  std::chrono::milliseconds sweep_interval_{500};
  bool listens_v6_ = false;                                      // the acceptor's family, read once at start
  std::unordered_set<std::shared_ptr<Connection>> connections_;  // (io)
  std::unique_ptr<RunNetworkService> run_network_;               // (io)
  LiveRules live_rules_;                                         // (io)
  std::map<std::uint64_t, OpenQuestion> questions_;              // (io) by id, oldest first
  std::uint64_t next_question_ = 1;                              // (io)
  // How long a run's request waits for an answer when ask mode is off.
  static constexpr std::chrono::seconds kRequestWaits{600};
  unsigned auth_failures_ = 0;  // (io)
  std::thread thread_;
  std::mutex control_;    // serializes cut/restore/stop callers
  bool stopped_ = false;  // under control_
  std::mutex cache_mutex_;
  std::map<std::string, std::pair<Clock::time_point, std::vector<boost::asio::ip::address>>>
      cache_;  // under cache_mutex_
  mutable std::mutex refused_mutex_;
  std::map<std::tuple<std::string, std::uint16_t, std::string, bool>, std::uint64_t>
      refused_;                                      // under refused_mutex_
  std::map<std::string, std::uint64_t> challenged_;  // under refused_mutex_
  std::set<std::string> authenticated_;              // under refused_mutex_
};

}  // namespace px::proxy
