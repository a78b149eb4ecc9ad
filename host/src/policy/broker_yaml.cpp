#include "policy/broker_yaml.hpp"

#include <ctime>

#include "common/clock.hpp"
#include "policy/yaml_values.hpp"

namespace px::policy {

namespace {

std::string at(const ProfileReader& r, int line) {
  return r.file() + ":" + std::to_string(line);
}

// A list of scalars, or one scalar.
std::vector<std::string> strings(ProfileReader& r, const YAML::Node& node, const std::string& key) {
  std::vector<std::string> out;
  if (!node || node.IsNull()) return out;
  if (node.IsScalar()) return {node.Scalar()};
  if (!node.IsSequence()) {
    r.fail(node, key, "expected a list of values");
    return out;
  }
  for (const auto& item : node) {
    auto v = r.scalar(item, key);
    if (!v) return {};
    out.push_back(*v);
  }
  return out;
}

// "2026-12-31" (that day, 00:00 UTC), "2026-12-31T18:00:00Z", or any time
// parse_iso_ms reads.
std::optional<std::chrono::system_clock::time_point> parse_date(const std::string& text) {
  const auto ms = parse_iso_ms(text);
  if (!ms) return std::nullopt;
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(*ms));
}

void read_rules(ProfileReader& r, const std::string& host, const YAML::Node& node, RequestRulesSection& out) {
  const std::string key = "requests." + host;
  if (node.IsScalar()) {
    if (node.Scalar() == "passthrough") {
      out.passthrough = true;
      return;
    }
    r.fail(node, key, "expected a list of rules, or 'passthrough'");
    return;
  }
  if (!node.IsSequence()) {
    r.fail(node, key, "expected a list of rules ({allow: GET /**}), or 'passthrough'");
    return;
  }
  for (const auto& item : node) {
    const std::string origin = at(r, r.line(item));
    Result<broker::RequestRule> rule = Error::invalid("");
    if (item.IsScalar()) {
      rule = broker::parse_request_rule_line(item.Scalar(), {}, origin);
    } else if (item.IsMap()) {
      if (!r.keys(item, key, {"allow", "deny", "reason"})) return;
      if (item["allow"] && item["deny"]) {
        r.fail(item, key, "a rule is either allow or deny, not both");
        return;
      }
      const char* action = item["allow"] ? "allow" : "deny";
      if (!item[action]) {
        r.fail(item, key, "a rule needs 'allow' or 'deny' (e.g. {allow: GET,HEAD /**})");
        return;
      }
      auto spec = r.scalar(item[action], key + "." + action);
      if (!spec) return;
      std::string reason;
      if (item["reason"]) {
        auto why = r.scalar(item["reason"], key + ".reason");
        if (!why) return;
        reason = *why;
      }
      rule = broker::parse_request_rule(action, *spec, reason, origin);
    } else {
      r.fail(item, key, "expected a rule ({allow: GET /**} or \"deny * /**\")");
      return;
    }
    if (!rule) {
      if (!r.error) r.error = Error::invalid(origin + ": " + key + ": " + rule.error().message);
      return;
    }
    out.rules.push_back(std::move(rule).value());
  }
  if (out.rules.empty()) r.fail(node, key, "lists no rule; give at least one, or remove the host");
}

void read_secret(ProfileReader& r, const YAML::Node& node, const std::string& key,
                 broker::SecretSource& out) {
  if (!r.keys(node, key, {"command", "file", "env"})) return;
  if (node.size() != 1) {
    r.fail(node, key, "give one source: command, file or env");
    return;
  }
  if (auto c = node["command"]) {
    auto argv = strings(r, c, key + ".command");
    if (argv.empty() && !r.error) r.fail(c, key + ".command", "the command is empty");
    out = broker::SecretSource::from_command(std::move(argv));
  } else if (auto f = node["file"]) {
    if (auto v = r.scalar(f, key + ".file")) out = broker::SecretSource::from_file(*v);
  } else if (auto e = node["env"]) {
    if (auto v = r.scalar(e, key + ".env")) out = broker::SecretSource::from_env(*v);
  }
}

void read_credential(ProfileReader& r, const std::string& name, const YAML::Node& node,
                     CredentialSection& out) {
  const std::string key = "credentials." + name;
  out.spec.name = name;
  bool on = true;
  if (node.IsScalar() && YAML::convert<bool>::decode(node, on) && !on) {
    out.off = true;
    return;
  }
  if (!r.keys(node, key, {"secret", "hosts", "env", "headers", "shape", "expires"})) return;
  for (const char* k : {"hosts", "env", "headers", "shape", "expires"})
    if (node[k]) out.given.insert(k);
  out.amends = !node["secret"];
  if (!out.amends) read_secret(r, node["secret"], key + ".secret", out.spec.source);
  if (r.error) return;
  out.spec.hosts = strings(r, node["hosts"], key + ".hosts");
  if (out.spec.hosts.empty() && !out.amends && !r.error)
    r.fail(node, key, "needs 'hosts': the hosts it may be sent to (e.g. [github.com, api.github.com])");
  if (out.amends && out.given.empty() && !r.error)
    r.fail(node, key,
           "needs 'secret' (where it is read: {command: [...]}, {file: PATH} or {env: NAME}), or the keys "
           "it changes in the credential of that name (hosts, env, headers, shape, expires)");
  out.spec.env = strings(r, node["env"], key + ".env");
  out.spec.headers = strings(r, node["headers"], key + ".headers");
  if (auto s = node["shape"]) {
    if (auto v = r.scalar(s, key + ".shape")) out.spec.shape = *v;
  }
  if (auto e = node["expires"]) {
    auto v = r.scalar(e, key + ".expires");
    if (!v) return;
    auto when = parse_date(*v);
    if (!when) {
      r.fail(e, key + ".expires", "'" + *v + "' is not a date; write YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ");
      return;
    }
    out.spec.expires = *when;
  }
}

}  // namespace

void read_broker_sections(ProfileReader& r, const YAML::Node& root, BrokerSections& out) {
  if (auto requests = root["requests"]; requests && !requests.IsNull()) {
    if (!requests.IsMap()) return r.fail(requests, "requests", "expected a mapping HOST: [rules]");
    for (const auto& kv : requests) {
      RequestRulesSection section;
      section.host = kv.first.Scalar();
      section.line = r.line(kv.first);
      read_rules(r, section.host, kv.second, section);
      if (r.error) return;
      out.requests.push_back(std::move(section));
    }
  }
  if (auto credentials = root["credentials"]; credentials && !credentials.IsNull()) {
    if (!credentials.IsMap()) return r.fail(credentials, "credentials", "expected a mapping NAME: {...}");
    for (const auto& kv : credentials) {
      CredentialSection section;
      section.line = r.line(kv.first);
      read_credential(r, kv.first.Scalar(), kv.second, section);
      if (r.error) return;
      out.credentials.push_back(std::move(section));
    }
  }
}

Result<BrokerSections> parse_broker_sections(std::string_view text, const std::string& name) {
  BrokerSections out;
  ProfileReader r(name);
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    PX_TRY(refuse_nul_in_yaml(root, name));
    if (root && root.IsMap()) read_broker_sections(r, root, out);
  } catch (const YAML::Exception& e) {
    return Error::invalid(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (r.error) return *r.error;
  return out;
}

}  // namespace px::policy
