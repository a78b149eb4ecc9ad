// PolicyBuilder: the run's credential broker (policy/brokered.hpp). Every
// host goes through the one validator of host names (common/host_rule.hpp),
// so a name a credential or a rule is bound to is checked exactly like a
// network rule, where it is given.
#include <algorithm>

#include "common/ascii.hpp"
#include "common/host_rule.hpp"
#include "policy/policy_builder.hpp"

namespace px::policy {

namespace {

bool is_token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_variable_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

constexpr std::string_view kShapes[] = {"github-token", "anthropic-key", "openai-key", "jwt", "any"};

}  // namespace

std::string check_credential_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return "a credential's name has 1 to 64 characters";
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
      return "a credential's name is lower-case letters, digits, '-' and '_' (e.g. github, "
             "anthropic-api-key)";
  return {};
}

std::string credential_name_of_variable(std::string_view variable) {
  std::string out;
  for (char c : variable) out += c == '_' ? '-' : ascii_lower(c);
  return out;
}

PolicyBuilder& PolicyBuilder::request_rules(const std::string& host, std::vector<broker::RequestRule> rules,
                                            Origin origin) {
  auto name = parse_exact_host(host);
  if (!name) return fail(Error::invalid(origin.describe() + ": request rules: " + name.error().message));
  auto& all = policy_.request_rules_;
  all.erase(std::remove_if(all.begin(), all.end(), [&](auto& h) { return h.host == name.value(); }),
            all.end());
  all.push_back({name.value(), false, std::move(rules), std::move(origin)});
  return *this;
}

PolicyBuilder& PolicyBuilder::passthrough(const std::string& host, Origin origin) {
  auto name = parse_exact_host(host);
  if (!name) return fail(Error::invalid(origin.describe() + ": passthrough: " + name.error().message));
  auto& all = policy_.request_rules_;
  all.erase(std::remove_if(all.begin(), all.end(), [&](auto& h) { return h.host == name.value(); }),
            all.end());
  all.push_back({name.value(), true, {}, std::move(origin)});
  return *this;
}

PolicyBuilder& PolicyBuilder::credential(BrokeredCredential c) {
  broker::CredentialSpec& s = c.spec;
  const std::string who = c.origin.describe() + ": credential \"" + s.name + "\"";
  if (auto why = check_credential_name(s.name); !why.empty())
    return fail(
        Error::invalid(c.origin.describe() + ": credential \"" + s.name.substr(0, 64) + "\": " + why));
  if (s.hosts.empty())
    return fail(
        Error::invalid(who + " is bound to no host; list the hosts it may be sent to (hosts: [...])"));
  for (auto& h : s.hosts) {
    if (broker::local_server_port(h)) continue;  // localhost:PORT, a model server on this machine
    auto name = parse_exact_host(h);
    if (!name) return fail(Error::invalid(who + ": " + name.error().message));
    h = name.value();
  }
  std::sort(s.hosts.begin(), s.hosts.end());
  s.hosts.erase(std::unique(s.hosts.begin(), s.hosts.end()), s.hosts.end());
  for (const auto& v : s.env)
    if (!is_variable_name(v))
      return fail(Error::invalid(who + ": '" + v + "' is not a variable name (letters, digits and '_')"));
  if (!c.base_url_variable.empty() && !is_variable_name(c.base_url_variable))
    return fail(Error::invalid(who + ": '" + c.base_url_variable + "' is not a variable name"));
  for (const auto& h : s.headers)
    if (h.empty() || !std::all_of(h.begin(), h.end(), is_token_char))
      return fail(Error::invalid(who + ": '" + h + "' is not a header name"));
  if (!s.shape.empty() && std::find(std::begin(kShapes), std::end(kShapes), s.shape) == std::end(kShapes))
    return fail(Error::invalid(who + ": the shape '" + s.shape +
                               "' is not known; use github-token, anthropic-key, openai-key, jwt or any"));
  switch (s.source.kind) {
    case broker::SecretSource::Kind::file:
      if (!s.source.file.is_absolute())
        return fail(Error::invalid(who + ": the secret file '" + s.source.file.string() +
                                   "' is not an absolute path: write it from '/' or '~/'"));
      break;
    case broker::SecretSource::Kind::command:
      if (s.source.command.empty() || s.source.command.front().empty())
        return fail(Error::invalid(who + ": the secret command is empty; give it as a list, e.g. "
                                         "{command: [pass, show, github/agent]}"));
      break;
    case broker::SecretSource::Kind::env:
      if (!is_variable_name(s.source.env))
        return fail(Error::invalid(who + ": '" + s.source.env + "' is not a variable name"));
      break;
    case broker::SecretSource::Kind::value:
      // Held by parallex itself (the agent's store): the value travels in the
      // run's plan, never in the Policy.
      if (!s.source.value.empty()) return fail(Error::internal(who + " carries its secret into the policy"));
      break;
  }
  for (const auto& f : c.masked_files)
    if (!f.is_absolute()) return fail(Error::internal(who + ": a masked file is not absolute"));
  s.origin = c.origin.describe();
  // The run holds a placeholder; the file that holds the secret itself is
  // denied like the agent's token, under its name and its real path (a link
  // to it, or a read grant that covers it, must not hand it over).
  if (s.source.kind == broker::SecretSource::Kind::file) {
    const std::string why =
        "the secret of the credential \"" + s.name + "\": the broker reads it, the run never does";
    deny(s.source.file, why, c.origin);
    std::error_code ec;
    const fs::path real = fs::canonical(s.source.file, ec);
    if (!ec && real != s.source.file) deny(real, why, c.origin);
  }
  auto& all = policy_.credentials_;
  // A credential replaced by another of its name (a profile's own `github`
  // over the agent's) leaves behind the files it masked, and they still hold
  // its secret: the replacement cannot mask a secret it does not know, so
  // they are hidden from the run instead (`off` is different: the user asked
  // for the run to hold that secret).
  for (const auto& old : all) {
    if (old.spec.name != s.name) continue;
    for (const auto& f : old.masked_files)
      if (std::find(c.masked_files.begin(), c.masked_files.end(), f) == c.masked_files.end())
        deny(f, "it holds the secret of the credential \"" + s.name + "\" that " + s.origin + " replaced",
             old.origin);
  }
  all.erase(std::remove_if(all.begin(), all.end(), [&](auto& e) { return e.spec.name == s.name; }),
            all.end());
  all.push_back(std::move(c));
  return *this;
}

