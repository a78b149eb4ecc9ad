#include "broker/credentials.hpp"

#include <openssl/crypto.h>

#include <algorithm>

#include "broker/placeholder.hpp"
#include "common/ascii.hpp"
#include "common/base64.hpp"
#include "common/host_rule.hpp"
#include "common/redact.hpp"
#include "proxy/host_rules.hpp"

namespace px::broker {
namespace {

bool is_token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Strict base64 of a Basic credential; nullopt if it is not.
std::optional<std::string> decode_basic(std::string_view in) {
  if (in.empty() || in.size() > 8192) return std::nullopt;
  return base64_decode(in);
}

// Authorization: the scheme's value holds the placeholder as is (Bearer,
// token, ...), or, for Basic, inside base64(user:password): git over HTTPS
// sends the token as the password, gh's credential helper too.
bool substitute_authorization(std::string& value, const Credential& c) {
  const std::size_t sp = value.find(' ');
  if (sp != std::string::npos && proxy::iequals(std::string_view(value).substr(0, sp), "basic")) {
    std::size_t start = sp;
    while (start < value.size() && value[start] == ' ') ++start;
    auto decoded = decode_basic(std::string_view(value).substr(start));
    if (!decoded) return false;
    const std::size_t n = replace_all(*decoded, c.placeholder, c.secret);
    if (n > 0) value = value.substr(0, start) + base64_encode(*decoded);
    OPENSSL_cleanse(decoded->data(), decoded->size());
    return n > 0;
  }
  return replace_all(value, c.placeholder, c.secret) > 0;
}

}  // namespace

bool Credential::bound_to(std::string_view host) const {
  return std::find(hosts.begin(), hosts.end(), host) != hosts.end();
}

std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

Result<CredentialSet> CredentialSet::from_resolved(std::vector<Credential> credentials) {
  for (const auto& c : credentials) {
    if (c.secret.empty() || c.placeholder.size() != c.secret.size() || c.placeholder == c.secret) {
      return Error::internal("credential \"" + c.name +
                             "\": its placeholder must differ from its secret and be as long");
    }
  }
  return CredentialSet(std::move(credentials));
}

CredentialSet::CredentialSet(std::vector<Credential> credentials) : credentials_(std::move(credentials)) {
  for (auto& c : credentials_) {
    for (auto& h : c.headers) h = ascii_lower(h);
    auto forms = encoded_forms(c.placeholder);
    for (auto& f : encoded_forms(c.secret)) forms.push_back(std::move(f));
    forms_.push_back(std::move(forms));
  }
}

CredentialSet::~CredentialSet() {
  for (auto& c : credentials_) OPENSSL_cleanse(c.secret.data(), c.secret.size());
  for (auto& forms : forms_) {
    for (auto& f : forms) OPENSSL_cleanse(f.data(), f.size());
  }
}

Result<CredentialSet> CredentialSet::resolve(const std::vector<CredentialSpec>& specs,
                                             const SecretLimits& limits) {
  std::vector<Credential> out;
  std::vector<std::string> taken;  // secrets and placeholders a new placeholder must differ from
  const auto fail = [&](Error e) -> Result<CredentialSet> {
    for (auto& c : out) OPENSSL_cleanse(c.secret.data(), c.secret.size());
    for (auto& t : taken) OPENSSL_cleanse(t.data(), t.size());
    return e;
  };
  for (const auto& spec : specs) {
    const std::string who = "credential \"" + spec.name + "\"";
    if (spec.name.empty() || spec.name.size() > 64 ||
        !std::all_of(spec.name.begin(), spec.name.end(), is_token_char)) {
      return fail(Error::invalid("credential name \"" + spec.name +
                                 "\": use lower-case letters, digits, '-' and '_' (at most 64)."));
    }
    if (std::any_of(out.begin(), out.end(), [&](const Credential& c) { return c.name == spec.name; })) {
      return fail(Error::invalid(who + " is declared twice; give each credential its own name."));
    }
    if (spec.hosts.empty()) {
      return fail(
          Error::invalid(who + " names no host it may be sent to; add its hosts (e.g. api.github.com)."));
    }
    Credential c;
    c.name = spec.name;
    for (const auto& h : spec.hosts) {
      if (local_server_port(h)) {
        if (!c.bound_to(h)) c.hosts.push_back(h);
        continue;
      }
      auto normalized = parse_exact_host(h);
      if (!normalized) return fail(Error::invalid(who + ": " + normalized.error().message));
      if (!c.bound_to(normalized.value())) c.hosts.push_back(normalized.value());
    }
    for (const auto& h : spec.headers) {
      const std::string name = ascii_lower(h);
      if (name.empty() || !std::all_of(name.begin(), name.end(), is_token_char)) {
        return fail(Error::invalid(who + ": \"" + h + "\" is not a header name."));
      }
      for (const char* framing :
           {"host", "content-length", "transfer-encoding", "connection", "proxy-authorization"}) {
        if (name == framing) {
          return fail(Error::invalid(who + ": a secret cannot be swapped into the " + h + " header."));
        }
      }
      c.headers.push_back(name);
    }
    for (const auto& v : spec.env) {
      const bool ok =
          !v.empty() && !(v[0] >= '0' && v[0] <= '9') && std::all_of(v.begin(), v.end(), [](char ch) {
            return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                   ch == '_';
          });
      if (!ok) return fail(Error::invalid(who + ": \"" + v + "\" is not an environment variable name."));
      c.env.push_back(v);
    }
    auto secret = read_secret(spec.name, spec.source, limits);
    if (!secret) return fail(secret.error());
    c.secret = std::move(secret).value();
    if (auto checked = check_secret(spec.name, c.secret, spec.shape, spec.expires); !checked) {
      OPENSSL_cleanse(c.secret.data(), c.secret.size());
      return fail(checked.error());
    }
    register_secret(c.secret);
    taken.push_back(c.secret);
    auto placeholder = make_placeholder(spec.name, c.secret, taken);
    if (!placeholder) {
      OPENSSL_cleanse(c.secret.data(), c.secret.size());
      return fail(placeholder.error());
    }
    c.placeholder = std::move(placeholder).value();
    register_secret(c.placeholder);
    taken.push_back(c.placeholder);
    out.push_back(std::move(c));
  }
  for (auto& t : taken) OPENSSL_cleanse(t.data(), t.size());
  return CredentialSet(std::move(out));
}

std::vector<std::pair<std::string, std::string>> CredentialSet::environment() const {
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& c : credentials_) {
    for (const auto& v : c.env) env.emplace_back(v, c.placeholder);
  }
  return env;
}

