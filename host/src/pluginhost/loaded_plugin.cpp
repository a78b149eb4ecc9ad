#include "pluginhost/loaded_plugin.hpp"

#include <algorithm>

#include "common/paths.hpp"
#include "pluginhost/plugin_process.hpp"
#include "pluginhost/wire.hpp"
#include "policy/value_checks.hpp"

namespace px::pluginhost {

LoadedPlugin::LoadedPlugin(PluginInfo info, fs::path path, std::size_t index,
                           std::shared_ptr<PluginProcess> process)
    : info_(std::move(info)), path_(std::move(path)), index_(index), process_(std::move(process)) {}

std::optional<std::string> LoadedPlugin::broken() const {
  return process_->broken(index_);
}

Result<nlohmann::json> LoadedPlugin::call(Stage stage, const std::string& op, nlohmann::json args,
                                          const SessionSink& on_part) const {
  auto answer = process_->call(index_, stage, op, std::move(args), on_part);
  if (answer) return answer;
  // A crash or a hang is said by the process, naming the plugin already.
  if (process_->broken(index_)) return answer.error();
  return Error{answer.error().kind == ErrorKind::unsupported ? ErrorKind::unsupported : ErrorKind::plugin,
               "plugin " + name() + " failed in " + to_string(stage) + ": " + answer.error().message};
}

Error LoadedPlugin::refused(Stage stage, const char* what, const std::string& value,
                            const std::string& rule) const {
  return Error::plugin(policy::refused_from_plugin(name(), to_string(stage), what, value, rule));
}

Result<std::optional<Detection>> LoadedPlugin::detect(const CommandLine& command) const {
  PX_TRY_ASSIGN(auto answer, call(Stage::detect, "detect", {{"command", wire::to_json(command)}}));
  auto found = wire::detection(answer);
  if (!found) return Error::plugin("plugin " + name() + " failed in detect: " + found.error().message);
  if (found.value()) {
    if (auto problem = policy::check_text(found.value()->reason); !problem.empty())
      return refused(Stage::detect, "reason", found.value()->reason, problem);
    found.value()->confidence = std::clamp(found.value()->confidence, 0, 100);
  }
  return found;
}

Result<policy::HarnessContribution> LoadedPlugin::contribute(policy::Platform platform,
                                                             const fs::path& user_home,
                                                             const fs::path& run_home,
                                                             const fs::path& run_folder,
                                                             const CommandLine* command) const {
  nlohmann::json args{{"platform", static_cast<int>(platform)},
                      {"user_home", user_home.string()},
                      {"run_home", run_home.string()},
                      {"run_folder", run_folder.string()},
                      {"command", command ? wire::to_json(*command) : nlohmann::json(nullptr)}};
  PX_TRY_ASSIGN(auto answer, call(Stage::contribute, "contribute", std::move(args)));
  auto out = wire::contribution(answer);
  if (!out) return Error::plugin("plugin " + name() + " failed in contribute: " + out.error().message);
  // Its values are checked where the policy is composed (compose.cpp); who it is, here.
  out.value().plugin = name();
  out.value().harness = harness();
  return out;
}

Result<std::vector<SignInStep>> LoadedPlugin::sign_in_steps(policy::Platform platform,
                                                            const fs::path& user_home,
                                                            const fs::path& agent_home) const {
  if (!has_sign_in()) return std::vector<SignInStep>{};
  PX_TRY_ASSIGN(auto answer, call(Stage::sign_in, "sign_in",
                                  {{"platform", static_cast<int>(platform)},
                                   {"user_home", user_home.string()},
                                   {"agent_home", agent_home.string()}}));
  auto steps = wire::sign_in_steps(answer);
  if (!steps) return Error::plugin("plugin " + name() + " failed in carry_sign_in: " + steps.error().message);
  for (const auto& s : steps.value()) {
    if (auto problem = policy::check_text(s.text); !problem.empty())
      return refused(Stage::sign_in, s.kind == SignInStep::Kind::instruction ? "instruction" : "description",
                     s.text, problem);
    if (s.kind != SignInStep::Kind::copy_file) continue;
    for (const auto& [what, path] : {std::pair{"file", &s.from}, std::pair{"copy", &s.to}}) {
      std::string problem = policy::check_path_text(*path);
      if (problem.empty() && !fs::path(*path).is_absolute()) problem = "is not absolute";
      if (!problem.empty()) return refused(Stage::sign_in, what, *path, problem);
    }
  }
  return steps;
}

Result<TranscriptSessions> LoadedPlugin::parse_transcripts(const std::vector<std::string>& paths,
                                                           std::int64_t since_ms, std::int64_t until_ms,
                                                           const SessionSink& on_session) const {
  if (!has_transcripts()) return Error::unsupported("plugin " + name() + " does not read transcripts");
  // The parser sees the paths meant, whatever its own idea of the current folder.
  std::vector<std::string> absolute;
  for (const auto& p : paths) absolute.push_back(normal_absolute(p).string());
  PX_TRY_ASSIGN(auto answer,
                call(Stage::parse_transcripts, "parse",
                     {{"paths", absolute}, {"since", since_ms}, {"until", until_ms}}, on_session));
  auto out = wire::transcript_sessions(std::move(answer));
  if (!out) return Error::plugin("plugin " + name() + " failed in parse_transcripts: " + out.error().message);
  return out;
}

Result<std::vector<std::string>> LoadedPlugin::transcript_roots(const fs::path& run_home,
                                                                const fs::path& run_folder) const {
  if (!has_transcripts()) return std::vector<std::string>{};
  PX_TRY_ASSIGN(auto answer, call(Stage::transcript_roots, "roots",
                                  {{"run_home", run_home.string()}, {"run_folder", run_folder.string()}}));
  auto roots = wire::strings(answer);
  if (!roots)
    return Error::plugin("plugin " + name() + " failed in transcript_roots: " + roots.error().message);
  for (const auto& root : roots.value()) {
    std::string problem = policy::check_path_text(root);
    if (problem.empty() && root.front() != '/')
      problem = "is not absolute (a parser is never given a relative path)";
    if (!problem.empty()) return refused(Stage::transcript_roots, "transcript root", root, problem);
  }
  return roots;
}

Result<policy::ProjectFiles> LoadedPlugin::project_files() const {
  PX_TRY_ASSIGN(auto answer, call(Stage::project_files, "project_files", nlohmann::json::object()));
  auto declared = wire::project_files(answer);
  if (!declared)
    return Error::plugin("plugin " + name() + " failed in project_files: " + declared.error().message);
  policy::ProjectFiles out;
  out.plugin = name();
  out.harness = harness();
  for (auto& f : declared.value().files) {
    std::string problem = policy::check_path_text(f.path);
    const fs::path p(f.path);
    if (problem.empty() && p.is_absolute()) problem = "is absolute; name it relative to the project's folder";
    if (problem.empty() && p.lexically_normal() == ".") problem = "is the whole project";
    if (!problem.empty()) return refused(Stage::project_files, "project file", f.path, problem);
    if (auto bad = policy::check_text(f.reason); !bad.empty())
      return refused(Stage::project_files, "reason", f.reason, bad);
    std::string normal = p.lexically_normal().string();
    while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
    out.files.push_back({std::move(normal), std::move(f.reason)});
  }
  return out;
}

Result<policy::DeclaredHomeFiles> LoadedPlugin::home_files(policy::Platform platform) const {
  PX_TRY_ASSIGN(auto answer,
                call(Stage::home_files, "home_files", {{"platform", static_cast<int>(platform)}}));
  auto declared = wire::home_files(answer);
  if (!declared)
    return Error::plugin("plugin " + name() + " failed in home_files: " + declared.error().message);
  policy::DeclaredHomeFiles out;
  out.plugin = name();
  out.harness = harness();
  for (auto& f : declared.value().files) {
    std::string problem = policy::check_path_text(f.path);
    if (problem.empty() && (f.path.rfind("~/", 0) != 0 || f.path.size() < 3))
      problem = "is not a path under '~/'";
    if (problem.empty() && f.kind == policy::HomeKind::scratch &&
        (f.format != policy::HomeFormat::whole || !f.keys.empty()))
      problem =
          "is a JSON or TOML file declared scratch: scratch is a folder or a file taken whole (each "
          "run gets its own, dropped at its end)";
    if (!problem.empty()) return refused(Stage::home_files, "home file", f.path, problem);
    if (auto bad = policy::check_text(f.reason); !bad.empty())
      return refused(Stage::home_files, "reason", f.reason, bad);
    for (const auto& k : f.keys) {
      const auto parts = policy::split_key_pattern(k.pattern, "/");
      const bool empty_part =
          std::any_of(parts.begin(), parts.end(), [](const std::string& x) { return x.empty(); });
      std::string rule = policy::check_text(k.pattern);
      if (rule.empty() && (k.pattern.empty() || empty_part)) rule = "is not a key path (a.b.c)";
      if (rule.empty() && k.kind == policy::HomeKind::scratch)
        rule = "is a key declared scratch: only a folder can be";
      if (rule.empty() && (f.format == policy::HomeFormat::whole || f.directory))
        rule = "is a key in " + f.path + ", which is not a JSON or TOML file";
      if (rule.empty()) rule = policy::check_text(k.reason);
      if (!rule.empty()) return refused(Stage::home_files, "key", k.pattern, rule);
    }
    std::string normal = "~/" + fs::path(f.path.substr(2)).lexically_normal().string();
    while (normal.size() > 2 && normal.back() == '/') normal.pop_back();
    f.path = std::move(normal);
    out.files.push_back(std::move(f));
  }
  return out;
}

}  // namespace px::pluginhost
