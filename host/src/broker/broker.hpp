#pragma once
// The run's credential broker: terminates TLS for the hosts that need it (a
// brokered credential or request rules), swaps placeholders for secrets on
// the way to the hosts they are bound to, applies each host's request rules,
// and logs one line per request. Every other host stays an end-to-end tunnel
// in the proxy. See docs/broker.md.
//
// The proxy keeps every decision about *where* a connection may go (the
// network rule, the resolved address, Local servers); the broker decides
// what may be *said* there. The proxy reaches it through proxy::Terminator
// (proxy/terminator.hpp), set in its ProxyConfig by the run's supervisor
// (supervisor/run_broker.cpp): connections to a terminated host go to
// relay() after the destination decision and the connect to the checked
// address; destination names, plain-HTTP heads and bodies go through
// outbound_credential() and body_check(); cut and stop call abort_all().
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/credentials.hpp"
#include "broker/request_rules.hpp"
#include "broker/trust_bundle.hpp"
#include "common/error.hpp"
#include "proxy/request_parser.hpp"
#include "proxy/terminator.hpp"

namespace px::broker {

struct RelayLimits {
  proxy::HeadLimits request_head;                             // 8 KiB line, 16 KiB / 100 fields
  proxy::HeadLimits response_head{8 * 1024, 64 * 1024, 256};  // a server's head may be larger
  std::chrono::milliseconds handshake_timeout{10'000};        // both TLS handshakes
  std::chrono::milliseconds header_timeout{10'000};           // a request head, from its first byte
  std::chrono::milliseconds idle_timeout{10 * 60'000};        // no byte either way
};

struct BrokerConfig {
  // Hosts with request rules, and passthrough hosts. A host with rules is
  // terminated; a passthrough host never is.
  std::vector<HostRequestRules> hosts;
  // Credentials; every host they are bound to is terminated. A credential
  // bound to "localhost:PORT" goes to a model server on this machine, which
  // must be listed in local_servers.
  std::vector<CredentialSpec> credentials;
  // Model servers on this machine that credentials are bound to: the port,
  // and whether it speaks TLS (https://localhost:PORT) or plain HTTP.
  struct LocalServer {
    std::uint16_t port = 0;
    bool tls = false;
  };
  std::vector<LocalServer> local_servers;
  // The run's private state (exists, 0700): the CA bundle is written here.
  std::filesystem::path state_dir;
  // requests.jsonl in the run's folder; empty: no log.
  std::filesystem::path request_log;
  // The system bundle the run's bundle starts from (read, never written).
  std::filesystem::path system_bundle = kSystemBundle;
  // The user's own CAs (PEM certificates only, trust_bundle.hpp
  // pem_certificates), added to the run's bundle after its CA.
  std::string extra_cas;
  RelayLimits limits;
  SecretLimits secret_limits;
  std::chrono::seconds ca_validity = std::chrono::hours(24 * 30);
};

// How a relayed connection ended, for the proxy's own log line of it.
using RelayEnd = proxy::RelayEnd;

struct BrokerReport {
  struct Host {
    std::string host;
    std::uint64_t requests = 0;
    std::uint64_t refused = 0;
  };
  struct Attempt {  // a placeholder (or a secret) seen going where it may not go
    std::string credential;
    std::string host;
    std::string where;
    std::uint64_t count = 0;
  };
  struct Failure {  // a connection refused before its first request
    std::string host;
    std::string reason;
    std::uint64_t count = 0;
  };
  std::vector<Host> hosts;
  std::vector<Attempt> exfiltration;
  std::vector<Failure> failures;
};

// The end-of-run lines: requests per host, exfiltration attempts, refusals.
std::string format_report(const BrokerReport& report);

struct BrokerContext;  // what every relay of the run shares (relay.hpp)

class Broker final : public proxy::Terminator {
 public:
  // Validates the configuration, reads every secret (a failure fails the run:
  // it does not start), makes the run's CA and writes its bundle to
  // state_dir. With nothing to terminate, no CA is made and terminates() is
  // always false.
  static Result<std::shared_ptr<Broker>> create(BrokerConfig config);
  ~Broker() override;
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // True for a host with a credential or request rules (exact, normalized
  // name), unless passthrough. Independent of the port: a rule cannot be
  // walked around on another port.
  bool terminates(std::string_view host) const;
  // The proxy's question (terminator.hpp): a terminated host's TLS on every
  // port; a model server on this machine (localhost, 127.0.0.1 or [::1]) a
  // credential is bound to, on its port only, plain or TLS as its URL says.
  proxy::Termination termination(std::string_view host, std::uint16_t port) const override;
  // The terminated hosts, and each model server on this machine as
  // "localhost:PORT (plain HTTP)".
  std::vector<std::string> terminated_hosts() const;

  // Takes over an allowed connection to a terminated host. `client`: after the
  // proxy's "200 Connection Established" (or a captured connection); `early`:
  // bytes the proxy already read from the client after that point (TLS
  // records); `upstream`: connected to an address the proxy checked. Runs on
  // the sockets' executor (the proxy's io thread); `on_end` is called there
  // once. Must be called on that thread.
  void relay(boost::asio::ip::tcp::socket client, std::string early, boost::asio::ip::tcp::socket upstream,
             const std::string& host, std::uint16_t port,
             std::function<void(const RelayEnd&)> on_end = {}) override;

  // Closes every relayed connection ("cut" for the kill switch, "stopped");
  // on the io thread.
  void abort_all(std::string_view how) override;

  // A text going to `host` outside a terminated connection (a CONNECT target,
  // a server name, a plain-HTTP head): the credential whose placeholder or
  // secret it carries, if `host` is not one of its hosts. Recorded in the
  // report and the log when found. Thread-safe.
  std::optional<Exfiltration> check_outbound(std::string_view host, std::string_view text,
                                             std::string_view where);
  // The same for the proxy (terminator.hpp): the credential's name.
  std::optional<std::string> outbound_credential(std::string_view host, std::string_view text,
                                                 std::string_view where) override;
  // The bodies of plain-HTTP requests to `host` (not terminated): a finding is
  // recorded like check_outbound's. Null when no credential may be refused there.
  std::unique_ptr<proxy::OutboundBodyCheck> body_check(std::string_view host) override;

  // The CA bundle and the CA alone, in state_dir (empty paths: no CA).
  const TrustFiles& trust_files() const;
  // The variables for the run: the trust variables pointing at
  // `bundle_in_view`, and each credential's variables holding its placeholder.
  std::vector<std::pair<std::string, std::string>> environment(
      const std::string& bundle_in_view = kSystemBundle) const;
  const CredentialSet& credentials() const;

  BrokerReport report() const;

 private:
  Broker() = default;
  std::shared_ptr<BrokerContext> context_;
};

}  // namespace px::broker
