#include "common/host_rule.hpp"
#include "broker/broker.hpp"

#include <algorithm>

#include "broker/reasons.hpp"
#include "broker/relay.hpp"
#include "broker/run_ca.hpp"
#include "broker/tls_contexts.hpp"
#include "proxy/host_rules.hpp"

namespace px::broker {

Result<std::shared_ptr<Broker>> Broker::create(BrokerConfig config) {
  auto ctx = std::make_shared<BrokerContext>();
  ctx->limits = config.limits;

  // Hosts: rules and passthrough switches, each host once.
  std::vector<std::string> passthrough;
  for (auto& h : config.hosts) {
    auto name = parse_exact_host(h.host);
    if (!name) return Error::invalid("request rules: " + name.error().message);
    h.host = name.value();
    if (ctx->rules.count(h.host) > 0 ||
        std::find(passthrough.begin(), passthrough.end(), h.host) != passthrough.end()) {
      return Error::invalid("request rules: the host " + h.host + " is listed twice; merge its entries.");
    }
    if (h.passthrough) {
      if (!h.rules.empty()) {
        return Error::invalid("request rules: " + h.host +
                              " is passthrough (never terminated), so its request rules could never apply; "
                              "remove the rules or the passthrough switch.");
      }
      passthrough.push_back(h.host);
      continue;
    }
    ctx->terminated.push_back(h.host);
    ctx->rules.emplace(h.host, std::move(h));
  }
  // Model servers on this machine: their port only, TLS ones under the name
  // localhost (the CA mints its leaf), plain ones read as they come.
  for (const auto& l : config.local_servers) {
    ctx->local_servers[l.port] = l.tls;
    if (l.tls &&
        std::find(ctx->terminated.begin(), ctx->terminated.end(), "localhost") == ctx->terminated.end())
      ctx->terminated.push_back("localhost");
  }
  // Credentials: a host they are bound to is terminated, unless it is
  // passthrough, which is a contradiction the user must resolve.
  for (const auto& spec : config.credentials) {
    for (const auto& raw : spec.hosts) {
      if (const auto port = local_server_port(raw)) {
        if (ctx->local_servers.count(*port) == 0)
          return Error::internal("credential \"" + spec.name + "\" is bound to " + raw +
                                 ", a server on this machine the broker was not told of");
        continue;
      }
      auto name = parse_exact_host(raw);
      if (!name) return Error::invalid("credential \"" + spec.name + "\": " + name.error().message);
      if (std::find(passthrough.begin(), passthrough.end(), name.value()) != passthrough.end()) {
        return Error::invalid(
            "credential \"" + spec.name + "\" is bound to " + name.value() +
            ", which is passthrough: the broker could never swap it in there. Remove the host "
            "from the credential, or the passthrough switch.");
      }
      if (std::find(ctx->terminated.begin(), ctx->terminated.end(), name.value()) == ctx->terminated.end()) {
        ctx->terminated.push_back(name.value());
      }
    }
  }
  // Every secret is read and checked now: a run never starts half-brokered.
  PX_TRY_ASSIGN(ctx->credentials, CredentialSet::resolve(config.credentials, config.secret_limits));

  std::shared_ptr<Broker> broker(new Broker());
  broker->context_ = ctx;
  if (ctx->terminated.empty() && ctx->local_servers.empty()) return broker;
  if (!config.request_log.empty()) {
    PX_TRY_ASSIGN(ctx->log, RequestLog::open(config.request_log));
  }
  if (ctx->terminated.empty()) return broker;  // plain HTTP only: no CA, no bundle

  if (config.state_dir.empty()) return Error::internal("the broker needs the run's private state folder");
  PX_TRY_ASSIGN(ctx->ca, RunCa::create(ctx->terminated, config.ca_validity));
  PX_TRY_ASSIGN(auto client_facing, make_client_facing_context());
  PX_TRY_ASSIGN(auto upstream, make_upstream_context());
  ctx->client_facing = std::make_unique<boost::asio::ssl::context>(client_facing.release());
  ctx->upstream = std::make_unique<boost::asio::ssl::context>(upstream.release());
  // Last: a run whose broker failed is never left with a bundle that trusts a
  // CA nobody serves.
  PX_TRY_ASSIGN(ctx->trust, write_trust_files(config.state_dir, ctx->ca->certificate_pem(),
                                              config.system_bundle, config.extra_cas));
  return broker;
}

Broker::~Broker() = default;

bool Broker::terminates(std::string_view host) const {
  const auto& t = context_->terminated;
  return std::find(t.begin(), t.end(), host) != t.end();
}

proxy::Termination Broker::termination(std::string_view host, std::uint16_t port) const {
  // This machine is its servers' ports, each on its own: a credential bound to
  // one never reaches another, and every other port stays a tunnel.
  if (proxy::is_loopback_name(host)) {
    const auto it = context_->local_servers.find(port);
    if (it == context_->local_servers.end()) return proxy::Termination::none;
    return it->second ? proxy::Termination::tls : proxy::Termination::plain;
  }
  return terminates(host) ? proxy::Termination::tls : proxy::Termination::none;
}

std::vector<std::string> Broker::terminated_hosts() const {
  std::vector<std::string> out;
  for (const auto& h : context_->terminated)
    if (h != "localhost") out.push_back(h);
  for (const auto& [port, tls] : context_->local_servers)
    out.push_back(local_server_binding(port) + (tls ? " (this machine)" : " (plain HTTP, this machine)"));
  return out;
}

void Broker::relay(boost::asio::ip::tcp::socket client, std::string early,
                   boost::asio::ip::tcp::socket upstream, const std::string& host, std::uint16_t port,
                   std::function<void(const RelayEnd&)> on_end) {
  auto& live = context_->live;
  live.erase(std::remove_if(live.begin(), live.end(), [](const auto& w) { return w.expired(); }), live.end());
  const proxy::Termination how = termination(host, port);
  if (how == proxy::Termination::none) {
    // The proxy asked for a host the broker does not terminate: a bug in the
    // caller. Closed, never relayed unterminated by accident.
    boost::system::error_code ig;
    client.close(ig);
    upstream.close(ig);
    if (on_end) on_end(RelayEnd{"error", reason::client_tls_failed, 0, 0, 0});
    return;
  }
  RelayTarget target{host, port, host, how == proxy::Termination::tls, false};
  if (proxy::is_loopback_name(host)) {
    target.host = "localhost";
    target.binding = local_server_binding(port);
    target.local = true;
  }
  auto relay = std::make_shared<Relay>(context_, std::move(client), std::move(early), std::move(upstream),
                                       std::move(target), std::move(on_end));
  live.push_back(relay);
  relay->start();
}

void Broker::abort_all(std::string_view how) {
  auto live = std::move(context_->live);
  context_->live.clear();
  for (auto& w : live) {
    if (auto r = w.lock()) r->abort(how);
  }
}

std::optional<Exfiltration> Broker::check_outbound(std::string_view host, std::string_view text,
                                                   std::string_view where) {
  auto e = context_->credentials.find_outbound(host, text, where);
  if (e) {
    context_->note_exfiltration(*e);
    if (context_->log) {
      RequestRecord r;
      r.host = std::string(host);
      r.verdict = "denied";
      r.reason = reason::exfiltration;
      r.status = 403;
      r.detail = "placeholder of credential " + e->credential + " in the " + e->where;
      context_->log->write(r);
    }
  }
  return e;
}

std::optional<std::string> Broker::outbound_credential(std::string_view host, std::string_view text,
                                                       std::string_view where) {
  if (auto e = check_outbound(host, text, where)) return e->credential;
  return std::nullopt;
}

namespace {

// A plain-HTTP body to a host that is not terminated, scanned piece by piece
// with the same scanner the relay uses for bodies; a finding is recorded once.
class BodyCheck final : public proxy::OutboundBodyCheck {
 public:
  BodyCheck(std::shared_ptr<BrokerContext> ctx, std::string host, StreamScanner scanner)
      : ctx_(std::move(ctx)), host_(std::move(host)), scanner_(std::move(scanner)) {}

