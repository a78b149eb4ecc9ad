#pragma once
// The run's network beyond the proxy's socket, made by the seal's init inside
// the run's network namespace (only a process in it can bind there), then
// served by the supervisor's proxy:
//   - the synthetic ranges (198.18.0.0/15 and a random unique-local /64) made
//     local on `lo` with AnyIP routes (rtnetlink; no `ip` binary), so that a
//     connection to any of their addresses stays inside the namespace: to a
//     listening socket of the proxy, or refused at once (RST) where none is;
//   - the run's DNS: UDP and TCP sockets on 127.0.0.1:53 and [::1]:53;
//   - the socket channel: the init keeps one end and, until the run ends,
//     makes sockets on the supervisor's request (common/socket_request.hpp).
#include <netinet/in.h>

#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::seal::net {

struct SyntheticRanges {
  in_addr v4_base{};  // 198.18.0.0
  unsigned v4_bits = 15;
  std::optional<in6_addr> v6_prefix;  // a /64; none when the run has no IPv6
};

struct CaptureSockets {
  SyntheticRanges ranges;
  std::vector<UniqueFd> dns_udp;   // bound to 127.0.0.1:53 (and [::1]:53)
  std::vector<UniqueFd> dns_tcp;   // listening on the same
  UniqueFd channel_theirs;         // the supervisor's end of the socket channel
  UniqueFd channel_mine;           // the init's end
  std::vector<std::string> notes;  // what was left out (IPv6), and why
};

// In the init, inside the new network namespace (lo up). IPv6 is best effort
// (a note when the kernel has it off); everything else failing fails the run.
Result<CaptureSockets> open_capture();

// "198.18.0.0/15 fd12:3456:789a:1::/64" (the v6 part only when present), and back.
std::string format_ranges(const SyntheticRanges& ranges);
std::optional<SyntheticRanges> parse_ranges(const std::string& text);

// Serves one request from the socket channel. Listening sockets are made only
// on the synthetic ranges and on loopback, connections only to loopback: the
// init makes nothing else, whoever asks. Returns false at EOF or a broken channel.
bool serve_socket_request(int channel, const SyntheticRanges& ranges);

}  // namespace px::seal::net
