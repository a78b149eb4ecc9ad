#pragma once
// Host names and host rules: the one syntax of an allowed host, checked the
// same way wherever a rule is given (--allow, a profile's network.allow,
// agent.yaml, a workspace's .parallex.yaml, `parallex proxy --allow`) and
// wherever a name is asked for (the proxy's requests, the run's DNS).
//
//   github.com              the name and every name under it, on the network's ports (80, 443)
//   *.internal.example      only the names under it
//   github.com:22           that port only (one port per rule; repeat the rule for more)
//
// Pure functions, no I/O: every spelling is a unit test, and the whole file is
// fuzzable. A name that fails here is never handed to a resolver.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace px {

enum class NameProblem { none, empty, too_long, bad_label, bad_character, userinfo, ip_literal };

// Accepts only plain DNS names (letters, digits, '-' in labels of 1..63
// characters). Lower-cases and drops one trailing dot into `normalized`. IP
// literals in any spelling (dotted, decimal, hex, octal, short, bracketed or
// bare IPv6) are `ip_literal`: resolvers read a name whose last label is a
// number as IPv4 (127.1, 0x7f.1, 2130706433).
NameProblem check_dns_name(std::string_view raw, std::string& normalized);

struct HostRuleSpec {
  std::string pattern;                // normalized: "github.com" or "*.github.com"
  std::optional<std::uint16_t> port;  // none: the network's ports (80 and 443 unless more are allowed)
  // "github.com", "github.com:22": what parse_host_rule reads back.
  std::string text() const;
};

// Reads one rule. The error names the input and says what to write instead:
// schemes, paths, user parts, IP addresses, port 0, ports past 65535, port
// ranges, misplaced wildcards and public suffixes (com, co.uk, github.io) are
// refused here, at the moment they are given.
Result<HostRuleSpec> parse_host_rule(std::string_view text);

// One exact host name (no wildcard, no port), as credentials and request
// rules name the hosts they apply to: the same checks as a rule.
Result<std::string> parse_exact_host(std::string_view text);

// `host` (normalized) matches `pattern` on label boundaries: "github.com"
// matches itself and its subdomains, "*.github.com" only its subdomains.
bool host_rule_matches(std::string_view host, std::string_view pattern);

// A name under which anyone may register their own (com, co.uk, github.io):
// allowing it would allow every site under it. From a small embedded list of
// the common ones, plus every single label (a top-level domain). Not the whole
// Public Suffix List: a rare suffix missing here is accepted.
bool is_public_suffix(std::string_view normalized_name);

}  // namespace px
