#include "policy/compose_broker.hpp"

#include <functional>

#include "common/paths.hpp"

namespace px::policy {

namespace {

void apply_sections(PolicyBuilder& b, const BrokerSections& sections, const fs::path& user_home,
                    const std::function<Origin(int line)>& origin) {
  for (const auto& r : sections.requests) {
    if (r.passthrough)
      b.passthrough(r.host, origin(r.line));
    else
      b.request_rules(r.host, r.rules, origin(r.line));
  }
  for (const auto& c : sections.credentials) {
    if (c.off) {
      b.drop_credential(c.spec.name, origin(c.line));
      continue;
    }
    if (c.amends) {
      BrokeredCredential changes;
      changes.spec = c.spec;
      changes.origin = origin(c.line);
      b.amend_credential(changes, c.given);
      continue;
    }
    BrokeredCredential e;
    e.spec = c.spec;
    // A secret file is read by the supervisor, on this machine: '~' is the user's home.
    if (e.spec.source.kind == broker::SecretSource::Kind::file)
      e.spec.source.file = expand_home(e.spec.source.file.string(), user_home);
    e.origin = origin(c.line);
    b.credential(std::move(e));
  }
}

}  // namespace

void apply_broker(PolicyBuilder& b, const ComposeInputs& in, const fs::path& user_home) {
  if (in.harness) {
    const Origin origin = Origin::plugin(in.harness->plugin);
    for (const auto& c : in.harness->credentials) {
      BrokeredCredential e;
      e.spec.name = credential_name_of_variable(c.variable);
      e.spec.source = broker::SecretSource::from_env(c.variable);
      e.spec.hosts = c.hosts;
      e.spec.env = {c.variable};
      e.spec.shape = c.shape;
      e.when_set = true;
      e.base_url_variable = c.base_url_variable;
      e.reason = c.reason;
      e.origin = origin;
      b.credential(std::move(e));
    }
  }
  for (const auto& c : in.default_credentials) b.credential(c);
  for (const auto& p : in.profiles)
    apply_sections(b, p.broker, user_home, [&](int line) { return Origin::profile(p.name, line); });
  if (in.agent)
    apply_sections(b, in.agent->broker, user_home, [&](int line) {
      Origin o = Origin::agent(in.agent->name);
      o.line = line;
      return o;
    });
}

}  // namespace px::policy
