#pragma once
// The broker's decisions, each a constant: sent to the client in the
// `x-proxy-error` header of a refusal, written to the request log, asserted on
// by the tests. Part of the user interface (docs/broker.md), like
// proxy/reasons.hpp, whose syntax reasons the broker reuses for request heads.
#include <string_view>

#include "proxy/reasons.hpp"

namespace px::broker::reason {

// The words both say mean the same thing: defined once, in proxy/reasons.hpp.
inline constexpr std::string_view allowed = proxy::reason::allowed;

// Request rules (403).
inline constexpr std::string_view rule_denied = "request-rule-denied";
inline constexpr std::string_view no_rule_matched = "no-request-rule-matched";
// A path the rules cannot judge the way the server will read it: dot
// segments, an encoded '/' or '\', empty segments (400).
inline constexpr std::string_view ambiguous_path = "ambiguous-path";

// Brokered credentials (403).
inline constexpr std::string_view exfiltration = proxy::reason::credential_exfiltration;

// The request inside the tunnel (400, 421).
inline constexpr std::string_view not_origin_form = "not-origin-form";
inline constexpr std::string_view missing_host = "missing-host-header";
inline constexpr std::string_view wrong_host = "misdirected-request";
inline constexpr std::string_view upgrade_refused = "upgrade-refused";

// The client side of the TLS connection.
inline constexpr std::string_view sni_mismatch = proxy::reason::sni_mismatch;
inline constexpr std::string_view client_refused_ca = "client-refused-run-ca";
inline constexpr std::string_view client_tls_failed = "client-tls-failed";

// The upstream side (502).
inline constexpr std::string_view upstream_certificate = "upstream-certificate-invalid";
inline constexpr std::string_view upstream_tls_failed = "upstream-tls-failed";
inline constexpr std::string_view bad_upstream_response = "bad-upstream-response";
inline constexpr std::string_view upstream_closed = "upstream-closed";

// Time limits (408) and shutdown.
inline constexpr std::string_view header_timeout = proxy::reason::header_timeout;
inline constexpr std::string_view idle_timeout = "idle-timeout";
inline constexpr std::string_view stopped = "stopped";

}  // namespace px::broker::reason
