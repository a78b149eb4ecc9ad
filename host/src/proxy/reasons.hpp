#pragma once
// Every decision the proxy takes carries one of these constants: it is sent to
// the client in the `x-proxy-error` header, written to the decision log, and is
// what tests assert on. They are part of the user interface (docs/proxy.md).
#include <string_view>

namespace px::proxy::reason {

inline constexpr std::string_view allowed = "allowed";

// Request syntax (400, 414, 431, 408).
inline constexpr std::string_view bad_request_line = "bad-request-line";
inline constexpr std::string_view bad_method = "bad-method";
inline constexpr std::string_view bad_version = "bad-version";
inline constexpr std::string_view bad_header = "bad-header";
inline constexpr std::string_view bare_line_feed = "bare-line-feed";
inline constexpr std::string_view obs_fold = "obsolete-line-folding";
inline constexpr std::string_view duplicate_header = "duplicate-header";
inline constexpr std::string_view request_line_too_long = "request-line-too-long";
inline constexpr std::string_view headers_too_large = "headers-too-large";
inline constexpr std::string_view too_many_headers = "too-many-headers";
inline constexpr std::string_view header_timeout = "header-timeout";
inline constexpr std::string_view bad_target = "bad-target";
inline constexpr std::string_view origin_form = "not-a-proxy-request";
inline constexpr std::string_view unsupported_scheme = "unsupported-scheme";
inline constexpr std::string_view bad_host = "bad-host";
inline constexpr std::string_view bad_port = "bad-port";
inline constexpr std::string_view userinfo = "userinfo-refused";
inline constexpr std::string_view host_mismatch = "host-header-mismatch";
inline constexpr std::string_view body_framing = "ambiguous-body-framing";

// Authentication (407).
inline constexpr std::string_view auth_required = "proxy-auth-required";
inline constexpr std::string_view auth_failed = "proxy-auth-failed";

// Policy (403).
inline constexpr std::string_view ip_literal = "ip-literal-refused";
inline constexpr std::string_view not_allowed = "blocked-by-allowlist";
inline constexpr std::string_view port_not_allowed = "port-not-allowed";
inline constexpr std::string_view offline = "network-offline";
inline constexpr std::string_view local_servers_off = "local-servers-off";
inline constexpr std::string_view local_address = "resolved-to-local-address";
// The port of a live `parallex ui` (common/ui_ports.hpp): never opened to a run.
inline constexpr std::string_view ui_port = "parallex-ui-port";
inline constexpr std::string_view paused = "paused";
// Ask mode: the user answered no, or nobody answered in time.
inline constexpr std::string_view denied_by_user = "denied-by-user";
inline constexpr std::string_view not_answered = "not-answered";
// A CONNECT tunnel whose TLS ClientHello names another server (domain
// fronting), or starts like TLS but cannot be read: closed after the 200.
inline constexpr std::string_view sni_mismatch = "sni-mismatch";
inline constexpr std::string_view tls_hello_unreadable = "tls-hello-unreadable";
// The run's credential broker (proxy/terminator.hpp): a destination name or a
// plain-HTTP request carrying the placeholder (or the secret) of a brokered
// credential that may not go to its host; and plain HTTP to a host whose TLS
// is terminated (its credentials and request rules apply over TLS only).
inline constexpr std::string_view credential_exfiltration = "credential-exfiltration";
inline constexpr std::string_view plain_http_to_terminated = "plain-http-to-terminated-host";

// A connection captured inside the run (made to a synthetic address, no
// HTTP answer possible: it is closed with a reset). On ports 80 and 443 the
// first bytes must be a TLS ClientHello or an HTTP request naming the host.
inline constexpr std::string_view unexpected_protocol = "unexpected-protocol";
inline constexpr std::string_view unknown_synthetic_address = "unknown-synthetic-address";

// The run's DNS, answered inside the run and never forwarded. Allowed names
// get "allowed"; names outside the rule "blocked-by-allowlist" (NXDOMAIN);
// names that are not host names "bad-host" / "ip-literal-refused" (REFUSED).
// The run's own service (http://parallex.invalid/, proxy/run_service.cpp):
// answered by the proxy, never forwarded.
inline constexpr std::string_view run_service = "run-service";
// Ask mode: a name outside the rule is answered (a synthetic address) so that
// the connection to it can be held and asked about.
inline constexpr std::string_view ask_on_connect = "ask-on-connect";
inline constexpr std::string_view dns_malformed = "dns-malformed";              // FORMERR, or dropped
inline constexpr std::string_view dns_not_implemented = "dns-not-implemented";  // another opcode: NOTIMP
inline constexpr std::string_view dns_type_refused = "dns-type-refused";  // not A/AAAA of class IN: REFUSED
inline constexpr std::string_view too_many_names = "too-many-names";  // the synthetic table is full: SERVFAIL
inline constexpr std::string_view capture_failed = "capture-failed";  // no listener could be made: SERVFAIL

// Capacity and upstream (503, 502, 504).
// An upstream response head (plain HTTP) past ProxyLimits::max_response_head: 502.
inline constexpr std::string_view response_head_too_large = "response-head-too-large";
inline constexpr std::string_view too_many_connections = "too-many-connections";
inline constexpr std::string_view resolve_failed = "resolve-failed";
inline constexpr std::string_view connect_failed = "connect-failed";
inline constexpr std::string_view connect_timeout = "connect-timeout";

// A request cut short because the proxy shut down.
inline constexpr std::string_view stopped = "stopped";

// Allowed by the rule but not reached: the name did not resolve, the host did
// not answer, its answer was too large. Said apart from the refusals: the
// rule is not what stopped them, and --allow would not help.
inline bool is_upstream_failure(std::string_view why) {
  return why == resolve_failed || why == connect_failed || why == connect_timeout ||
         why == response_head_too_large;
}

}  // namespace px::proxy::reason
