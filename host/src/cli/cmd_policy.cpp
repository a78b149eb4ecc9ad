// `parallex policy show [--harness X | -- CMD...] [--in DIR] [--json] [--why PATH]`:
// the exact policy a command would run under, and why each path is open.
#include "backend/backend.hpp"
#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/policy_text.hpp"
#include "cli/port_option.hpp"
#include "cli/run_options.hpp"
#include "common/paths.hpp"
#include "policy/policy_json.hpp"
#include "run/compose_request.hpp"

namespace px::cli {
namespace {

struct PolicyOptions {
  run::RunOptions policy;
  std::vector<std::string> command;
  bool json = false;
  std::string format = "text";
  std::vector<std::string> why;
  int proxy_port = 3128;
};

// Shell-quotes one argument for display ('...' with ' escaped).
std::string shell_quote(const std::string& s) {
  if (!s.empty() &&
      s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@,+") ==
          std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int show_seatbelt(const run::ComposedPolicy& p, const PolicyOptions& o) {
  const std::vector<std::string> command =
      o.command.empty() ? std::vector<std::string>{"/bin/zsh"} : o.command;
  auto seal =
      backend::seatbelt_backend().write_seal(p.policy, static_cast<std::uint16_t>(o.proxy_port), command);
  if (!seal) return report_error(seal.error());
  if (o.format == "sbpl") {
    std::fputs(seal.value().profile.c_str(), stdout);
    std::printf("\n; Parameters (sandbox-exec -D NAME=VALUE):\n");
    for (const auto& [name, value] : seal.value().params)
      std::printf(";   %s=%s\n", name.c_str(), value.c_str());
    return 0;
  }
  std::string line;
  for (const auto& a : seal.value().argv) line += (line.empty() ? "" : " ") + shell_quote(a);
  std::printf("%s\n", line.c_str());
  return 0;
}

int show(const PolicyOptions& o) {
  run::ComposeRequest request;
  request.options = o.policy;
  request.command = o.command;
  if (o.format == "sbpl" || o.format == "sbpl-args") request.platform = policy::Platform::macos;
  request.temp_dir = parallex_runtime_dir() / "runs-private/RUN/tmp";
  auto prepared = run::compose_policy(request);
  if (!prepared) return report_error(prepared.error());
  const auto& p = prepared.value();
  for (const auto& note : p.notices) say(note.text);
  if (!o.why.empty()) {
    for (const auto& path : o.why) {
      const auto r = p.policy.explain_read(path);
      const auto w = p.policy.explain_write(path);
      std::printf("%s\n  read:  %s — %s\n  write: %s — %s\n", path.c_str(), r.allowed ? "allowed" : "denied",
                  r.rule.c_str(), w.allowed ? "allowed" : "denied", w.rule.c_str());
    }
    return 0;
  }
  if (o.format == "sbpl" || o.format == "sbpl-args") {
    return show_seatbelt(p, o);
  }
  if (o.json || o.format == "json") {
    auto j = policy::to_json(p.policy);
    j["harness_detection"] = {{"plugin", p.harness.plugin ? p.harness.plugin->name() : ""},
                              {"why", p.harness.why}};
    j["digest"] = p.policy.digest();
    print_json(j);
    return 0;
  }
  if (!o.command.empty()) {
    std::string cmd;
    for (const auto& a : o.command) cmd += (cmd.empty() ? "" : " ") + a;
    std::printf("Command     %s\n", cmd.c_str());
  }
  if (p.harness.plugin)
    std::printf("Detected    %s: %s\n", p.harness.plugin->name().c_str(), p.harness.why.c_str());
  std::fputs(render_policy(p.policy).c_str(), stdout);
  return 0;
}

Action setup_policy(CLI::App& app, GlobalOptions&) {
  app.require_subcommand(1);
  auto o = std::make_shared<PolicyOptions>();
  CLI::App* show_cmd = app.add_subcommand("show", "Print the composed policy, each entry with its origin");
  add_run_options(*show_cmd, o->policy, RunOptionSet::policy, &o->command);
  show_cmd->add_flag("--json", o->json, "Print JSON");
  show_cmd
      ->add_option(
          "--format", o->format,
          "text, json, sbpl (the macOS Seatbelt profile) or sbpl-args (the sandbox-exec command line)")
      ->check(CLI::IsMember({"text", "json", "sbpl", "sbpl-args"}));
  show_cmd
      ->add_option("--proxy-port", o->proxy_port,
                   "The proxy port written into a Seatbelt profile (a run uses its own)")
      ->check(port_number());
  show_cmd->add_option("--why", o->why, "Explain whether PATH may be read and written, and by which rule");
  return [o] { return show(*o); };
}

}  // namespace

PARALLEX_COMMAND("policy", "Show the policy a command would run under", 12, setup_policy);

}  // namespace px::cli
