#include "supervisor/run_broker.hpp"

#include <algorithm>
#include <boost/algorithm/string/join.hpp>
#include <cstdlib>

#include "broker/placeholder.hpp"
#include "broker/secret_source.hpp"
#include "broker/stream_match.hpp"
#include "broker/trust_bundle.hpp"
#include "common/ascii.hpp"
#include "common/host_rule.hpp"
#include "common/read_file.hpp"
#include "common/redact.hpp"
#include "proxy/host_rules.hpp"
#include "proxy/reasons.hpp"

namespace px::supervisor {

namespace fs = std::filesystem;

namespace {

using run::Notice;
using run::NoticeKind;

const char* env_or_null(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v && *v ? v : nullptr;
}

// Where a base URL sends a key: a host name over https, or a model server on
// this machine (localhost, 127.0.0.1 or [::1]: over http, or over https by the
// name localhost, the one its CA can vouch for), which the broker sits in
// front of on its port. Anything else (plain http to another machine, an
// address, a user part) is `problem`: the key cannot be brokered there.
struct BaseUrl {
  std::string host;  // the host name, or "localhost:PORT"
  std::optional<broker::BrokerConfig::LocalServer> local;
  std::string problem;
};

BaseUrl base_url_target(std::string_view url) {
  auto starts = [&](std::string_view scheme) {
    return url.size() > scheme.size() && ascii_istarts_with(url, scheme);
  };
  const bool https = starts("https://");
  if (!https && !starts("http://")) return {{}, {}, "not an http:// or https:// URL"};
  url.remove_prefix(https ? 8 : 7);
  const std::string_view authority = url.substr(0, url.find_first_of("/?#"));
  if (authority.find('@') != std::string_view::npos) return {{}, {}, "a URL with a user part"};
  proxy::HostPort hp;
  const proxy::Verdict v = proxy::parse_authority(authority, false, https ? 443 : 80, hp);
  // 127.0.0.1 and [::1] are read whole but refused as addresses: this machine's own are named below.
  if (!v.ok() && !(v.reason == proxy::reason::ip_literal && proxy::is_loopback_name(hp.host)))
    return {{}, {}, "not a URL with a host name and port"};
  if (proxy::is_loopback_name(hp.host)) {
    if (https && hp.host != "localhost")
      return {
          {}, {}, "https:// to an address (the run's CA vouches for names only: write https://localhost)"};
    return {broker::local_server_binding(hp.port), broker::BrokerConfig::LocalServer{hp.port, https}, {}};
  }
  if (!https)
    return {{}, {}, "plain http:// to another machine, where the key would cross the network as it is"};
  auto host = parse_exact_host(hp.host);
  if (!host) return {{}, {}, "not an https:// URL with a host name"};
  return {host.value(), std::nullopt, {}};
}

// A file the run's view shows with a secret masked, or the trust bundle: a
// regular file of a sane size (a masked file lies in the run's own tree).
Result<std::string> read_whole(const fs::path& file) {
  return read_regular_file(file, {.max_bytes = 16 << 20});
}

// The credentials of this run, with their sources ready to read: a plugin's
// provider key only when its variable is set, bound to the host of its base
// URL when the user set one, a held secret from the plan.
Result<std::vector<broker::CredentialSpec>> credentials_of(const run::RunPlan& plan, RunBroker& out) {
  std::vector<broker::CredentialSpec> specs;
  for (const auto& c : plan.policy.credentials()) {
    broker::CredentialSpec spec = c.spec;
    if (c.when_set && spec.source.kind == broker::SecretSource::Kind::env && !env_or_null(spec.source.env))
      continue;
    // A plugin's default that cannot be brokered (a stand-in key too short to
    // draw a placeholder for, one of another shape): the run holds it as it
    // would without a broker, and says so. A credential the user wrote fails
    // the run instead, in Broker::create.
    if (c.when_set && spec.source.kind == broker::SecretSource::Kind::env) {
      const std::string value = env_or_null(spec.source.env);
      auto placeholder = broker::make_placeholder(spec.name, value);
      const Status fit = placeholder ? broker::check_secret(spec.name, value, spec.shape, spec.expires)
                                     : Status(placeholder.error());
      if (!fit) {
        out.notices.push_back({NoticeKind::alert, "the credential " + spec.name + " is not brokered: " +
                                                      redact(fit.error().message) + "; the run holds " +
                                                      boost::algorithm::join(spec.env, ", ") + " itself"});
        continue;
      }
    }
    if (!c.base_url_variable.empty()) {
      if (const char* base = env_or_null(c.base_url_variable)) {
        const BaseUrl target = base_url_target(base);
        if (!target.problem.empty()) {
          out.notices.push_back({NoticeKind::alert, "the credential " + spec.name +
                                                        " is not brokered: " + c.base_url_variable + " is " +
                                                        redact(std::string(base).substr(0, 200)) + ", " +
                                                        target.problem + "; the run holds " +
                                                        boost::algorithm::join(spec.env, ", ") + " itself"});
          continue;
        }
        spec.hosts = {target.host};
        if (target.local) {
          auto same = std::find_if(out.local_servers.begin(), out.local_servers.end(),
                                   [&](const auto& l) { return l.port == target.local->port; });
          if (same == out.local_servers.end())
            out.local_servers.push_back(*target.local);
          else
            same->tls = same->tls || target.local->tls;
        }
      }
    }
    // A profile's hosts: [localhost:8080]: a plain-HTTP model server on this
    // machine, unless a base URL above said https.
    for (const auto& h : spec.hosts)
      if (const auto port = broker::local_server_port(h);
          port && std::none_of(out.local_servers.begin(), out.local_servers.end(),
                               [&](const auto& l) { return l.port == *port; }))
        out.local_servers.push_back({*port, false});
    if (spec.source.kind == broker::SecretSource::Kind::value) {
      const auto held = plan.held_secrets.find(spec.name);
      if (held == plan.held_secrets.end() || held->second.empty())
        return Error::invalid("credential \"" + spec.name + "\": " + spec.source.describe() +
                              " holds no secret for this run; the run is not started.");
      spec.source.value = held->second;
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

// The CAs the user named for this run (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE,
// ... passed into its environment): the broker points those variables at the
// run's bundle, so the bundle holds their certificates too (certificates
// only; a file the run may not read stays out, as `--env` said at the start).
std::string users_own_cas(const run::RunPlan& plan, RunBroker& out) {
  std::string pem;
  const auto system = broker::system_bundle_paths();
  for (const auto& name : broker::trust_variables()) {
    const auto it = plan.env.find(name);
    if (it == plan.env.end() || it->second.empty()) continue;
    const fs::path file = it->second;
    std::error_code ec;
    if (!file.is_absolute() || !plan.policy.may_read(file) || !fs::is_regular_file(file, ec)) continue;
    // The system's own bundle (where many environments point these variables) is in already.
    const fs::path real = fs::canonical(file, ec);
    if (std::any_of(system.begin(), system.end(),
                    [&](const fs::path& b) { return fs::canonical(b, ec) == real; }))
      continue;
    auto text = read_regular_file(file, {.max_bytes = 16 << 20});
    if (!text) continue;
    auto [certificates, count] = broker::pem_certificates(text.value());
    out.notices.push_back(
        {NoticeKind::seal,
         count == 0 ? name + " (" + file.string() + ") holds no certificate: left out of the run's CA bundle"
                    : "the run's CA bundle holds the " + std::to_string(count) + " certificate" +
                          (count == 1 ? "" : "s") + " of " + name + " (" + file.string() + ") too"});
    if (pem.find(certificates) == std::string::npos) pem += certificates;
  }
  return pem;
}

// Unsealed: the variables get the secrets themselves, read and checked the
// same way (an expired token still stops the run).
Result<RunBroker> unsealed(const run::RunPlan& plan, std::vector<broker::CredentialSpec> specs,
                           RunBroker out) {
  std::vector<std::string> names;
  for (const auto& spec : specs) {
    PX_TRY_ASSIGN(auto secret, broker::read_secret(spec.name, spec.source));
    register_secret(secret);
    PX_TRY(broker::check_secret(spec.name, secret, spec.shape, spec.expires));
    for (const auto& v : spec.env) out.env[v] = secret;
    names.push_back(spec.name);
  }
  if (!names.empty() || !plan.policy.request_rules().empty())
    out.notices.push_back({NoticeKind::unsealed,
                           "unsealed: the credential broker is off" +
                               (names.empty() ? std::string()
                                              : " (the run holds the secrets of " +
                                                    boost::algorithm::join(names, ", ") + " itself)") +
                               (plan.policy.request_rules().empty() ? "" : "; request rules do not apply")});
  return out;
}

}  // namespace

Result<RunBroker> start_run_broker(const run::RunPlan& plan, const fs::path& run_dir) {
  RunBroker out;
  const policy::Policy& p = plan.policy;
  PX_TRY_ASSIGN(auto specs, credentials_of(plan, out));
  if (plan.seal == run::SealLevel::none) return unsealed(plan, std::move(specs), std::move(out));

  broker::BrokerConfig config;
  for (const auto& h : p.request_rules()) config.hosts.push_back({h.host, h.passthrough, h.rules});
  config.credentials = std::move(specs);
  config.local_servers = out.local_servers;
  if (config.hosts.empty() && config.credentials.empty()) return out;
  config.state_dir = plan.dirs.private_dir;
  config.request_log = run_dir / "requests.jsonl";
  const auto bundles = broker::system_bundle_paths();
  if (!bundles.empty()) config.system_bundle = bundles.front();
  config.extra_cas = users_own_cas(plan, out);
  PX_TRY_ASSIGN(out.broker, broker::Broker::create(std::move(config)));
  out.request_log = run_dir / "requests.jsonl";

  // The trust variables name the bundle where the run sees it: over the
  // system bundle, in the view only.
  const std::string in_view = bundles.empty() ? std::string(broker::kSystemBundle) : bundles.front().string();
  for (auto& [k, v] : out.broker->environment(in_view)) out.env[k] = v;
  if (const auto& bundle = out.broker->trust_files().bundle; !bundle.empty()) {
    PX_TRY_ASSIGN(auto content, read_whole(bundle));
    for (const auto& path : bundles) out.view_files.push_back({path, content, {}});
  }

  std::vector<std::string> brokered;
  for (const auto& cred : out.broker->credentials().credentials()) {
    out.masks.emplace_back(cred.secret, cred.placeholder);
    brokered.push_back(cred.name + " (" + boost::algorithm::join(cred.hosts, ", ") + ")");
    for (const auto& c : p.credentials()) {
      if (c.spec.name != cred.name) continue;
      for (const auto& file : c.masked_files) {
        // Only a file the run may read anyway: a copy must never make visible
        // what the policy hides.
        std::error_code ec;
        if (!p.may_read(file) || !fs::is_regular_file(file, ec)) continue;
        PX_TRY_ASSIGN(auto content, read_whole(file));
        broker::replace_all(content, cred.secret, cred.placeholder);
        out.view_files.push_back({file, std::move(content), cred.name});
      }
    }
  }
  if (!brokered.empty())
    out.notices.push_back({NoticeKind::seal, "brokered credentials (the run holds placeholders): " +
                                                 boost::algorithm::join(brokered, ", ")});
  const auto terminated = out.broker->terminated_hosts();
  if (!terminated.empty())
    out.notices.push_back({NoticeKind::seal, "the run's broker reads the requests to " +
                                                 boost::algorithm::join(terminated, ", ") +
                                                 " (request log: " + out.request_log.string() + ")"});
  return out;
}

void mask_secrets(const RunBroker& b, backend::EnvMap& env) {
  for (auto& [name, value] : env)
    for (const auto& [secret, placeholder] : b.masks) broker::replace_all(value, secret, placeholder);
}

void record_broker_report(const RunBroker& b, run::RunRecord& record) {
  if (!b.broker) return;
  const broker::BrokerReport report = b.broker->report();
  run::BrokerRecord out;
  out.request_log = b.request_log;
  out.reported = true;
  out.terminated = b.broker->terminated_hosts();
  std::string per_host;
  for (const auto& h : report.hosts) {
    out.hosts.push_back({h.host, h.requests, h.refused});
    per_host += (per_host.empty() ? "" : ", ") + h.host + " " + std::to_string(h.requests) +
                (h.refused ? " (" + std::to_string(h.refused) + " refused)" : "");
  }
  for (const auto& a : report.exfiltration) {
    out.exfiltration.push_back({a.credential, a.host, a.where, a.count});
    record.notices.push_back(
        {NoticeKind::alert,
         redact("EXFILTRATION ATTEMPT refused: credential " + a.credential + " sent to " + a.host + " (" +
                a.where + ")" + (a.count > 1 ? " x" + std::to_string(a.count) : ""))});
  }
  for (const auto& f : report.failures) {
    out.failures.push_back({f.host, f.reason, f.count});
    record.notices.push_back({NoticeKind::network, "the broker refused a connection to " + f.host + ": " +
                                                       f.reason +
                                                       (f.count > 1 ? " x" + std::to_string(f.count) : "")});
  }
  for (const auto& c : b.broker->credentials().credentials()) out.credentials.push_back(c.name);
  if (!per_host.empty())
    record.notices.push_back({NoticeKind::network, "requests through the broker: " + per_host});
  record.broker = std::move(out);
}

Status CredentialBroker::start(const run::RunPlan& plan, const fs::path& run_dir, const Say& say,
                               run::RunRecord& record) {
  PX_TRY_ASSIGN(parts_, start_run_broker(plan, run_dir));
  for (const auto& n : parts_.notices) say(n);
  if (!parts_.broker) return ok();
  record.broker = run::BrokerRecord{};
  record.broker->request_log = parts_.request_log;
  return ok();
}

void CredentialBroker::add_to(backend::EnvMap& env) const {
  for (const auto& [k, v] : parts_.env) env[k] = v;
  mask_secrets(parts_, env);
}

}  // namespace px::supervisor
