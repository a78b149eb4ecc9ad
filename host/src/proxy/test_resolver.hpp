#pragma once
// A test-only hook for the resolver of a run's proxy, so that end-to-end tests
// can give loopback servers names, as the proxy's own tests do with their
// resolver. PARALLEX_TEST_RESOLVE="gitsrv.test=127.0.0.1,api.test=::1" maps
// each listed name to its address; every other name goes to the system
// resolver as always. It cannot widen a run:
//   - only names under .test (RFC 6761: never a real name) are mapped;
//   - only to loopback addresses, which the proxy refuses unless the run has
//     Local servers on, and which Local servers reaches as localhost:PORT anyway;
//   - the names must still be allowed by the run's rule, on the port asked.
// Malformed entries are ignored (and said on stderr), never widened.
#include <string>

#include "proxy/proxy.hpp"

namespace px::proxy {

// The system resolver, or the hook's over it when the variable is set.
Resolver resolver_from_environment();

// The pure part: the hook's map from the variable's text; `problems` gets a
// line per entry that was ignored.
std::vector<std::pair<std::string, boost::asio::ip::address>> parse_test_resolve(const std::string& text,
                                                                                 std::string& problems);

}  // namespace px::proxy
