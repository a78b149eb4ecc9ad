#pragma once
// The per-run HTTP proxy: the only way out of a sealed run. It accepts CONNECT
// tunnels and absolute-form plain HTTP (one request per connection), checks the
// per-run password, the host rule and the address a name resolves to, and logs
// one JSON line per decision. See docs/proxy.md.
//
// Threads: the server runs one io_context thread of its own (all connection
// state lives there) and one resolver thread (getaddrinfo blocks). Every public
// method is safe to call from any other thread; cut(), restore() and stop()
// return once the io thread has carried them out.
#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "common/host_rule.hpp"
#include "common/unique_fd.hpp"
#include "proxy/live_rules.hpp"
#include "proxy/request_parser.hpp"
#include "proxy/synthetic_names.hpp"
#include "proxy/terminator.hpp"

namespace px::proxy {

enum class NetworkMode { offline, allowlist, online };

// Ask mode: a connection the rule would refuse (a name outside it, a port it
// does not allow, an offline run) is held while the user is asked. One
// question per host and port: connections to the same place wait on it.
struct Question {
  std::uint64_t id = 0;  // per run, from 1
  std::string host;      // normalized name
  std::uint16_t port = 0;
  std::string rule_reason;  // what the rule said: blocked-by-allowlist, port-not-allowed, network-offline
  // The first asking connection's two ends as the run sees them ("127.0.0.1:50412"
  // and the proxy's "127.0.0.1:8080"): the supervisor finds the process that
  // holds the client's end by both, which no other socket of the run's network
  // namespace has (a name of the client's end alone may be another socket's in
  // another namespace).
  std::string client;
  std::string server;
  std::string asked_at;  // ISO-8601, UTC
  std::chrono::steady_clock::time_point deadline;
};

// How a question ended. `outcome`: allowed-once, allowed-for-run, denied,
// denied-for-run, not-answered, stopped, paused.
struct QuestionEnd {
  std::string outcome;
  std::string by;  // who answered; empty when nobody did
  std::string at;
  std::size_t connections = 0;  // how many were waiting on it
};

struct AskHooks {
  // Called on the proxy's io thread: must not block.
  std::function<void(const Question&)> asked;
  std::function<void(const Question&, const QuestionEnd&)> closed;
};

struct ProxyLimits {
  HeadLimits head;                                      // 8 KiB line, 16 KiB / 100 header fields
  std::chrono::milliseconds header_timeout{10'000};     // whole head, from accept (slowloris)
  std::chrono::milliseconds connect_timeout{15'000};    // resolve + connect upstream
  std::chrono::milliseconds idle_timeout{10 * 60'000};  // tunnel with no byte either way
  std::size_t max_connections = 512;                    // open client connections per run
  std::size_t max_response_head = 64 * 1024;            // plain HTTP: an upstream head past it is a 502
  std::size_t max_names = 4096;                         // names the run's DNS gives addresses to
};

struct ProxyConfig {
  NetworkMode mode = NetworkMode::offline;
  // Host rules (common/host_rule.hpp): "github.com" (itself and its
  // subdomains), "*.corp.example" (its subdomains), "github.com:22" (that port).
  std::vector<std::string> allowed_hosts;
  // The ports of rules without one, and of every host when online.
  std::vector<std::uint16_t> allowed_ports{80, 443};
  bool local_servers = false;  // CONNECT localhost:PORT -> 127.0.0.1:PORT; local addresses allowed
  // With local_servers: the only ports it opens, sorted; empty: every port.
  std::vector<std::uint16_t> local_server_ports;
  // Local servers is on for `port` (this machine's loopback, a private answer), and it is
  // not the port of a live `parallex ui` (common/ui_ports.hpp).
  bool local_port_allowed(std::uint16_t port) const;
  std::string password;            // required in Proxy-Authorization; at least 16 bytes
  std::filesystem::path log_path;  // JSON lines, created 0600; empty: no log file
  ProxyLimits limits;
  std::vector<HostRuleSpec> rules;  // allowed_hosts, parsed by validate()
  // The run's credential broker (proxy/terminator.hpp), or null: nothing is
  // terminated and no credential is looked for.
  std::shared_ptr<Terminator> terminator;
  // Ask mode: how long a held connection waits for an answer; zero: what the
  // rule refuses is refused at once.
  std::chrono::milliseconds ask_timeout{0};
  AskHooks ask_hooks;
  // The run's id, named in refusals' "to allow it" line; empty: not named.
  std::string run_id;
};

// What a sealed run's network namespace hands the proxy besides its listening
// socket (backend/seal/launch.hpp, NetworkHandOff): the run's DNS sockets,
// the socket channel to the seal's init, and the synthetic ranges routed to
// the run's lo. With it the proxy answers the run's DNS and takes the
// connections programs make to the names it answered (capture).
struct RunNetwork {
  std::vector<UniqueFd> dns_udp;
  std::vector<UniqueFd> dns_tcp;
  UniqueFd socket_channel;
  SyntheticRanges ranges;
  // Local servers, both ways: this machine's listening loopback ports
  // mirrored into the run as localhost:PORT (only with Local servers on), and
  // servers of the run published on this machine's loopback.
  bool mirror_host_ports = false;
  struct Published {
    std::uint16_t inside = 0;
    std::uint16_t host = 0;
  };
  std::vector<Published> published;
};

// Checks a config and returns it with the allowed hosts normalized. An unusable
// config is an error, never a wider network.
Result<ProxyConfig> validate(ProxyConfig config);

// Turns a host name into addresses. The default calls getaddrinfo; tests pass
// their own to map names to loopback and to see which names were looked up.
using Resolver = std::function<Result<std::vector<boost::asio::ip::address>>(const std::string& host)>;
// getaddrinfo, the default.
Resolver system_resolver();

struct RefusedHost {
  std::string host;  // normalized name (requests with malformed names are not listed)
  std::uint16_t port = 0;
  std::string reason;
  std::uint64_t count = 0;
  bool dns = false;  // refused by the run's DNS (the name was asked, never looked up)
};

class ProxyServer {
 public:
  // Binds `address:port` (port 0 picks a free one) and starts serving.
  static Result<std::unique_ptr<ProxyServer>> listen(ProxyConfig config, const std::string& address,
                                                     std::uint16_t port, Resolver resolver = {});
  // Serves on a TCP socket that is already bound and listening, e.g. one made
  // inside a run's network namespace and received over SCM_RIGHTS.
  static Result<std::unique_ptr<ProxyServer>> adopt(ProxyConfig config, UniqueFd listening_socket,
                                                    Resolver resolver = {});

  ~ProxyServer();
  ProxyServer(const ProxyServer&) = delete;
  ProxyServer& operator=(const ProxyServer&) = delete;

  // "127.0.0.1:40123" ("[::1]:40123" for IPv6).
  std::string listen_address() const;
  std::uint16_t port() const;

  // Serves a sealed run's DNS, captured connections and local ports (once,
  // after adopt()). Fails when a published port cannot be bound on this machine.
  Status serve_run_network(RunNetwork network);

  // Kill switch: closes every connection and answers new requests with 403
  // "paused" (logged with verdict "paused") until restore().
  void cut();
  void restore();
  bool is_cut() const;

  // Closes every connection and the listening socket; idempotent.
  void stop();

  // Hosts refused by the rule so far, most frequent first.
  std::vector<RefusedHost> refused_hosts() const;

  // Live rules: applied at once to new connections and the run's DNS (a
  // connection already open keeps going). `change.rule` is parsed
  // (parse_host_rule); recorded with `by` and `at` as given.
  void change_rule(RuleChange change);
  std::vector<RuleChange> rule_changes() const;
  // Whether a new connection to `host` (a name as a URL gives it, or
  // localhost) on `port` would pass the rule as it stands now, live changes
  // included: the decision a connection gets before anything is resolved
  // (destination.hpp), asked of the proxy itself so that nothing else keeps a
  // copy of the rule. For what the run's opener marks (supervisor/run_opener).
  bool allows_now(const std::string& host, std::uint16_t port) const;

  // Ask mode: the questions open now, oldest first.
  std::vector<Question> questions() const;
  // Answers question `id`: its connections go on (allow) or are refused with
  // "denied-by-user". `for_run`: the answer becomes a live rule of the run
  // (allow host:port, or deny host), so the next connection is not asked.
  // An error when no such question is open (answered, timed out, unknown).
  Status answer(std::uint64_t id, bool allow, bool for_run, const std::string& by);

  class Impl;

 private:
  explicit ProxyServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// 32 hex characters from RAND_bytes (128 bits).
Result<std::string> generate_password();

// Reads a password file (first line). Refuses files readable by group or
// others. The message never contains the password.
Result<std::string> read_password_file(const std::filesystem::path& path);
// Creates `path` with mode 0600 (it must not exist) and writes the password.
Status write_password_file(const std::filesystem::path& path, const std::string& password);

// The environment a proxied child gets: HTTP(S)_PROXY, ALL_PROXY (both cases),
// NO_PROXY for loopback (empty with Local servers: then loopback names mean
// this machine's servers, reached through the proxy), and git's http.proxy
// through GIT_CONFIG_*.
std::vector<std::pair<std::string, std::string>> proxy_environment(std::uint16_t port,
                                                                   const std::string& password,
                                                                   bool local_servers = false);

}  // namespace px::proxy
