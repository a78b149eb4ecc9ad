#include "loaded_plugin.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <map>

#include "test_paths.hpp"

namespace px_test {

namespace {

template <class T>
T& as(void* ctx) {
  return *static_cast<T*>(ctx);
}
std::string str(const char* s) {
  return s ? s : "<null>";
}

struct ArgvHolder {
  std::vector<const char*> argv;
  px_command command{};
  explicit ArgvHolder(const CommandLine& c) {
    for (const auto& a : c.argv) argv.push_back(a.c_str());
    command.argv = argv.data();
    command.argc = argv.size();
    command.resolved_path = c.resolved_path.empty() ? nullptr : c.resolved_path.c_str();
    command.resolved_real = c.resolved_real.empty() ? nullptr : c.resolved_real.c_str();
  }
};

bool matches(const std::string& pattern, const std::string& name) {
  if (pattern == "*") return true;
  if (pattern.size() > 1 && pattern.back() == '*')
    return name.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0;
  if (pattern.size() > 1 && pattern.front() == '*') {
    const std::string suffix = pattern.substr(1);
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  }
  return pattern == name;
}

}  // namespace

const PathEntry* ContributeResult::path(const std::string& p) const {
  for (const auto& e : paths)
    if (e.path == p) return &e;
  return nullptr;
}

const EnvEntry* ContributeResult::env_rule(px_env_action action, const std::string& name) const {
  for (const auto& e : env)
    if (e.action == action && e.name == name) return &e;
  return nullptr;
}

const ConfigDir* ContributeResult::config_dir(const std::string& variable) const {
  for (const auto& c : config_dirs)
    if (c.variable == variable) return &c;
  return nullptr;
}

bool ContributeResult::keeps(const std::string& name) const {
  bool kept = false;
  for (const auto& e : env) {
    if (e.action == PX_ENV_STRIP && matches(e.name, name)) return false;
    if (e.action == PX_ENV_KEEP && matches(e.name, name)) kept = true;
  }
  return kept;
}

DetectResult detect(const px_plugin& plugin, const CommandLine& command) {
  DetectResult out;
  ArgvHolder holder(command);
  px_detect_sink sink{};
  sink.ctx = &out;
  sink.claim = [](void* ctx, int confidence, const char* reason) {
    as<DetectResult>(ctx).claims.push_back({confidence, str(reason)});
  };
  sink.error = [](void* ctx, const char* message) { as<DetectResult>(ctx).errors.push_back(str(message)); };
  out.rc = plugin.detect(&holder.command, &sink);
  return out;
}

ContributeResult contribute(const px_plugin& plugin, const ContributeArgs& args) {
  ContributeResult out;
  std::optional<ArgvHolder> holder;
  if (args.command) holder.emplace(*args.command);
  px_contribute_input input{};
  input.platform = args.platform;
  input.user_home = args.user_home.c_str();
  input.run_home = args.run_home.c_str();
  input.run_folder = args.run_folder.c_str();
  input.command = holder ? &holder->command : nullptr;

  px_contribute_sink sink{};
  sink.ctx = &out;
  sink.path = [](void* ctx, px_access access, const char* path, const char* reason) {
    as<ContributeResult>(ctx).paths.push_back({access, str(path), str(reason)});
  };
  sink.executable_dir = [](void* ctx, const char* path, const char* reason) {
    as<ContributeResult>(ctx).executable_dirs.push_back({str(path), str(reason)});
  };
  sink.env = [](void* ctx, px_env_action action, const char* name, const char* value, const char* reason) {
    as<ContributeResult>(ctx).env.push_back({action, str(name), value ? value : "", str(reason)});
  };
  sink.config_dir = [](void* ctx, const char* variable, const char* path, const char* reason) {
    as<ContributeResult>(ctx).config_dirs.push_back({str(variable), str(path), str(reason)});
  };
  sink.nested_sandbox = [](void* ctx, px_nested_kind kind, const char* name, const char* value,
                           const char* reason) {
    as<ContributeResult>(ctx).nested.push_back({kind, str(name), str(value), str(reason)});
  };
  sink.suggested_host = [](void* ctx, const char* host, const char* reason) {
    as<ContributeResult>(ctx).hosts.push_back({str(host), str(reason)});
  };
  sink.credential = [](void* ctx, const px_credential* c) {
    Credential got{str(c->variable), {}, c->base_url_variable ? c->base_url_variable : "",
                   c->shape ? c->shape : "", str(c->reason)};
    for (std::size_t i = 0; i < c->host_count; ++i) got.hosts.push_back(str(c->hosts[i]));
    as<ContributeResult>(ctx).credentials.push_back(std::move(got));
  };
  sink.error = [](void* ctx, const char* message) {
    as<ContributeResult>(ctx).errors.push_back(str(message));
  };
  out.rc = plugin.contribute(&input, &sink);
  return out;
}

SignInResult carry_sign_in(const px_plugin& plugin, px_platform platform, const std::string& user_home,
                           const std::string& agent_home) {
  SignInResult out;
  px_sign_in_input input{platform, user_home.c_str(), agent_home.c_str()};
  px_sign_in_sink sink{};
  sink.ctx = &out;
  sink.copy_file = [](void* ctx, const char* from, const char* to, const char* what) {
    as<SignInResult>(ctx).copies.push_back({str(from), str(to), str(what)});
  };
  sink.instruction = [](void* ctx, const char* text) {
    as<SignInResult>(ctx).instructions.push_back(str(text));
  };
  sink.error = [](void* ctx, const char* message) { as<SignInResult>(ctx).errors.push_back(str(message)); };
  out.rc = plugin.carry_sign_in(&input, &sink);
  return out;
}

TranscriptResult parse_transcripts(const px_plugin& plugin, const std::vector<std::string>& paths,
                                   int64_t since_ms, int64_t until_ms) {
  TranscriptResult out;
  std::vector<const char*> c_paths;
  for (const auto& p : paths) c_paths.push_back(p.c_str());
  px_transcript_input input{c_paths.data(), c_paths.size(), since_ms, until_ms};
  px_transcript_sink sink{};
  sink.ctx = &out;
  sink.session = [](void* ctx, const char* json, size_t length) {
    as<TranscriptResult>(ctx).sessions.emplace_back(json, length);
  };
  sink.warning = [](void* ctx, const char* path, const char* message) {
    as<TranscriptResult>(ctx).warnings.emplace_back(str(path), str(message));
  };
  sink.error = [](void* ctx, const char* message) {
    as<TranscriptResult>(ctx).errors.push_back(str(message));
  };
  out.rc = plugin.parse_transcripts(&input, &sink);
  return out;
}

RootsResult transcript_roots(const px_plugin& plugin, const std::string& run_home) {
  RootsResult out;
  px_path_sink sink{};
  sink.ctx = &out;
  sink.path = [](void* ctx, const char* path, const char*) {
    as<RootsResult>(ctx).roots.push_back(str(path));
  };
  sink.error = [](void* ctx, const char* message) { as<RootsResult>(ctx).errors.push_back(str(message)); };
  out.rc = plugin.transcript_roots(run_home.c_str(), &sink);
  return out;
}

const px_plugin* load_plugin(const std::string& name) {
  static std::map<std::string, const px_plugin*> loaded;
  if (auto it = loaded.find(name); it != loaded.end()) return it->second;
  const std::string file = std::string(PARALLEX_PLUGIN_BUILD_DIR) + "/" + name + ".so";
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    ADD_FAILURE() << "cannot load " << file << ": " << dlerror();
    return nullptr;
  }
  auto* entry = reinterpret_cast<px_plugin_entry_fn>(dlsym(handle, PX_PLUGIN_ENTRY_SYMBOL));
  if (!entry) {
    ADD_FAILURE() << file << " does not export " << PX_PLUGIN_ENTRY_SYMBOL;
    return nullptr;
  }
  const px_plugin* plugin = entry();
  if (!plugin) ADD_FAILURE() << "the entry point of " << file << " returned NULL";
  loaded[name] = plugin;
  return plugin;
}

const std::vector<std::string>& bundled_plugins() {
  static const std::vector<std::string> names{"claude-code", "codex", "opencode", "generic"};
  return names;
}

}  // namespace px_test
