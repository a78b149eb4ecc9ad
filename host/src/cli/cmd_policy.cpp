// `parallex policy show [--harness X | -- CMD...] [--in DIR] [--json] [--why PATH]`:
// the exact policy a command would run under, and why each path is open.
#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/policy_options.hpp"
#include "cli/policy_text.hpp"
#include "common/paths.hpp"
#include "policy/policy_json.hpp"

namespace px::cli {
namespace {

struct Options {
  PolicyOptions policy;
  bool json = false;
  std::string format = "text";
  std::vector<std::string> why;
};

int show(const Options& o) {
  PrepareContext context;
  context.temp_dir = parallex_runtime_dir() / "runs/RUN-ID/tmp";
  auto prepared = prepare_policy(o.policy, context);
  if (!prepared) return report_error(prepared.error());
  const auto& p = prepared.value();
  for (const auto& note : p.notes) std::fprintf(stderr, "parallex: %s\n", note.c_str());
  if (!o.why.empty()) {
    for (const auto& path : o.why) {
      const auto r = p.policy.explain_read(path);
      const auto w = p.policy.explain_write(path);
      std::printf("%s\n  read:  %s — %s\n  write: %s — %s\n", path.c_str(), r.allowed ? "allowed" : "denied",
                  r.rule.c_str(), w.allowed ? "allowed" : "denied", w.rule.c_str());
    }
    return 0;
  }
  if (o.json || o.format == "json") {
    auto j = policy::to_json(p.policy);
    j["harness_detection"] = {{"plugin", p.harness.plugin ? p.harness.plugin->name() : ""}, {"why", p.harness.why}};
    j["digest"] = p.policy.digest();
    print_json(j);
    return 0;
  }
  if (!o.policy.command.empty()) {
    std::string cmd;
    for (const auto& a : o.policy.command) cmd += (cmd.empty() ? "" : " ") + a;
    std::printf("Command     %s\n", cmd.c_str());
  }
  if (p.harness.plugin) std::printf("Detected    %s: %s\n", p.harness.plugin->name().c_str(), p.harness.why.c_str());
  std::fputs(render_policy(p.policy).c_str(), stdout);
  return 0;
}

Action setup(CLI::App& app, GlobalOptions&) {
  app.require_subcommand(1);
  auto o = std::make_shared<Options>();
  CLI::App* show_cmd = app.add_subcommand("show", "Print the composed policy, each entry with its origin");
  add_policy_options(*show_cmd, o->policy, true);
  show_cmd->add_flag("--json", o->json, "Print JSON");
  show_cmd->add_option("--format", o->format, "text, json")->check(CLI::IsMember({"text", "json"}));
  show_cmd->add_option("--why", o->why, "Explain whether PATH may be read and written, and by which rule");
  return [o] { return show(*o); };
}

}  // namespace

PARALLEX_COMMAND("policy", "Show the policy a command would run under", 12, setup);

}  // namespace px::cli
