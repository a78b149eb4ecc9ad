#include "common/host_rule.hpp"

#include <algorithm>

#include "common/ascii.hpp"
#include "common/port.hpp"
#include "common/shown.hpp"

namespace px {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_hex(char c) {
  return is_digit(c) || (ascii_lower(c) >= 'a' && ascii_lower(c) <= 'f');
}

// An unbracketed IPv6 literal (::1, fe80::1): hex digits, ':' and '.' only.
bool looks_like_ipv6(std::string_view s) {
  return std::count(s.begin(), s.end(), ':') >= 2 &&
         std::all_of(s.begin(), s.end(), [](char c) { return is_hex(c) || c == ':' || c == '.'; });
}

// An IPv6 address as it may stand in brackets, with an optional zone
// (RFC 6874: letters, digits and "-._~" after the '%').
bool is_bracketed_ipv6(std::string_view s) {
  const std::size_t percent = s.find('%');
  if (!looks_like_ipv6(s.substr(0, percent))) return false;
  if (percent == std::string_view::npos) return true;
  const std::string_view zone = s.substr(percent + 1);
  return !zone.empty() && std::all_of(zone.begin(), zone.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-' || c == '.' ||
           c == '_' || c == '~';
  });
}

// The WHATWG URL "ends in a number" rule, which inet_aton follows too.
bool last_label_is_number(std::string_view label) {
  if (label.empty()) return false;
  if (std::all_of(label.begin(), label.end(), is_digit)) return true;
  if (label.size() >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X'))
    return std::all_of(label.begin() + 2, label.end(), is_hex);
  return false;
}

// Names under which anyone registers their own sites: the common second-level
// registries and the hosting platforms of the Public Suffix List's private
// section that agents meet. Single labels (com, io, dev, any TLD) are refused
// without a list.
constexpr std::string_view kPublicSuffixes[] = {
    "co.uk",
    "org.uk",
    "ac.uk",
    "gov.uk",
    "me.uk",
    "ltd.uk",
    "plc.uk",
    "net.uk",
    "com.au",
    "net.au",
    "org.au",
    "edu.au",
    "gov.au",
    "co.nz",
    "org.nz",
    "co.jp",
    "ne.jp",
    "or.jp",
    "ac.jp",
    "go.jp",
    "com.br",
    "net.br",
    "org.br",
    "com.cn",
    "net.cn",
    "org.cn",
    "co.in",
    "net.in",
    "org.in",
    "co.za",
    "com.mx",
    "com.tr",
    "com.ar",
    "com.sg",
    "com.hk",
    "co.kr",
    "or.kr",
    "com.tw",
    "co.il",
    "com.ua",
    "github.io",
    "githubusercontent.com",
    "gitlab.io",
    "herokuapp.com",
    "vercel.app",
    "netlify.app",
    "pages.dev",
    "workers.dev",
    "appspot.com",
    "blogspot.com",
    "web.app",
    "firebaseapp.com",
    "azurewebsites.net",
    "cloudfront.net",
    "s3.amazonaws.com",
    "compute.amazonaws.com",
    "elasticbeanstalk.com",
    "fly.dev",
    "onrender.com",
    "glitch.me",
    "ngrok.io",
    "ngrok-free.app",
    "repl.co",
    "deno.dev",
};

Error rule_error(std::string_view text, const std::string& what) {
  return Error::invalid("The allowed host '" + shown(text.substr(0, 100)) + "' " + what);
}

}  // namespace

