#pragma once
// Brokered credentials: the run holds a placeholder, the broker swaps in the
// secret on requests to the hosts the credential is bound to, and refuses a
// request that carries a placeholder (or the secret) anywhere else.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/credential_spec.hpp"
#include "broker/secret_source.hpp"
#include "broker/stream_match.hpp"
#include "common/error.hpp"
#include "proxy/request_parser.hpp"

namespace px::broker {

// A credential with its secret read and its placeholder drawn.
struct Credential {
  std::string name;
  std::string secret;
  std::string placeholder;
  std::vector<std::string> hosts;
  std::vector<std::string> headers;  // lower case
  std::vector<std::string> env;
  bool bound_to(std::string_view host) const;
};

// Where a placeholder was seen going to a host it is not bound to.
struct Exfiltration {
  std::string credential;  // its name
  std::string host;
  std::string where;  // "request target", "header authorization", "request body"
};

struct HeadOutcome {
  std::optional<Exfiltration> exfiltration;  // set: refuse the request
  std::vector<std::string> substituted;      // names of the credentials swapped in
};

class CredentialSet {
 public:
  CredentialSet() = default;
  // Checks the specs (names, hosts), reads every secret, checks it, draws its
  // placeholder and registers both with the redactor. Any failure fails the
  // whole set: a run never starts half-brokered.
  static Result<CredentialSet> resolve(const std::vector<CredentialSpec>& specs,
                                       const SecretLimits& limits = {});
  // From credentials whose secrets are already read (tests, fuzzing). Each
  // placeholder must be as long as its secret (make_placeholder's are): a
  // substitution must never change the length of a body.
  static Result<CredentialSet> from_resolved(std::vector<Credential> credentials);
  ~CredentialSet();
  CredentialSet(CredentialSet&&) noexcept = default;
  CredentialSet& operator=(CredentialSet&&) noexcept = default;

  bool empty() const { return credentials_.empty(); }
  const std::vector<Credential>& credentials() const { return credentials_; }
  // The variables a run gets: each credential's env names with its placeholder.
  std::vector<std::pair<std::string, std::string>> environment() const;

  // A request head going to `host` (a terminated host): swaps placeholders of
  // credentials bound to `host` for their secrets in Authorization (Bearer,
  // token, Basic user:password decoded and re-encoded), x-api-key and the
  // credential's own headers; and looks everywhere in the head (target,
  // percent-decoded target, every header name and value) for placeholders or
  // secrets of credentials not bound to `host`.
  HeadOutcome apply_to_head(std::string_view host, proxy::Request& request) const;

  // One text (a CONNECT target, a plain-HTTP head, a server name) going to
  // `host`: a credential not bound to `host` whose placeholder or secret it holds.
  std::optional<Exfiltration> find_outbound(std::string_view host, std::string_view text,
                                            std::string_view where) const;

  // A scanner for the bodies of requests to `host`: the placeholders and
  // secrets of the credentials not bound to it, in every encoded form; the
  // tag is the credential's index. Empty when there is nothing to look for.
  StreamScanner body_scanner(std::string_view host) const;
  // A replacer for responses from `host`: each secret bound to it back to its
  // placeholder (as is, hex, base64), so a server that echoes the secret does
  // not hand it to the run. Its replace_in() serves header values.
  StreamReplacer response_replacer(std::string_view host) const;

 private:
  explicit CredentialSet(std::vector<Credential> credentials);
  std::vector<Credential> credentials_;
  // Per credential: the encoded forms of its placeholder and secret.
  std::vector<std::vector<std::string>> forms_;
};

// Percent-decodes every %XX (for looking, not for forwarding).
std::string percent_decode(std::string_view text);

}  // namespace px::broker
