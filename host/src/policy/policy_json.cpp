#include "policy/policy_json.hpp"

namespace px::policy {

namespace {

void add_origin(nlohmann::json& j, const Origin& origin, bool with_origins) {
  if (with_origins) j["origin"] = origin.describe();
}

}  // namespace

nlohmann::json broker_to_json(const Policy& p, bool with_origins) {
  using nlohmann::json;
  json requests = json::array();
  for (const auto& h : p.request_rules()) {
    json e{{"host", h.host}};
    if (h.passthrough) e["passthrough"] = true;
    json rules = json::array();
    for (const auto& r : h.rules) {
      json rule{{"rule", r.text()}};
      if (!r.reason.empty()) rule["reason"] = r.reason;
      if (with_origins) rule["origin"] = r.origin;
      rules.push_back(std::move(rule));
    }
    e["rules"] = std::move(rules);
    add_origin(e, h.origin, with_origins);
    requests.push_back(std::move(e));
  }
  json credentials = json::array();
  for (const auto& c : p.credentials()) {
    // Where the secret is read, never the secret.
    json e{{"name", c.spec.name},
           {"source", c.spec.source.describe()},
           {"hosts", c.spec.hosts},
           {"env", c.spec.env}};
    if (!c.spec.headers.empty()) e["headers"] = c.spec.headers;
    if (!c.spec.shape.empty()) e["shape"] = c.spec.shape;
    if (c.spec.expires)
      e["expires"] =
          std::chrono::duration_cast<std::chrono::seconds>(c.spec.expires->time_since_epoch()).count();
    if (c.when_set) e["when_set"] = true;
    if (!c.base_url_variable.empty()) e["base_url_variable"] = c.base_url_variable;
    if (!c.masked_files.empty()) {
      json files = json::array();
      for (const auto& f : c.masked_files) files.push_back(f.string());
      e["masked_files"] = std::move(files);
    }
    if (!c.reason.empty()) e["reason"] = c.reason;
    add_origin(e, c.origin, with_origins);
    credentials.push_back(std::move(e));
  }
  return {{"requests", std::move(requests)}, {"credentials", std::move(credentials)}};
}

nlohmann::json to_json(const Policy& p, bool with_origins) {
  using nlohmann::json;
  json out;
  out["run_folder"] = p.run_folder().string();
  out["run_home"] = p.run_home().string();
  out["user_home"] = p.user_home().string();
  out["temp_dir"] = p.temp_dir().string();
  out["harness"] = p.harness();

  json grants = json::array();
  for (const auto& g : p.grants()) {
    json e{{"path", g.path.string()},
           {"access", g.access == Access::write ? "read-write" : "read"},
           {"reason", g.reason}};
    if (g.create_if_missing) e["create_if_missing"] = true;
    add_origin(e, g.origin, with_origins);
    grants.push_back(std::move(e));
  }
  out["filesystem"]["allow"] = std::move(grants);
  json denies = json::array();
  for (const auto& d : p.denies()) {
    json e{{"path", d.path.string()}, {"reason", d.reason}};
    add_origin(e, d.origin, with_origins);
    denies.push_back(std::move(e));
  }
  out["filesystem"]["deny"] = std::move(denies);
  json read_only = json::array();
  for (const auto& r : p.read_only()) {
    json e{{"path", r.path.string()}, {"reason", r.reason}};
    add_origin(e, r.origin, with_origins);
    read_only.push_back(std::move(e));
  }
  out["filesystem"]["read_only"] = std::move(read_only);
  out["filesystem"]["forbid_new_git"] = p.forbid_new_git();
  // Only when there is one: the digest of a policy without it stays as it was.
  if (!p.fixed_folders().empty()) {
    json fixed = json::array();
    for (const auto& f : p.fixed_folders()) {
      json open = json::array();
      for (const auto& e : f.open) open.push_back(e.string());
      json e{{"path", f.path.string()}, {"open", std::move(open)}, {"reason", f.reason}};
      add_origin(e, f.origin, with_origins);
      fixed.push_back(std::move(e));
    }
    out["filesystem"]["fixed_entries"] = std::move(fixed);
  }
  // Only when there is one: the digest of a policy without it stays as it was.
  if (!p.cache_layers().empty()) {
    json layers = json::array();
    for (const auto& c : p.cache_layers()) {
      json e{{"cache", c.lower.string()}, {"view", c.view.string()}, {"reason", c.reason}};
      add_origin(e, c.origin, with_origins);
      layers.push_back(std::move(e));
    }
    out["filesystem"]["cache_layers"] = std::move(layers);
  }
  // Only when there is one, as above.
  if (!p.home_files().empty()) {
    json files = json::array();
    for (const auto& f : p.home_files()) {
      json e{{"path", f.path.string()}, {"kind", to_string(f.kind)}, {"reason", f.reason}};
      if (f.directory) e["directory"] = true;
      if (f.format != HomeFormat::whole) e["format"] = to_string(f.format);
      if (!f.keys.empty()) {
        json keys = json::array();
        for (const auto& k : f.keys)
          keys.push_back({{"key", k.text}, {"kind", to_string(k.kind)}, {"reason", k.reason}});
        e["keys"] = std::move(keys);
      }
      add_origin(e, f.origin, with_origins);
      files.push_back(std::move(e));
    }
    out["filesystem"]["home_files"] = std::move(files);
  }

  json limits{{"processes", p.process_limit().max}};
  add_origin(limits, p.process_limit().origin, with_origins);
  out["limits"] = std::move(limits);

  const auto& net = p.network();
  json network{{"mode", to_string(net.mode)}, {"ports", net.ports}, {"local_servers", net.local_servers}};
  if (!net.local_server_ports.empty()) network["local_server_ports"] = net.local_server_ports;
  if (net.ask.count() > 0) network["ask_seconds"] = net.ask.count();
  add_origin(network, net.mode_origin, with_origins);
  json hosts = json::array();
  for (const auto& h : net.hosts) {
    json e{{"host", h.pattern}};
    if (h.port) e["port"] = *h.port;
    add_origin(e, h.origin, with_origins);
    hosts.push_back(std::move(e));
  }
  network["hosts"] = std::move(hosts);
  if (!net.published.empty()) {
    json published = json::array();
    for (const auto& pub : net.published) {
      json e{{"inside", pub.inside}, {"host", pub.host}};
      add_origin(e, pub.origin, with_origins);
      published.push_back(std::move(e));
    }
    network["published"] = std::move(published);
  }
  out["network"] = std::move(network);

  const auto& env = p.environment();
  auto patterns = [&](const std::vector<EnvPattern>& list) {
    json arr = json::array();
    for (const auto& e : list) {
      json j{{"pattern", e.pattern}, {"reason", e.reason}};
      add_origin(j, e.origin, with_origins);
      arr.push_back(std::move(j));
    }
    return arr;
  };
  out["environment"]["keep"] = patterns(env.keep);
  out["environment"]["strip"] = patterns(env.strip);
  if (!env.pass.empty()) out["environment"]["pass"] = patterns(env.pass);
  json set = json::array();
  for (const auto& s : env.set) {
    // Secret values never leave the process, not even in a digest.
    json j{{"name", s.name}, {"value", s.secret ? "[REDACTED]" : s.value}, {"reason", s.reason}};
    add_origin(j, s.origin, with_origins);
    set.push_back(std::move(j));
  }
  out["environment"]["set"] = std::move(set);

  json nested = json::array();
  for (const auto& n : p.nested_sandbox()) {
    json j{{"kind", n.kind == NestedSandboxSwitch::Kind::env ? "env" : "arg"},
           {"name", n.name},
           {"value", n.value},
           {"reason", n.reason}};
    add_origin(j, n.origin, with_origins);
    nested.push_back(std::move(j));
  }
  out["nested_sandbox"] = std::move(nested);
  json suggested = json::array();
  for (const auto& s : p.suggested_hosts()) {
    json j{{"host", s.host}, {"reason", s.reason}};
    add_origin(j, s.origin, with_origins);
    suggested.push_back(std::move(j));
  }
  out["suggested_hosts"] = std::move(suggested);
  out["weakenings"] = p.weakenings();
  // Only when there is one: the digest of a policy without it stays as it was.
  if (!p.request_rules().empty() || !p.credentials().empty()) out["broker"] = broker_to_json(p, with_origins);
  return out;
}

}  // namespace px::policy
