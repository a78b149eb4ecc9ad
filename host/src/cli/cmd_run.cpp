// `parallex run [policy flags] [--allow-weaker-seal] -- CMD...`: runs CMD
// under the Linux seal as an ad-hoc run. The exit status is the command's
// (128+N for death by signal N, 127 when it cannot be found, 126 when it
// cannot be run, 125 when the seal could not be set up).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <random>

#include "backend/linux/capabilities.hpp"
#include "backend/linux/landlock.hpp"
#include "backend/linux/launch.hpp"
#include "backend/linux/seccomp.hpp"
#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/policy_options.hpp"
#include "cli/run_support.hpp"
#include "supervisor/run.hpp"
#include "common/paths.hpp"
#include "common/redact.hpp"


namespace px::cli {
namespace {

struct Options {
  PolicyOptions policy;
  bool allow_weaker = false;
};

int run(const Options& o) {
  if (o.policy.command.empty()) {
    std::fprintf(stderr, "parallex: run needs a command after --, e.g. `parallex run -- make test`\n");
    return 2;
  }
  // Cheap checks here; the namespaces are tried by the launch itself, which
  // fails with the missing guarantee's name when they are off.
  if (!o.allow_weaker) {
    // Ubuntu's user namespace restriction: refused here with check's words and fix, not by an EPERM later.
    if (const auto missing = seal::userns_restricted()) {
      std::fprintf(stderr, "parallex: %s\n", seal::refusal_message(*missing).c_str());
      return 4;
    }
    if (seal::landlock::abi_version() == 0) {
      std::fprintf(
          stderr,
          "parallex: refusing to run: the guarantee \"Landlock: files outside the grants cannot be opened\" "
          "is missing (this kernel has no Landlock). See `parallex check`; pass --allow-weaker-seal to run "
          "with a weaker seal anyway.\n");
      return 4;
    }
    if (!seal::seccomp::available()) {
      std::fprintf(
          stderr,
          "parallex: refusing to run: the guarantee \"seccomp\" is missing. See `parallex check`; pass "
          "--allow-weaker-seal to run with a weaker seal anyway.\n");
      return 4;
    }
  }
  auto temp = make_run_temp();
  if (!temp) return report_error(temp.error());
  PrepareContext context;
  context.temp_dir = temp.value();
  auto prepared = prepare_policy(o.policy, context);
  if (!prepared) return report_error(prepared.error());
  for (const auto& note : prepared.value().notes) std::fprintf(stderr, "parallex: %s\n", note.c_str());

  supervisor::RunRequest request(prepared.value().policy);
  request.argv = o.policy.command;
  request.host_env = host_environment();
  request.cwd = prepared.value().policy.run_folder();
  request.runs_dir = adhoc_runs_dir();
  request.accept_weaker_seal = o.allow_weaker;
  auto outcome = supervisor::run(std::move(request));
  if (!outcome) {
    const Error& e = outcome.error();
    std::string message = e.message;
    if (e.kind == ErrorKind::unsupported)
      message +=
          ". A guarantee of the seal is missing (see `parallex check`); pass --allow-weaker-seal to run "
          "anyway";
    std::fprintf(stderr, "parallex: %s\n", redact(message).c_str());
    return seal::kSetupFailed;
  }
  for (const auto& note : outcome.value().notices) {
    const bool weaker = note.rfind("weaker seal", 0) == 0 || note.rfind("no user namespace", 0) == 0 ||
                        note.rfind("timing:", 0) == 0;
    if (weaker) std::fprintf(stderr, "parallex: %s\n", redact(note).c_str());
  }
  return outcome.value().exit_status;
}

Action setup(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<Options>();
  add_policy_options(app, o->policy, true);
  app.add_flag("--allow-weaker-seal", o->allow_weaker,
               "Run even when this kernel cannot give every guarantee of the seal (see `parallex check`)");
  return [o] { return run(*o); };
}

}  // namespace

PARALLEX_COMMAND("run", "Run a command under the seal (ad hoc, without an agent)", 20, setup);

}  // namespace px::cli
