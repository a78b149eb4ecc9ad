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

// A listening TCP socket on 127.0.0.1 with a port the kernel chose.
Result<std::pair<UniqueFd, std::uint16_t>> listen_on_loopback();

}  // namespace px::seal::net