std::optional<Exfiltration> CredentialSet::find_outbound(std::string_view host, std::string_view text,
                                                         std::string_view where) const {
  std::optional<std::string> decoded;
  for (std::size_t i = 0; i < credentials_.size(); ++i) {
    if (credentials_[i].bound_to(host)) continue;
    if (!decoded && text.find('%') != std::string_view::npos) decoded = percent_decode(text);
    for (const auto& form : forms_[i]) {
      if (text.find(form) != std::string_view::npos ||
          (decoded && decoded->find(form) != std::string::npos)) {
        return Exfiltration{credentials_[i].name, std::string(host), std::string(where)};
      }
    }
  }
  return std::nullopt;
}

HeadOutcome CredentialSet::apply_to_head(std::string_view host, proxy::Request& request) const {
  HeadOutcome outcome;
  // Look first, so a refused request never has a secret written into it.
  if (auto e = find_outbound(host, request.target, "request target")) {
    outcome.exfiltration = std::move(e);
    return outcome;
  }
  for (const auto& h : request.headers) {
    std::string line = h.name + ": " + h.value;
    auto e = find_outbound(host, line, "header " + ascii_lower(h.name));
    if (!e && proxy::iequals(h.name, "authorization")) {
      // Basic credentials at any alignment are also caught decoded.
      const std::size_t sp = h.value.find(' ');
      if (sp != std::string::npos) {
        if (auto decoded = decode_basic(std::string_view(h.value).substr(sp + 1))) {
          e = find_outbound(host, *decoded, "header authorization");
          OPENSSL_cleanse(decoded->data(), decoded->size());
        }
      }
    }
    if (e) {
      outcome.exfiltration = std::move(e);
      return outcome;
    }
  }
  for (const auto& c : credentials_) {
    if (!c.bound_to(host)) continue;
    bool used = false;
    for (auto& h : request.headers) {
      const std::string name = ascii_lower(h.name);
      if (name == "authorization") {
        used = substitute_authorization(h.value, c) || used;
      } else if (name == "x-api-key" ||
                 std::find(c.headers.begin(), c.headers.end(), name) != c.headers.end()) {
        used = replace_all(h.value, c.placeholder, c.secret) > 0 || used;
      }
    }
    if (used) outcome.substituted.push_back(c.name);
  }
  return outcome;
}

StreamScanner CredentialSet::body_scanner(std::string_view host) const {
  std::vector<std::pair<std::string, int>> patterns;
  for (std::size_t i = 0; i < credentials_.size(); ++i) {
    if (credentials_[i].bound_to(host)) continue;
    for (const auto& f : forms_[i]) patterns.emplace_back(f, static_cast<int>(i));
  }
  return StreamScanner(std::move(patterns));
}

StreamReplacer CredentialSet::response_replacer(std::string_view host) const {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& c : credentials_) {
    if (!c.bound_to(host)) continue;
    const auto from = encoded_forms(c.secret, /*dedupe=*/false);
    const auto to = encoded_forms(c.placeholder, /*dedupe=*/false);
    for (std::size_t k = 0; k < from.size() && k < to.size(); ++k) pairs.emplace_back(from[k], to[k]);
  }
  return StreamReplacer(std::move(pairs));
}

}  // namespace px::broker
