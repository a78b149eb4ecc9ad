// `parallex kube [--agent NAME] [--profile P] [--seal full|without-namespaces]
// [--kind pod|sandbox-template] [--format yaml|json] -- CMD...`: the
// Kubernetes manifests for a run of CMD under the policy it would get here.
// Printed for `kubectl apply -f -`, never applied; what the manifests cannot
// carry is said on stderr, one line each.
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdio>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/run_options.hpp"
#include "common/ascii.hpp"
#include "common/paths.hpp"
#include "common/read_file.hpp"
#include "kube/manifests.hpp"
#include "kube/pod_settings.hpp"
#include "policy/profile.hpp"
#include "run/stage.hpp"

namespace px::cli {
namespace {

struct KubeOptions {
  run::RunOptions policy;
  std::vector<std::string> command;
  std::string agent;
  std::string name;
  std::string seal = "full";
  std::string kind = "pod";
  std::string format = "yaml";
  std::string image{kube::kDefaultImage};
  std::string memory{kube::kDefaultMemory};
  std::string cpu{kube::kDefaultCpu};
};

// A string YAML would read as itself only when it is a plain word of these
// characters and not one of the words YAML 1.1 (which kubectl reads) takes
// for a boolean or null; anything else is quoted.
bool plain_yaml(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '/' || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) ||
          std::string_view("_./@-").find(c) != std::string_view::npos))
      return false;
  const std::string lower = ascii_lower(s);
  for (const char* word : {"true", "false", "yes", "no", "on", "off", "y", "n", "null"})
    if (lower == word) return false;
  return true;
}

void emit(YAML::Emitter& out, const nlohmann::json& v) {
  if (v.is_object() && v.empty()) {
    out << YAML::Flow << YAML::BeginMap << YAML::EndMap;  // emptyDir: {}
  } else if (v.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [key, value] : v.items()) {
      out << YAML::Key << key << YAML::Value;
      emit(out, value);
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& item : v) emit(out, item);
    out << YAML::EndSeq;
  } else if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s.find('\n') != std::string::npos)
      out << YAML::Literal << s;
    else if (plain_yaml(s))
      out << s;
    else
      out << YAML::DoubleQuoted << s;
  } else if (v.is_boolean()) {
    out << v.get<bool>();
  } else if (v.is_number_integer()) {
    out << v.get<std::int64_t>();
  } else {
    out << YAML::Null;
  }
}

// A profile that is a file (not one built into parallex) travels with the
// manifests, as a ConfigMap the pod mounts.
Result<std::optional<kube::ProfileFile>> profile_file(const std::string& name_or_file) {
  const bool is_path = name_or_file.find('/') != std::string::npos || name_or_file.ends_with(".yaml") ||
                       name_or_file.ends_with(".yml");
  if (!is_path)
    for (const auto& e : policy::embedded_profiles())
      if (name_or_file == e.name) return std::optional<kube::ProfileFile>{};
  const fs::path file =
      is_path ? fs::path(name_or_file) : parallex_config_dir() / "profiles" / (name_or_file + ".yaml");
  PX_TRY_ASSIGN(auto text, read_regular_file(file));
  return std::optional<kube::ProfileFile>{kube::ProfileFile{file.filename().string(), std::move(text)}};
}

int render(const KubeOptions& o) {
  auto composed = run::compose_run_policy(o.policy, o.command, o.agent);
  if (!composed) return report_error(composed.error());

  kube::Request r;
  r.seal = o.seal == "full" ? kube::Seal::full : kube::Seal::without_namespaces;
  r.kind = o.kind == "pod" ? kube::Kind::pod : kube::Kind::sandbox_template;
  r.image = o.image;
  r.memory = o.memory;
  r.cpu = o.cpu;
  if (!o.agent.empty()) r.agent = o.agent;
  r.options = o.policy;
  r.command = o.command;
  // The policy's (its profile's `limits: processes:`, the agent's, or the default).
  r.process_limit = composed.value().policy.process_limit().max;
  r.parallex_exe = parallex_executable();
  if (o.policy.profile) {
    auto file = profile_file(*o.policy.profile);
    if (!file) return report_error(file.error());
    r.profile_file = std::move(file).value();
  }
  r.name = o.name;
  if (r.name.empty()) {
    const std::string from = !o.agent.empty()   ? o.agent
                             : r.profile_file   ? fs::path(r.profile_file->name).stem().string()
                             : o.policy.profile ? *o.policy.profile
                                                : "run";
    r.name = kube::resource_name(from);
    if (r.name.empty())
      return report_error(
          Error::invalid("no Kubernetes name can be made from " +
                         nlohmann::json(from).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                         "; give one with --name"));
  }

  auto rendered = kube::render(composed.value().policy, r);
  if (!rendered) return report_error(rendered.error());
  for (const auto& note : composed.value().notices) std::fprintf(stderr, "parallex: %s\n", note.text.c_str());
  for (const auto& note : rendered.value().not_expressed)
    std::fprintf(stderr, "parallex: not in the manifests: %s\n", note.c_str());

  const auto& docs = rendered.value().documents;
  if (o.format == "json") {
    print_json(nlohmann::json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", docs}});
    return 0;
  }
  for (const auto& doc : docs) {
    YAML::Emitter out;
    emit(out, doc);
    std::printf("---\n%s\n", out.c_str());
  }
  return 0;
}

Action setup_kube(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<KubeOptions>();
  add_run_options(app, o->policy, RunOptionSet::policy, &o->command);
  app.add_option("--agent", o->agent, "Render the runs of this agent (its store and token as volumes)");
  app.add_option("--seal", o->seal,
                 "full (the pod settings that let Parallex make namespaces) or without-namespaces (the "
                 "runtime's defaults: Landlock, seccomp and the proxy)")
      ->check(CLI::IsMember({"full", "without-namespaces"}));
  app.add_option("--kind", o->kind, "pod (a Pod and its NetworkPolicy) or sandbox-template (agent-sandbox)")
      ->check(CLI::IsMember({"pod", "sandbox-template"}));
  app.add_option("--format", o->format, "yaml or json (a List)")->check(CLI::IsMember({"yaml", "json"}));
  app.add_option("--name", o->name, "The resources' name (default: from the agent or the profile)");
  app.add_option("--image", o->image,
                 "The container image (default: " + std::string(kube::kDefaultImage) + ")");
  app.add_option("--memory", o->memory,
                 "The pod's memory (default: " + std::string(kube::kDefaultMemory) + ")");
  app.add_option("--cpu", o->cpu, "The pod's CPUs (default: " + std::string(kube::kDefaultCpu) + ")");
  return [o] { return render(*o); };
}

}  // namespace

PARALLEX_COMMAND("kube", "Print Kubernetes manifests (Pod, NetworkPolicy, SandboxTemplate) for a run", 13,
                 setup_kube);

}  // namespace px::cli
