#pragma once
// Network namespace: a sealed run sees only its own loopback. Its one way out
// is the proxy's listening socket, created here (inside the namespace) and
// handed to the supervisor, which serves it from the host's namespace.
#include <cstdint>
#include <utility>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::seal::net {

// New network, IPC and UTS namespaces; `lo` brought up.
Status enter_namespace_with_loopback();

// In the run's own network namespace, servers of the command may bind any
// port, 1-1023 included (ip_unprivileged_port_start = 0): the command holds no
// capability, and a test suite's server on port 80 is ordinary work there.
Status allow_every_port();

// A listening TCP socket on 127.0.0.1 with a port the kernel chose.
Result<std::pair<UniqueFd, std::uint16_t>> listen_on_loopback();

}  // namespace px::seal::net