PolicyBuilder& PolicyBuilder::drop_credential(const std::string& name, Origin origin) {
  if (auto why = check_credential_name(name); !why.empty())
    return fail(Error::invalid(origin.describe() + ": credential \"" + name.substr(0, 64) + "\": " + why));
  auto& all = policy_.credentials_;
  all.erase(std::remove_if(all.begin(), all.end(), [&](auto& e) { return e.spec.name == name; }), all.end());
  return *this;
}

PolicyBuilder& PolicyBuilder::amend_credential(const BrokeredCredential& changes,
                                               const std::set<std::string>& fields) {
  const std::string& name = changes.spec.name;
  auto& all = policy_.credentials_;
  auto it = std::find_if(all.begin(), all.end(), [&](auto& e) { return e.spec.name == name; });
  if (it == all.end())
    return fail(
        Error::invalid(changes.origin.describe() + ": credential \"" + name.substr(0, 64) +
                       "\" gives no secret, and no earlier layer or default defines one of that name: "
                       "add secret: {command: [...]}, {file: PATH} or {env: NAME}"));
  BrokeredCredential amended = *it;
  const auto& s = changes.spec;
  if (fields.count("hosts")) amended.spec.hosts = s.hosts;
  if (fields.count("env")) amended.spec.env = s.env;
  if (fields.count("headers")) amended.spec.headers = s.headers;
  if (fields.count("shape")) amended.spec.shape = s.shape;
  if (fields.count("expires")) amended.spec.expires = s.expires;
  // Bound to hosts of the user's choosing now, not to a base URL's.
  if (fields.count("hosts")) amended.base_url_variable.clear();
  amended.origin = changes.origin;
  amended.reason = it->reason.empty() ? "" : it->reason + " (amended)";
  return credential(std::move(amended));
}

Status PolicyBuilder::check_brokered() const {
  for (const auto& h : policy_.request_rules_) {
    if (!h.passthrough) continue;
    for (const auto& c : policy_.credentials_)
      if (std::find(c.spec.hosts.begin(), c.spec.hosts.end(), h.host) != c.spec.hosts.end())
        return Error::invalid(
            "credential \"" + c.spec.name + "\" (" + c.origin.describe() + ") is bound to " + h.host +
            ", which is passthrough (" + h.origin.describe() +
            "): the broker could never swap it in there. Remove the host from the credential, "
            "or the passthrough switch.");
  }
  // A host the user named (in a profile or agent.yaml) that no network rule
  // lets the run reach: its rules or its credential could never apply, and a
  // misspelt name would leave the real host unbrokered. Defaults (the
  // agent's token, a plugin's provider key) are bound whether or not the run
  // reaches their hosts.
  const auto& net = policy_.network_;
  const auto unreachable = [&](const std::string& host) {
    if (const auto port = broker::local_server_port(host)) return !net.local_port_allowed(*port);
    if (net.mode != NetworkMode::allowlist || net.hosts.empty()) return false;
    return std::none_of(net.hosts.begin(), net.hosts.end(),
                        [&](const HostRule& r) { return host_rule_matches(host, r.pattern); });
  };
  const auto written = [](const Origin& o) { return o.line > 0; };
  for (const auto& h : policy_.request_rules_)
    if (written(h.origin) && unreachable(h.host))
      return Error::invalid(std::string(h.passthrough ? "passthrough" : "request rules") + " for " + h.host +
                            " (" + h.origin.describe() + "): no network rule lets the run reach " + h.host +
                            "; allow it (--allow " + h.host + ", or network.allow) or remove the entry");
  for (const auto& c : policy_.credentials_)
    if (written(c.origin))
      for (const auto& host : c.spec.hosts)
        if (unreachable(host))
          return Error::invalid("credential \"" + c.spec.name + "\" (" + c.origin.describe() +
                                ") is bound to " + host +
                                ", which no network rule lets the run reach; allow it (" +
                                (broker::local_server_port(host)
                                     ? "--local-servers=" + host.substr(10) + ", or network.local_servers"
                                     : "--allow " + host + ", or network.allow") +
                                ") or remove it from the credential's hosts");
  const auto& all = policy_.credentials_;
  for (std::size_t i = 0; i < all.size(); ++i)
    for (std::size_t j = i + 1; j < all.size(); ++j)
      for (const auto& v : all[i].spec.env)
        if (std::find(all[j].spec.env.begin(), all[j].spec.env.end(), v) != all[j].spec.env.end())
          return Error::invalid("the variable " + v + " is given by two credentials, \"" + all[i].spec.name +
                                "\" (" + all[i].origin.describe() + ") and \"" + all[j].spec.name + "\" (" +
                                all[j].origin.describe() + "); give it to one of them");
  return px::ok();
}

}  // namespace px::policy
