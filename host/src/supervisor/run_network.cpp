#include "supervisor/run_network.hpp"

#include <arpa/inet.h>
#include <sys/resource.h>

#include <cstring>

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
  return c;
}

Result<std::unique_ptr<proxy::ProxyServer>> start_run_proxy(const policy::Policy& policy,
                                                            const std::string& password,
                                                            const std::filesystem::path& log,
                                                            backend::NetworkHandOff handoff,
                                                            std::shared_ptr<proxy::Terminator> broker) {
  PX_TRY_ASSIGN(auto server, proxy::ProxyServer::adopt(
                                 run_proxy_config(policy, password, log, std::move(broker)),
                                 std::move(handoff.proxy_listener), proxy::resolver_from_environment()));
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

}  // namespace px::supervisor
