#include "agents/launch.hpp"

#ifndef PX_AGENTS_HAVE_SUPERVISOR
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

#include "agents/store.hpp"
#endif

namespace px::agents {

#ifdef PX_AGENTS_HAVE_SUPERVISOR

Result<supervisor::RunOutcome> launch(supervisor::RunRequest request) {
  return supervisor::run(std::move(request));
}
std::string new_run_id() {
  return supervisor::new_run_id();
}

#else

std::string new_run_id() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);  // UTC, as supervisor::new_run_id: ids sort the same in every build
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  std::random_device rd;
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%04x", rd() & 0xffff);
  return std::string(buf) + "-" + suffix;
}

// Stand-in until supervisor::run links: unsealed runs only, with the policy's
// environment, and the run record's agent fields.
Result<supervisor::RunOutcome> launch(supervisor::RunRequest request) {
  if (request.sealed)
    return Error::unsupported(
        "This build of Parallex has no supervisor yet, so it cannot seal the run; nothing was run. Use "
        "--unsealed "
        "to run the agent without the seal.");
  if (request.argv.empty()) return Error::invalid("Give the command to run after `--`.");
  supervisor::RunOutcome out;
  out.run_id = new_run_id();
  out.record_dir = request.runs_dir / out.run_id;
  std::error_code ec;
  fs::create_directories(out.record_dir, ec);
  if (ec) return Error::io("create " + out.record_dir.string(), ec.value());
  const auto env = request.policy.environment().apply(request.host_env);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& a : request.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto start = std::chrono::system_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) return Error::io("start " + request.argv[0], errno);
  if (pid == 0) {
    if (::chdir(request.cwd.c_str()) != 0) _exit(126);
    ::execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  out.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  const auto end = std::chrono::system_clock::now();
  auto ms = [](auto tp) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(tp.time_since_epoch()).count();
  };
  nlohmann::json record = request.record_extra;
  record["run_id"] = out.run_id;
  record["agent"] = request.agent;
  record["command"] = request.argv;
  record["harness"] = request.policy.harness();
  record["start_ms"] = ms(start);
  record["end_ms"] = ms(end);
  record["exit_status"] = out.exit_status;
  record["sealed"] = false;
  record["policy_digest"] = request.policy.digest();
  record["proxy_log"] = nullptr;
  if (request.on_finish) request.on_finish(record);
  PX_TRY(write_file_atomic(out.record_dir / "run.json", record.dump(2) + "\n", 0600));
  return out;
}

#endif

}  // namespace px::agents
