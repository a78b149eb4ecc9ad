#include "supervisor/run_network.hpp"

#include <arpa/inet.h>
#include <sys/resource.h>

#include <cstring>

#include "common/redact.hpp"
#include "killswitch/run_control.hpp"
#include "proxy/test_resolver.hpp"

namespace px::supervisor {
namespace {

proxy::NetworkMode to_proxy_mode(policy::NetworkMode mode) {
  switch (mode) {
    case policy::NetworkMode::online:
      return proxy::NetworkMode::online;
    case policy::NetworkMode::allowlist:
      return proxy::NetworkMode::allowlist;
    case policy::NetworkMode::offline:
      return proxy::NetworkMode::offline;
  }
  return proxy::NetworkMode::offline;
}

proxy::SyntheticRanges ranges_of(const backend::NetworkHandOff::SyntheticRanges& in) {
  proxy::SyntheticRanges r;
  r.v4_base = boost::asio::ip::address_v4(in.v4_base);
  r.v4_bits = in.v4_bits;
  if (in.v6_prefix) r.v6_prefix = boost::asio::ip::address_v6(*in.v6_prefix);
  return r;
}

// Every name the run resolves holds a few listening sockets (one per allowed
// port and address family) in this process: the soft limit of 1024 descriptors
// would run out at a few hundred names. Raised to the hard limit, here only:
// the seal was forked before, so the run keeps its own.
void raise_descriptor_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &r);
  }
}

}  // namespace

proxy::ProxyConfig run_proxy_config(const policy::Policy& p, const std::string& password,
                                    const std::filesystem::path& log,
                                    std::shared_ptr<proxy::Terminator> broker) {
  proxy::ProxyConfig c;
  c.mode = to_proxy_mode(p.network().mode);
  for (const auto& h : p.network().hosts) c.allowed_hosts.push_back(h.text());
  c.allowed_ports = p.network().ports;
  c.local_servers = p.network().local_servers;
  c.local_server_ports = p.network().local_server_ports;
  c.password = password;
  c.log_path = log;
  c.terminator = std::move(broker);
  c.ask_timeout = p.network().ask;
  return c;
}

Result<std::unique_ptr<proxy::ProxyServer>> start_run_proxy(const policy::Policy& policy,
                                                            proxy::ProxyConfig config,
                                                            backend::NetworkHandOff handoff) {
  PX_TRY_ASSIGN(auto server, proxy::ProxyServer::adopt(std::move(config), std::move(handoff.proxy_listener),
                                                       proxy::resolver_from_environment()));
  if (!handoff.socket_channel) return server;  // a weaker seal without a network namespace
  raise_descriptor_limit();
  proxy::RunNetwork network;
  network.ranges = ranges_of(handoff.synthetic_ranges);
  network.dns_udp = std::move(handoff.dns_udp);
  network.dns_tcp = std::move(handoff.dns_tcp);
  network.socket_channel = std::move(handoff.socket_channel);
  network.mirror_host_ports = policy.network().local_servers;
  for (const auto& p : policy.network().published) network.published.push_back({p.inside, p.host});
  PX_TRY(server->serve_run_network(std::move(network)));
  return server;
}

NetworkProxy::~NetworkProxy() = default;

Status NetworkProxy::start(const std::string& run_id, const std::string& agent,
                           const std::function<void(const run::Notice&)>& say, const run::EventLog* events) {
  if (!wanted_) return ok();
  RunQuestionsOptions options{run_id, agent, policy_.network().ask};
  options.events = events;
  questions_ = std::make_unique<RunQuestions>(options);
  run_id_ = run_id;
  if (policy_.network().ask.count() > 0)
    say({run::NoticeKind::network,
         "ask mode: a connection outside the network rule waits up to " +
             std::to_string(policy_.network().ask.count()) +
             " s for your answer; `parallex approve` in another terminal lists and answers "
             "them (run " +
             run_id + ")"});
  PX_TRY_ASSIGN(password_, proxy::generate_password());
  register_secret(password_);
  return ok();
}

Result<backend::EnvMap> NetworkProxy::on_socket(backend::NetworkHandOff handoff,
                                                const std::filesystem::path& log,
                                                std::shared_ptr<proxy::Terminator> broker) {
  const std::uint16_t port = handoff.proxy_port;
  proxy::ProxyConfig config = run_proxy_config(policy_, password_, log, std::move(broker));
  config.run_id = run_id_;
  config.ask_hooks = questions_->hooks();
  PX_TRY_ASSIGN(auto started, start_run_proxy(policy_, std::move(config), std::move(handoff)));
  std::lock_guard lock(mu_);
  proxy_ = std::move(started);
  if (cut_) proxy_->cut();
  questions_->attach(proxy_.get(), processes_);
  backend::EnvMap extra;
  // Offline, the proxy reaches nothing: no program is pointed at it.
  if (policy_.network().mode != policy::NetworkMode::offline)
    for (auto& [k, v] : proxy::proxy_environment(port, password_, policy_.network().local_servers))
      extra[k] = v;
  return extra;
}

void NetworkProxy::cut() {
  std::lock_guard lock(mu_);
  cut_ = true;
  if (proxy_) proxy_->cut();
}

void NetworkProxy::restore() {
  std::lock_guard lock(mu_);
  cut_ = false;
  if (proxy_) proxy_->restore();
}

void NetworkProxy::on_started(killswitch::RunControl& control) {
  std::lock_guard lock(mu_);
  processes_ = [&control] { return control.processes(); };
  if (proxy_ && questions_) questions_->attach(proxy_.get(), processes_);
}

bool NetworkProxy::allows_now(const std::string& host, std::uint16_t port) {
  // Held while the proxy answers: stop() takes it away under the same lock.
  std::lock_guard lock(mu_);
  if (proxy_) return proxy_->allows_now(host, port);
  return policy_.may_connect(host, port);
}

std::optional<nlohmann::json> NetworkProxy::handle(const nlohmann::json& request, const std::string& by) {
  if (!questions_) return std::nullopt;  // a run without a network: "unknown op"
  return questions_->handle(request, by);
}

void NetworkProxy::stop(run::RunRecord& record) {
  std::unique_ptr<proxy::ProxyServer> proxy;
  {
    std::lock_guard lock(mu_);
    proxy = std::move(proxy_);
  }
  if (!proxy) return;
  // Detached first: its live changes are kept, and no request reaches a proxy that stops.
  if (questions_) questions_->attach(nullptr, {});
  proxy->stop();
  if (questions_) record.network_live = questions_->record();
  for (const auto& h : proxy->refused_hosts())
    record.refused.push_back({redact(h.host), h.port, h.reason, h.count, h.dns});
}

void NetworkProxy::release() {
  if (questions_) questions_->attach(nullptr, {});
  std::lock_guard lock(mu_);
  if (proxy_) proxy_->stop();
}

}  // namespace px::supervisor