NameProblem check_dns_name(std::string_view raw, std::string& normalized) {
  normalized.clear();
  if (raw.empty()) return NameProblem::empty;
  // A bracketed IPv6 literal ([::1], [::ffff:127.0.0.1], [fe80::1%eth0]).
  // Only an address is one: anything else in brackets is a bad name, so a
  // refusal never hands the client's bracketed text back as "an address".
  if (raw.front() == '[')
    return raw.size() > 2 && raw.back() == ']' && is_bracketed_ipv6(raw.substr(1, raw.size() - 2))
               ? NameProblem::ip_literal
               : NameProblem::bad_character;
  if (raw.find('@') != std::string_view::npos) return NameProblem::userinfo;
  if (raw.size() > 254) return NameProblem::too_long;
  for (char c : raw) {
    // Non-ASCII, percent-encoding and anything outside letters, digits, '-'
    // and '.' (including '_', '*', ':', '\\') are refused, never decoded.
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-' || c == '.';
    if (!ok) return looks_like_ipv6(raw) ? NameProblem::ip_literal : NameProblem::bad_character;
  }
  std::string_view name = raw;
  if (name.back() == '.') name.remove_suffix(1);  // one trailing dot: the root
  if (name.empty()) return NameProblem::empty;
  if (name.size() > 253) return NameProblem::too_long;
  std::string_view last_label;
  for (std::size_t start = 0;;) {
    const std::size_t dot = name.find('.', start);
    const std::string_view label = name.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-')
      return NameProblem::bad_label;
    last_label = label;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (last_label_is_number(last_label)) return NameProblem::ip_literal;
  normalized = ascii_lower(name);
  return NameProblem::none;
}

std::string HostRuleSpec::text() const {
  return port ? pattern + ":" + std::to_string(*port) : pattern;
}

Result<HostRuleSpec> parse_host_rule(std::string_view text) {
  if (text.empty()) return Error::invalid("An allowed host is empty; give a name such as github.com.");
  if (text.find("://") != std::string_view::npos)
    return rule_error(text,
                      "has a scheme: give the host name alone, e.g. github.com (add :PORT for a port "
                      "other than 80 and 443, e.g. github.com:22).");
  if (text.find('/') != std::string_view::npos)
    return rule_error(text, "has a path: give the host name alone, e.g. github.com.");
  if (text.find('@') != std::string_view::npos)
    return rule_error(text, "has a user part: give the host name alone, e.g. github.com.");
  if (text.front() == '[' || looks_like_ipv6(text))
    return rule_error(text, "is an IP address: only host names can be allowed; give the server's name.");

  HostRuleSpec spec;
  std::string_view host = text;
  if (const std::size_t colon = text.find(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    const std::string_view port = text.substr(colon + 1);
    if (port.empty()) return rule_error(text, "ends with ':' but gives no port; write e.g. github.com:22.");
    if (port.find_first_of("-,:") != std::string_view::npos)
      return rule_error(text,
                        "gives more than one port; give one port per rule and repeat the rule, e.g. "
                        "--allow " +
                            shown(host) + ":5432 --allow " + shown(host) + ":5433.");
    if (!std::all_of(port.begin(), port.end(), is_digit))
      return rule_error(text, "has a port that is not a number; give a port between 1 and 65535.");
    const auto value = parse_port(port);
    if (!value)
      return rule_error(text, "has the port " + shown(port) +
                                  ", which is not a port: give one between 1 and 65535 (no leading zero).");
    spec.port = *value;
  }
  std::string_view name = host;
  const bool wildcard = name.rfind("*.", 0) == 0;
  if (wildcard) name.remove_prefix(2);
  if (name.find('*') != std::string_view::npos)
    return rule_error(text,
                      "has a wildcard in the wrong place: only a leading '*.' is allowed (subdomains "
                      "only), and a plain name already covers its subdomains.");
  std::string normalized;
  switch (check_dns_name(name, normalized)) {
    case NameProblem::none:
      break;
    case NameProblem::ip_literal:
      return rule_error(text, "is an IP address: only host names can be allowed; give the server's name.");
    case NameProblem::empty:
      return rule_error(text, "has no host name; give one such as github.com.");
    case NameProblem::too_long:
      return rule_error(text, "is longer than a host name can be (253 characters).");
    case NameProblem::bad_label:
      return rule_error(text,
                        "has an empty label, a label longer than 63 characters or one that starts or ends "
                        "with '-'; give a host name such as github.com.");
    case NameProblem::bad_character:
    case NameProblem::userinfo:
      return rule_error(text,
                        "is not a plain host name (letters, digits, '-' and '.'; give international "
                        "names in their xn-- form, without scheme or path).");
  }
  if (is_public_suffix(normalized))
    return rule_error(text, std::string("names ") + (wildcard ? "every site under " : "") +
                                "the public suffix '" + normalized +
                                "', under which anyone can register a site: allowing it would "
                                "allow all of them. Give the site's own name, e.g. example." +
                                normalized + ".");
  spec.pattern = wildcard ? "*." + normalized : normalized;
  return spec;
}

bool host_rule_matches(std::string_view host, std::string_view pattern) {
  if (pattern.rfind("*.", 0) == 0) {
    const std::string_view base = pattern.substr(1);  // ".github.com"
    return host.size() > base.size() && host.substr(host.size() - base.size()) == base;
  }
  if (pattern.empty() || host.size() < pattern.size()) return false;
  if (host.size() == pattern.size()) return host == pattern;
  return host.substr(host.size() - pattern.size()) == pattern &&
         host[host.size() - pattern.size() - 1] == '.';
}

bool is_public_suffix(std::string_view name) {
  if (name.find('.') == std::string_view::npos) return true;
  return std::find(std::begin(kPublicSuffixes), std::end(kPublicSuffixes), name) != std::end(kPublicSuffixes);
}

Result<std::string> parse_exact_host(std::string_view text) {
  PX_TRY_ASSIGN(auto rule, parse_host_rule(text));
  if (rule.port || rule.pattern.rfind("*.", 0) == 0)
    return Error::invalid(
        "'" + std::string(text.substr(0, 100)) +
        "' is not one host name: give the exact name (no '*.', no port), e.g. api.github.com");
  return rule.pattern;
}

}  // namespace px
