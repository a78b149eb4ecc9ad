#pragma once
// The proxy of a run, from its Policy: the rules (host rules with their ports,
// Local servers, published ports) and, for a sealed run, the sockets the
// seal's init made inside the run's network namespace (the proxy's listener,
// the run's DNS, the socket channel). The hook supervisor::run calls.
#include <filesystem>
#include <memory>
#include <string>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "policy/policy.hpp"
#include "proxy/proxy.hpp"
#include "proxy/terminator.hpp"

namespace px::supervisor {

// The proxy's rules come from the Policy and nowhere else; `broker`, the
// run's credential broker (supervisor/run_broker.hpp), terminates what it must.
proxy::ProxyConfig run_proxy_config(const policy::Policy& policy, const std::string& password,
                                    const std::filesystem::path& log,
                                    std::shared_ptr<proxy::Terminator> broker = nullptr);

// Starts the run's proxy on the sockets of the network hand-off (a sealed
// run's, made inside its namespace; or only a listener on loopback).
Result<std::unique_ptr<proxy::ProxyServer>> start_run_proxy(
    const policy::Policy& policy, const std::string& password, const std::filesystem::path& log,
    backend::NetworkHandOff handoff, std::shared_ptr<proxy::Terminator> broker = nullptr);

}  // namespace px::supervisor
