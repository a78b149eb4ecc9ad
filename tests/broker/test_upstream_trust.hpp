#pragma once
// The CA the broker's upstream side trusts beside the system store, in the
// test and bench executables only (test_upstream_trust.cpp; see
// host/src/broker/upstream_trust.hpp for why this is a link-time choice).
#include <string>

namespace px::broker::test {

void set_test_upstream_ca(const std::string& pem);

}  // namespace px::broker::test
