// `parallex check [--json] [--sealed]`: what the seal can guarantee on this
// machine (each guarantee enforced, or missing and why); with --sealed, a real
// sealed run tries each way out from inside and a table says what held.
#include "backend/backend.hpp"
#include "cli/check_sealed.hpp"
#include "cli/command.hpp"
#include "cli/output.hpp"
#include "killswitch/pids_limit.hpp"
#include "killswitch/run_control.hpp"
#include "pluginhost/plugin_set.hpp"

namespace px::cli {
namespace {

struct CheckOptions {
  bool json = false;
  bool sealed = false;
  bool allow_weaker_seal = false;
  bool apparmor_profile = false;
  bool seccomp_profile = false;
  std::string probe_results;        // internal: probe mode, inside the seal of --sealed
  bool probe = false;               // internal: one probe, inside the demo's seal
  std::vector<std::string> probes;  // NAME ARG... (, NAME ARG...), with either
};

int check(const CheckOptions& o) {
  if (!o.probe_results.empty()) return run_probes(o.probes, o.probe_results);
  if (o.probe) return run_one_probe(o.probes);
  const backend::Backend& sealing = backend::sealing_backend();
  if (o.apparmor_profile) {
    std::fputs(sealing.security_module_profile().c_str(), stdout);
    return 0;
  }
  if (o.seccomp_profile) {
    const std::string profile = sealing.container_seccomp_profile();
    if (profile.empty()) {
      std::fprintf(stderr, "parallex: the %s backend has no container seccomp profile\n", sealing.name());
      return 2;
    }
    std::fputs(profile.c_str(), stdout);
    return 0;
  }
  if (o.sealed) return check_sealed(o.json, o.allow_weaker_seal);
  const auto guarantees = killswitch::seal_guarantees(sealing, backend::Backend::Probe::thorough);
  const auto recording = sealing.refusal_recording();
  bool required_missing = false;
  for (const auto& g : guarantees) required_missing |= g.required && !g.enforced;
  const backend::Environment environment = sealing.environment(guarantees);
  const auto tracking = killswitch::probe_tracking();
  // The harness plugins: without them a run of any harness has only the profile's rules.
  const auto plugin_set = pluginhost::PluginSet::load_default();
  nlohmann::json found = nlohmann::json::array(), searched = nlohmann::json::array();
  for (const auto& p : plugin_set.plugins()) found.push_back(p->name());
  for (const auto& d : plugin_set.search_dirs()) searched.push_back(d.string());
  const std::string no_plugins = plugin_set.none_found();
  nlohmann::json kill_switch{{"mechanism", killswitch::to_string(tracking.mechanism)},
                             {"description", tracking.description},
                             {"cannot_catch", tracking.cannot_catch}};
  if (o.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& g : guarantees) {
      list.push_back({{"id", g.id},
                      {"guarantee", g.name},
                      {"enforced", g.enforced},
                      {"required", g.required},
                      {"detail", g.detail}});
      if (!g.held_by.empty()) list.back()["held_by"] = g.held_by;
    }
    nlohmann::json recorded = nlohmann::json::array();
    for (const auto& g : recording)
      recorded.push_back({{"id", g.id}, {"what", g.name}, {"recorded", g.enforced}, {"detail", g.detail}});
    print_json({{"platform", sealing.name()},
                {"platform_detail", sealing.platform()},
                {"environment",
                 {{"kind", environment.kind},
                  {"name", environment.name},
                  {"supported", environment.supported},
                  {"costs", environment.costs}}},
                {"guarantees", list},
                {"refusals_recorded", recorded},
                {"kill_switch", kill_switch},
                {"plugins", {{"found", found}, {"searched", searched}, {"problem", no_plugins}}},
                {"ready", !required_missing}});
  } else {
    std::printf("Environment: %s%s\n", environment.name.c_str(),
                environment.costs.empty() ? "; it costs the seal nothing" : "");
    for (const auto& cost : environment.costs) std::printf("  costs: %s\n", cost.c_str());
    std::printf("Seal guarantees on this machine (%s):\n", sealing.platform().c_str());
    for (const auto& g : guarantees)
      std::printf(
          "  %-8s %s\n           %s%s\n", g.enforced ? "enforced" : "MISSING", g.name.c_str(),
          g.detail.c_str(),
          !g.enforced && g.required ? " [required: `parallex run` refuses without --allow-weaker-seal]" : "");
    std::printf("What a run records of the seal's refusals:\n");
    for (const auto& g : recording)
      std::printf("  %-8s %s\n           %s\n", g.enforced ? "recorded" : "NOT", g.name.c_str(),
                  g.detail.c_str());
    std::printf("Kill switch (process tracking): %s\n           %s\n",
                kill_switch["description"].get<std::string>().c_str(),
                kill_switch["cannot_catch"].get<std::string>().c_str());
    if (no_plugins.empty()) {
      std::string names;
      for (const auto& n : found) names += (names.empty() ? "" : ", ") + n.get<std::string>();
      std::printf("Harness plugins: %s\n", names.c_str());
    } else {
      std::printf("Harness plugins: NONE: %s\n", no_plugins.c_str());
    }
    std::printf("%s\n", required_missing ? "Some required guarantees are missing."
                                         : "Every required guarantee is enforced.");
  }
  return required_missing ? 1 : 0;
}

Action setup_check(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<CheckOptions>();
  app.add_flag("--json", o->json, "Print JSON");
  app.add_flag("--sealed", o->sealed, "Run a real sealed run and try each way out from inside it");
  // The same setting as a run's: an image or pod that accepted the seal
  // without namespaces (PARALLEX_ALLOW_WEAKER_SEAL=1) checks that seal.
  app.add_flag("--allow-weaker-seal", o->allow_weaker_seal,
               "With --sealed: run even if a guarantee is missing")
      ->envname("PARALLEX_ALLOW_WEAKER_SEAL");
  app.add_flag("--apparmor-profile", o->apparmor_profile,
               "Print an AppArmor profile that lets this executable create user namespaces, and nothing more "
               "(for Ubuntu's restriction; the package installs its own)");
  app.add_flag("--seccomp-profile", o->seccomp_profile,
               "Print the seccomp profile a container or pod needs for the full seal (docker/podman "
               "--security-opt seccomp=FILE, a Kubernetes Localhost profile)");
  app.add_option("--probe-results", o->probe_results)->group("");
  app.add_flag("--probe", o->probe)->group("");
  app.add_option("probes", o->probes)->group("");
  return [o] { return check(*o); };
}

}  // namespace

PARALLEX_COMMAND("check", "Show what the seal guarantees on this machine; --sealed tries the ways out", 25,
                 setup_check);

}  // namespace px::cli