  std::optional<std::string> feed(std::string_view data) override {
    const int tag = scanner_.feed(data);
    if (tag < 0) return std::nullopt;
    const auto& cred = ctx_->credentials.credentials().at(static_cast<std::size_t>(tag));
    const Exfiltration e{cred.name, host_, "plain-HTTP request body"};
    ctx_->note_exfiltration(e);
    if (ctx_->log) {
      RequestRecord r;
      r.host = host_;
      r.verdict = "denied";
      r.reason = reason::exfiltration;
      r.status = 403;
      r.detail = "placeholder of credential " + e.credential + " in the " + e.where;
      ctx_->log->write(r);
    }
    return e.credential;
  }

 private:
  std::shared_ptr<BrokerContext> ctx_;
  std::string host_;
  StreamScanner scanner_;
};

}  // namespace

std::unique_ptr<proxy::OutboundBodyCheck> Broker::body_check(std::string_view host) {
  StreamScanner scanner = context_->credentials.body_scanner(host);
  if (scanner.empty()) return nullptr;
  return std::make_unique<BodyCheck>(context_, std::string(host), std::move(scanner));
}

const TrustFiles& Broker::trust_files() const {
  return context_->trust;
}

std::vector<std::pair<std::string, std::string>> Broker::environment(
    const std::string& bundle_in_view) const {
  std::vector<std::pair<std::string, std::string>> env;
  if (context_->ca) env = trust_environment(bundle_in_view);
  for (auto& v : context_->credentials.environment()) env.push_back(std::move(v));
  return env;
}

const CredentialSet& Broker::credentials() const {
  return context_->credentials;
}

BrokerReport Broker::report() const {
  return context_->report();
}

std::string format_report(const BrokerReport& report) {
  std::string out;
  for (const auto& h : report.hosts) {
    out += "requests (terminated): " + h.host + "  " + std::to_string(h.requests) + " (" +
           std::to_string(h.refused) + " refused)\n";
  }
  for (const auto& a : report.exfiltration) {
    out += "EXFILTRATION ATTEMPT refused: credential " + a.credential + " sent to " + a.host + " (" +
           a.where + ")  x" + std::to_string(a.count) + "\n";
  }
  for (const auto& f : report.failures) {
    out += "refused (terminated host): " + f.host + "  " + f.reason + "  x" + std::to_string(f.count) + "\n";
  }
  return out;
}

}  // namespace px::broker
