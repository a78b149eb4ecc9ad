#include "kube/manifests.hpp"

#include <regex>

#include "common/ascii.hpp"
#include "common/paths.hpp"
#include "kube/pod_settings.hpp"

namespace px::kube {

namespace {

using nlohmann::json;

std::string str(std::string_view s) {
  return std::string(s);
}

// The pod's `parallex` command: the same run the policy describes, with the
// run options that mean the same inside the pod passed on. One that names
// this machine (a path to grant, a variable of this shell, a port of its
// loopback) is said instead.
std::vector<std::string> container_command(const Request& r, std::vector<std::string>& notes) {
  std::vector<std::string> argv{"parallex"};
  if (r.agent)
    argv.insert(argv.end(), {"agent", "run", *r.agent});
  else
    argv.emplace_back("run");
  argv.insert(argv.end(), {"--in", str(kProjectPath)});
  const auto& o = r.options;
  if (o.harness) argv.insert(argv.end(), {"--harness", *o.harness});
  if (r.profile_file)
    argv.insert(argv.end(), {"--profile", str(kProfilesDir) + "/" + r.profile_file->name});
  else if (o.profile)
    argv.insert(argv.end(), {"--profile", *o.profile});
  if (o.online) argv.emplace_back("--online");
  if (o.offline) argv.emplace_back("--offline");
  for (const auto& h : o.allow) argv.insert(argv.end(), {"--allow", h});
  if (!o.local_servers.empty())
    argv.push_back(o.local_servers == "every" ? "--local-servers" : "--local-servers=" + o.local_servers);
  for (const auto& e : o.env) {
    if (e.find('=') != std::string::npos)
      argv.insert(argv.end(), {"--env", e});
    else
      notes.push_back("--env " + e + ": the pod has no such variable of your shell; give --env " + e +
                      "=VALUE, or set it in the container yourself");
  }
  for (const auto& w : o.dangerously_writable) {
    if (!w.empty() && w.front() != '/')
      argv.insert(argv.end(), {"--dangerously-writable", w});
    else
      notes.push_back("--dangerously-writable " + w + ": a path of this machine, not passed to the pod");
  }
  for (const auto& g : o.grants)
    notes.push_back(
        "--grant " + g +
        ": a path of this machine, not in the pod; mount it with a volume of your own and grant it there");
  argv.emplace_back("--");
  argv.insert(argv.end(), r.command.begin(), r.command.end());
  return argv;
}

// What the policy holds that the manifests cannot carry, in the policy's words.
void policy_notes(const policy::Policy& p, const Request& r, std::vector<std::string>& notes) {
  const auto& net = p.network();
  if (net.mode == policy::NetworkMode::allowlist && !net.hosts.empty()) {
    std::string hosts;
    for (const auto& h : net.hosts) hosts += (hosts.empty() ? "" : ", ") + h.text();
    notes.push_back("network.allow (" + hosts +
                    "): a NetworkPolicy has no host names, so it lets the pod reach every public address on "
                    "the ports these open; Parallex's proxy inside the pod allows these hosts only");
  }
  if (net.local_servers)
    notes.push_back(
        "Local servers (" + net.local_servers_origin.describe() +
        "): in the pod it reaches the pod's own loopback only; this machine's servers are not there, "
        "and the NetworkPolicy refuses every private address");
  for (const auto& pub : net.published)
    notes.push_back("--publish " + std::to_string(pub.inside) + ":" + std::to_string(pub.host) + " (" +
                    pub.origin.describe() +
                    "): a pod publishes a port through a Service of your own; not rendered");
  if (r.process_limit)
    notes.push_back(
        "process limit " + std::to_string(*r.process_limit) +
        ": a Pod has no field for it (the kubelet's pod PID limit is set per node); Parallex holds it "
        "inside the pod");
  // An agent's own store is its volume in the pod; what else its rules grant is of this machine.
  const fs::path store = p.run_home().parent_path();
  for (const auto& g : p.grants())
    if (g.origin.kind == policy::Origin::Kind::agent && !is_within(g.path, store) && g.path != r.parallex_exe)
      notes.push_back("grant " + g.path.string() + " (" + g.origin.describe() +
                      "): a path of this machine, not in the pod; mount it with a volume of your own");
  if (!p.cache_layers().empty())
    notes.push_back("tool caches (" + p.cache_layers().front().origin.describe() +
                    "): your caches are not in the pod; its runs start with empty ones");
  for (const auto& c : p.credentials()) {
    if (r.agent && c.spec.name == "github") continue;  // the token's Secret, below
    notes.push_back(
        "credential " + c.spec.name + " (" + c.origin.describe() +
        "): its secret is read in the pod where the profile says; put it there (a Secret mounted as "
        "that file, or as that variable)");
  }
}

json egress_rules(const policy::Policy& p) {
  const auto& net = p.network();
  json rules = json::array();
  if (net.mode == policy::NetworkMode::offline) return rules;  // nothing leaves the pod
  // The proxy in the pod resolves names through the cluster's resolver.
  const json dns_peer = {
      {"namespaceSelector", {{"matchLabels", {{"kubernetes.io/metadata.name", str(kDnsNamespace)}}}}},
      {"podSelector", {{"matchLabels", {{str(kDnsPodLabel), str(kDnsPodLabelValue)}}}}}};
  rules.push_back({{"to", json::array({dns_peer})},
                   {"ports", json::array({json{{"protocol", "UDP"}, {"port", 53}},
                                          json{{"protocol", "TCP"}, {"port", 53}}})}});
  const std::vector<std::uint16_t> ports = net.mode == policy::NetworkMode::online ? net.ports
                                           : net.hosts.empty() ? std::vector<std::uint16_t>{}
                                                               : net.reachable_ports();
  if (ports.empty()) return rules;
  json v4_except = json::array(), v6_except = json::array();
  for (auto c : kRefusedV4) v4_except.push_back(str(c));
  for (auto c : kRefusedV6) v6_except.push_back(str(c));
  json port_list = json::array();
  for (auto port : ports) port_list.push_back(json{{"protocol", "TCP"}, {"port", port}});
  const json v4 = {{"ipBlock", {{"cidr", "0.0.0.0/0"}, {"except", v4_except}}}};
  const json v6 = {{"ipBlock", {{"cidr", "::/0"}, {"except", v6_except}}}};
  rules.push_back({{"to", json::array({v4, v6})}, {"ports", port_list}});
  return rules;
}

json labels(const Request& r) {
  return {{str(kNameLabel), "parallex"}, {str(kInstanceLabel), r.name}};
}

json pod_spec(const Request& r, std::vector<std::string>& notes) {
  const bool full = r.seal == Seal::full;
  json env = json::array({{{"name", "PARALLEX_HOME"}, {"value", str(kParallexHome)}},
                          {{"name", "HOME"}, {"value", str(kHomePath)}}});
  if (!full)
    env.push_back({{"name", str(kNamespaceLessSettingName)}, {"value", str(kNamespaceLessSettingValue)}});

  json container_sc = {{"allowPrivilegeEscalation", false},
                       {"capabilities", {{"drop", json::array({"ALL"})}}},
                       {"readOnlyRootFilesystem", true}};
  if (full) container_sc["procMount"] = str(kFullSealProcMount);

  json mounts = json::array({{{"name", "project"}, {"mountPath", str(kProjectPath)}},
                             {{"name", "state"}, {"mountPath", str(kParallexHome)}},
                             {{"name", "home"}, {"mountPath", str(kHomePath)}},
                             {{"name", "tmp"}, {"mountPath", "/tmp"}}});
  json volumes =
      json::array({{{"name", "project"}, {"persistentVolumeClaim", {{"claimName", r.name + "-project"}}}},
                   {{"name", "state"}, {"emptyDir", json::object()}},
                   {{"name", "home"}, {"emptyDir", json::object()}},
                   {{"name", "tmp"}, {"emptyDir", json::object()}}});
  if (r.agent) {
    const std::string store = str(kParallexHome) + "/agents/" + *r.agent;
    mounts.push_back({{"name", "agent"}, {"mountPath", store}});
    mounts.push_back({{"name", "token"},
                      {"mountPath", store + "/gh/" + str(kTokenKey)},
                      {"subPath", str(kTokenKey)},
                      {"readOnly", true}});
    volumes.push_back({{"name", "agent"}, {"persistentVolumeClaim", {{"claimName", r.name + "-agent"}}}});
    const json token_items = json::array({json{{"key", str(kTokenKey)}, {"path", str(kTokenKey)}}});
    const json token_secret = {
        {"secretName", r.name + "-token"}, {"defaultMode", kTokenMode}, {"items", token_items}};
    volumes.push_back({{"name", "token"}, {"secret", token_secret}});
  }
  if (r.profile_file) {
    mounts.push_back({{"name", "profile"}, {"mountPath", str(kProfilesDir)}, {"readOnly", true}});
    volumes.push_back({{"name", "profile"}, {"configMap", {{"name", r.name + "-profile"}}}});
  }

  json container = {{"name", "parallex"},
                    {"image", r.image},
                    {"command", container_command(r, notes)},
                    {"workingDir", str(kProjectPath)},
                    {"env", env},
                    {"resources",
                     {{"limits", {{"memory", r.memory}, {"cpu", r.cpu}}},
                      {"requests", {{"memory", r.memory}, {"cpu", r.cpu}}}}},
                    {"securityContext", container_sc},
                    {"volumeMounts", mounts}};
  if (r.image == kDefaultImage) container["imagePullPolicy"] = str(kDefaultImagePullPolicy);
  json pod_sc = {{"runAsNonRoot", true},
                 {"runAsUser", kUser},
                 {"runAsGroup", kGroup},
                 {"fsGroup", kGroup},
                 {"seccompProfile",
                  full ? json{{"type", "Localhost"}, {"localhostProfile", str(kFullSealSeccompProfile)}}
                       : json{{"type", "RuntimeDefault"}}}};
  json spec = {{"automountServiceAccountToken", false},
               {"enableServiceLinks", false},
               {"restartPolicy", "Never"},
               {"securityContext", pod_sc},
               {"containers", json::array({container})},
               {"volumes", volumes}};
  if (full) spec["hostUsers"] = false;
  return spec;
}

json metadata(const Request& r, const std::string& name) {
  return {{"name", name}, {"labels", labels(r)}};
}

}  // namespace

std::string resource_name(const std::string& from) {
  std::string out = "parallex-";
  for (char c : from) {
    out += (c == '_' || c == '.') ? '-' : ascii_lower(c);
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return check_resource_name(out).empty() ? out : "";
}

std::string check_resource_name(const std::string& name) {
  static const std::regex label("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  if (name.empty() || name.size() > 63 || !std::regex_match(name, label))
    return "a Kubernetes name is 1 to 63 lowercase letters, digits and '-', starting and ending with a "
           "letter or "
           "digit";
  return {};
}

std::string check_quantity(const std::string& q) {
  static const std::regex quantity("([0-9]+(\\.[0-9]+)?|\\.[0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?");
  if (!std::regex_match(q, quantity) || q.find_first_not_of("0.m") == std::string::npos)
    return "a quantity is a positive number with an optional unit, e.g. 4Gi, 512Mi, 2 or 500m";
  return {};
}

Result<Rendered> render(const policy::Policy& policy, const Request& request) {
  // An option's value as JSON writes it: quoted, a control byte escaped.
  const auto shown = [](const std::string& v) {
    return json(v).dump(-1, ' ', false, json::error_handler_t::replace);
  };
  if (auto why = check_resource_name(request.name); !why.empty())
    return Error::invalid("--name " + shown(request.name) + ": " + why);
  if (auto why = check_quantity(request.memory); !why.empty())
    return Error::invalid("--memory " + shown(request.memory) + ": " + why);
  if (auto why = check_quantity(request.cpu); !why.empty())
    return Error::invalid("--cpu " + shown(request.cpu) + ": " + why);
  if (request.command.empty())
    return Error::invalid(
        "give the command the pod runs after `--`, e.g. `parallex kube --agent reviewer -- claude -p "
        "\"review the diff\"`");

  Rendered out;
  if (request.profile_file)
    out.documents.push_back({{"apiVersion", "v1"},
                             {"kind", "ConfigMap"},
                             {"metadata", metadata(request, request.name + "-profile")},
                             {"data", {{request.profile_file->name, request.profile_file->text}}}});
  const json spec = pod_spec(request, out.not_expressed);
  const json egress = egress_rules(policy);
  if (request.kind == Kind::pod) {
    out.documents.push_back({{"apiVersion", "v1"},
                             {"kind", "Pod"},
                             {"metadata", metadata(request, request.name)},
                             {"spec", spec}});
    out.documents.push_back({{"apiVersion", "networking.k8s.io/v1"},
                             {"kind", "NetworkPolicy"},
                             {"metadata", metadata(request, request.name)},
                             {"spec",
                              {{"podSelector", {{"matchLabels", labels(request)}}},
                               {"policyTypes", json::array({"Ingress", "Egress"})},
                               {"egress", egress}}}});
  } else {
    // Each sandbox gets a project and a state volume of its own: agent-sandbox
    // makes a claim from each template and mounts it as the pod's volume of
    // that name, so the pod template does not name one.
    json sandbox_spec = spec;
    json volumes = json::array();
    for (const auto& v : spec["volumes"])
      if (v["name"] != "project" && v["name"] != "state") volumes.push_back(v);
    sandbox_spec["volumes"] = volumes;
    const auto claim = [](const char* name, std::string_view size) {
      return json{{"metadata", {{"name", name}}},
                  {"spec",
                   {{"accessModes", json::array({"ReadWriteOnce"})},
                    {"resources", {{"requests", {{"storage", str(size)}}}}}}}};
    };
    // The controller makes the sandbox's NetworkPolicy from this one (no
    // ingress rule: nothing reaches the pod).
    out.documents.push_back(
        {{"apiVersion", "extensions.agents.x-k8s.io/v1beta1"},
         {"kind", "SandboxTemplate"},
         {"metadata", metadata(request, request.name)},
         {"spec",
          {{"podTemplate", {{"metadata", {{"labels", labels(request)}}}, {"spec", sandbox_spec}}},
           {"volumeClaimTemplates",
            json::array({claim("project", kProjectStorage), claim("state", kStateStorage)})},
           {"networkPolicyManagement", "Managed"},
           {"networkPolicy", {{"egress", egress}}}}}});
  }
  policy_notes(policy, request, out.not_expressed);
  return out;
}

}  // namespace px::kube
