// libFuzzer target over everything the proxy reads from a client before it
// connects anywhere: the ClientHello of a tunnel, the head parser, the request's meaning, the auth header,
// the host rule and the chunked-body tracker.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/host_rules.hpp"
#include "proxy/request_parser.hpp"
#include "proxy/tls_sni.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace px::proxy;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  // The first bytes of a tunnel, read as a TLS ClientHello.
  const ClientHelloSni hello = read_client_hello_sni(input);
  if (hello.status == ClientHelloSni::Status::found && hello.host.empty()) __builtin_trap();
  if (hello.status == ClientHelloSni::Status::found) (void)sni_matches(hello.host, "allowed.test");

  Request request;
  const ParseResult parsed = parse_request_head(input, HeadLimits{}, request);
  if (parsed.state == ParseState::good) {
    if (request.head_size > size) __builtin_trap();
    Target target;
    if (interpret(request, target).ok()) {
      if (target.endpoint.host.empty() || target.endpoint.port == 0) __builtin_trap();
      if (!target.is_connect) {
        const std::string head = upstream_head(request, target);
        // Whatever came in, no Proxy-* header goes out.
        if (head.find("\r\nProxy-") != std::string::npos) __builtin_trap();
      }
    }
    (void)check_proxy_auth(request, "0123456789abcdef0123456789abcdef");
    ChunkedTracker body;
    const auto step = body.feed(input.substr(request.head_size));
    if (step.consumed > size - request.head_size) __builtin_trap();
  } else if (parsed.state == ParseState::bad && parsed.status == 0) {
    __builtin_trap();
  }

  // The raw bytes as an authority and as a host name.
  HostPort hp;
  if (parse_authority(input, false, 80, hp).ok()) {
    std::string again;
    if (!check_host_name(hp.host, again).ok() || again != hp.host) __builtin_trap();  // normalizing is stable
    if (!host_matches(hp.host, hp.host)) __builtin_trap();
  }
  return 0;
}
