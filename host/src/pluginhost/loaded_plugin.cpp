#include "pluginhost/loaded_plugin.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <boost/dll/shared_library_load_mode.hpp>
#include <cstddef>
#include <exception>

namespace px::plugins {

namespace {

// Strings from a plugin: a null pointer or an absurd length is the plugin's
// mistake, reported as such rather than dereferenced.
constexpr std::size_t kMaxString = 64 * 1024;

std::string copy_string(const char* s, bool& bad) {
  if (!s) {
    bad = true;
    return {};
  }
  std::size_t n = 0;
  while (n < kMaxString && s[n] != '\0') ++n;
  if (n == kMaxString) bad = true;
  return std::string(s, n);
}

// The state a sink callback writes into. Lives on the host's stack for one call.
struct SinkState {
  std::string error;
  bool bad_string = false;

  std::string take(const char* s) { return copy_string(s, bad_string); }
  void fail(const char* message) {
    if (error.empty()) error = copy_string(message, bad_string);
    if (error.empty()) error = "the plugin reported an error without a message";
  }
};

// Sinks hand back the SinkState base pointer they were given; the derived
// state is recovered through it, never straight from void*.
template <class State>
State* state_of(void* ctx) {
  return static_cast<State*>(static_cast<SinkState*>(ctx));
}

template <class Sink>
void set_error_callback(Sink& sink) {
  sink.error = [](void* ctx, const char* message) { static_cast<SinkState*>(ctx)->fail(message); };
}

struct CommandView {
  std::vector<const char*> argv;
  px_command c{};
  explicit CommandView(const CommandLine& cmd) {
    for (const auto& a : cmd.argv) argv.push_back(a.c_str());
    c.argv = argv.data();
    c.argc = argv.size();
    c.resolved_path = cmd.resolved_path.empty() ? nullptr : cmd.resolved_path.c_str();
    c.resolved_real = cmd.resolved_real.empty() ? nullptr : cmd.resolved_real.c_str();
  }
};

px_platform to_abi(policy::Platform p) {
  return p == policy::Platform::macos ? PX_PLATFORM_MACOS : PX_PLATFORM_LINUX;
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

}  // namespace

Result<std::unique_ptr<LoadedPlugin>> LoadedPlugin::load(const fs::path& file) {
  std::unique_ptr<LoadedPlugin> plugin(new LoadedPlugin());
  plugin->path_ = file;
  const std::string where = file.string();
  try {
    // RTLD_NODELETE: a plugin stays mapped until the process ends. Unloading
    // (its destructors, its libstdc++'s, the unmapping) cost as much as
    // loading, for memory the exit frees anyway (common/exit_fast.hpp).
    const auto mode = static_cast<boost::dll::load_mode::type>(
        static_cast<unsigned>(boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local) |
        RTLD_NODELETE);
    plugin->library_.load(file, mode);
  } catch (const std::exception& e) {
    return Error::plugin(where + ": cannot be loaded as a shared library (" + std::string(e.what()) +
                         "); remove it from the plugin path or rebuild it");
  }
  if (!plugin->library_.has(PX_PLUGIN_ENTRY_SYMBOL))
    return Error::plugin(where + ": not a Parallex plugin (it exports no " + std::string(PX_PLUGIN_ENTRY_SYMBOL) +
                         "); build it with the Parallex SDK's PARALLEX_PLUGIN macro");
  auto& entry = plugin->library_.get<const px_plugin*()>(PX_PLUGIN_ENTRY_SYMBOL);
  const px_plugin* d = nullptr;
  try {
    d = entry();
  } catch (...) {
    // A C entry point must not throw; one that does is broken but caught here.
    return Error::plugin(where + ": its entry point threw an exception; the plugin is broken");
  }
  if (!d) return Error::plugin(where + ": its entry point failed (returned no descriptor); see the plugin's own logs");
  constexpr std::size_t kMinSize = offsetof(px_plugin, contribute) + sizeof(d->contribute);
  if (d->struct_size < kMinSize)
    return Error::plugin(where + ": its descriptor is too small (" + std::to_string(d->struct_size) +
                         " bytes); it was not built with the Parallex SDK");
  plugin->abi_major_ = d->abi_major;
  plugin->abi_minor_ = d->abi_minor;
  const std::string theirs = std::to_string(d->abi_major) + "." + std::to_string(d->abi_minor);
  const std::string ours = std::to_string(PX_PLUGIN_ABI_MAJOR) + "." + std::to_string(PX_PLUGIN_ABI_MINOR);
  if (d->abi_major != PX_PLUGIN_ABI_MAJOR)
    return Error::plugin(where + ": built for plugin ABI " + theirs + ", but this parallex speaks ABI " + ours +
                         "; rebuild the plugin against the SDK of this parallex");
  if (d->abi_minor > PX_PLUGIN_ABI_MINOR)
    return Error::plugin(where + ": built for plugin ABI " + theirs + ", newer than this parallex's ABI " + ours +
                         "; update parallex or rebuild the plugin against this SDK");
  bool bad = false;
  plugin->name_ = copy_string(d->name, bad);
  plugin->version_ = copy_string(d->version, bad);
  plugin->description_ = d->description ? copy_string(d->description, bad) : "";
  plugin->harness_ = d->harness ? copy_string(d->harness, bad) : plugin->name_;
  if (bad || !valid_name(plugin->name_))
    return Error::plugin(where + ": its name '" + plugin->name_ +
                         "' is missing or invalid (use lowercase letters, digits and '-')");
  if (!d->detect || !d->contribute)
    return Error::plugin(where + ": plugin " + plugin->name_ + " lacks its detect or contribute callback");
  plugin->descriptor_ = d;
  return plugin;
}

Result<std::optional<Detection>> LoadedPlugin::detect(const CommandLine& command) const {
  struct State : SinkState {
    std::optional<Detection> found;
  } state;
  px_detect_sink sink{};
  sink.ctx = static_cast<SinkState*>(&state);
  sink.claim = [](void* ctx, int confidence, const char* reason) {
    auto* s = state_of<State>(ctx);
    if (confidence < 0) confidence = 0;
    if (confidence > 100) confidence = 100;
    s->found = Detection{confidence, s->take(reason)};
  };
  set_error_callback(sink);
  CommandView view(command);
  const int rc = descriptor_->detect(&view.c, &sink);
  if (rc != PX_OK) return Error::plugin("plugin " + name_ + " failed to inspect the command: " + state.error);
  if (state.bad_string) return Error::plugin("plugin " + name_ + " returned a malformed string from detect");
  return state.found;
}

Result<policy::HarnessContribution> LoadedPlugin::contribute(policy::Platform platform, const fs::path& user_home,
                                                              const fs::path& run_home, const fs::path& run_folder,
                                                              const CommandLine* command) const {
  struct State : SinkState {
    policy::HarnessContribution out;
  } state;
  state.out.plugin = name_;
  state.out.harness = harness_;
  px_contribute_sink sink{};
  sink.ctx = static_cast<SinkState*>(&state);
  sink.path = [](void* ctx, px_access access, const char* path, const char* reason) {
    auto* s = state_of<State>(ctx);
    const bool writable = access == PX_ACCESS_READ_WRITE || access == PX_ACCESS_STATE_DIR;
    s->out.paths.push_back({s->take(path), writable ? policy::Access::write : policy::Access::read, false,
                            reason ? s->take(reason) : "", access == PX_ACCESS_STATE_DIR});
  };
  sink.executable_dir = [](void* ctx, const char* path, const char* reason) {
    auto* s = state_of<State>(ctx);
    s->out.paths.push_back({s->take(path), policy::Access::read, true, reason ? s->take(reason) : "", false});
  };
  sink.env = [](void* ctx, px_env_action action, const char* name, const char* value, const char* reason) {
    auto* s = state_of<State>(ctx);
    using A = policy::HarnessContribution::Env::Action;
    A a = action == PX_ENV_SET ? A::set : action == PX_ENV_STRIP ? A::strip : A::keep;
    s->out.env.push_back({a, s->take(name), action == PX_ENV_SET ? s->take(value) : "", reason ? s->take(reason) : ""});
  };
  sink.config_dir = [](void* ctx, const char* variable, const char* path, const char* reason) {
    auto* s = state_of<State>(ctx);
    s->out.config_dirs.push_back({s->take(variable), s->take(path), reason ? s->take(reason) : ""});
  };
  sink.nested_sandbox = [](void* ctx, px_nested_kind kind, const char* name, const char* value, const char* reason) {
    auto* s = state_of<State>(ctx);
    using K = policy::NestedSandboxSwitch::Kind;
    s->out.nested.push_back({kind == PX_NESTED_ARG ? K::arg : K::env, name ? s->take(name) : "", s->take(value),
                             reason ? s->take(reason) : ""});
  };
  sink.suggested_host = [](void* ctx, const char* host, const char* reason) {
    auto* s = state_of<State>(ctx);
    s->out.suggested_hosts.push_back({s->take(host), reason ? s->take(reason) : ""});
  };
  sink.credential = [](void* ctx, const px_credential* c) {
    auto* s = state_of<State>(ctx);
    // Every field of ABI 1.2's px_credential; a later SDK's larger struct
    // starts with the same ones. What they say is checked by the policy builder.
    if (c == nullptr || c->struct_size < sizeof(px_credential) || c->host_count > 64 ||
        (c->host_count > 0 && c->hosts == nullptr)) {
      s->bad_string = true;
      return;
    }
    policy::HarnessContribution::Credential out;
    out.variable = s->take(c->variable);
    for (std::size_t i = 0; i < c->host_count; ++i) out.hosts.push_back(s->take(c->hosts[i]));
    if (c->base_url_variable) out.base_url_variable = s->take(c->base_url_variable);
    if (c->shape) out.shape = s->take(c->shape);
    if (c->reason) out.reason = s->take(c->reason);
    s->out.credentials.push_back(std::move(out));
  };
  set_error_callback(sink);

  const std::string uh = user_home.string(), rh = run_home.string(), rf = run_folder.string();
  px_contribute_input input{};
  input.platform = to_abi(platform);
  input.user_home = uh.c_str();
  input.run_home = rh.c_str();
  input.run_folder = rf.c_str();
  std::optional<CommandView> view;
  if (command) view.emplace(*command);
  input.command = view ? &view->c : nullptr;
  const int rc = descriptor_->contribute(&input, &sink);
  if (rc != PX_OK) return Error::plugin("plugin " + name_ + " failed to describe its harness: " + state.error);
  if (state.bad_string) return Error::plugin("plugin " + name_ + " passed a null or oversized string; the plugin needs fixing");
  return std::move(state.out);
}

Result<std::vector<SignInStep>> LoadedPlugin::sign_in_steps(policy::Platform platform, const fs::path& user_home,
                                                            const fs::path& agent_home) const {
  if (!descriptor_->carry_sign_in) return std::vector<SignInStep>{};
  struct State : SinkState {
    std::vector<SignInStep> steps;
  } state;
  px_sign_in_sink sink{};
  sink.ctx = static_cast<SinkState*>(&state);
  sink.copy_file = [](void* ctx, const char* from, const char* to, const char* what) {
    auto* s = state_of<State>(ctx);
    s->steps.push_back({SignInStep::Kind::copy_file, s->take(from), s->take(to), what ? s->take(what) : ""});
  };
  sink.instruction = [](void* ctx, const char* text) {
    auto* s = state_of<State>(ctx);
    s->steps.push_back({SignInStep::Kind::instruction, "", "", s->take(text)});
  };
  set_error_callback(sink);
  const std::string uh = user_home.string(), ah = agent_home.string();
  px_sign_in_input input{to_abi(platform), uh.c_str(), ah.c_str()};
  if (descriptor_->carry_sign_in(&input, &sink) != PX_OK)
    return Error::plugin("plugin " + name_ + " failed to describe its sign-in: " + state.error);
  if (state.bad_string) return Error::plugin("plugin " + name_ + " passed a null string for its sign-in");
  return std::move(state.steps);
}

Result<TranscriptSessions> LoadedPlugin::parse_transcripts(const std::vector<std::string>& paths,
                                                           std::int64_t since_ms, std::int64_t until_ms) const {
  if (!descriptor_->parse_transcripts)
    return Error::unsupported("plugin " + name_ + " does not read transcripts");
  struct State : SinkState {
    TranscriptSessions out;
  } state;
  px_transcript_sink sink{};
  sink.ctx = static_cast<SinkState*>(&state);
  sink.session = [](void* ctx, const char* json, std::size_t length) {
    auto* s = state_of<State>(ctx);
    if (json) s->out.sessions.emplace_back(json, length);
  };
  sink.warning = [](void* ctx, const char* path, const char* message) {
    auto* s = state_of<State>(ctx);
    s->out.warnings.emplace_back(path ? s->take(path) : "", s->take(message));
  };
  set_error_callback(sink);
  std::vector<const char*> raw;
  for (const auto& p : paths) raw.push_back(p.c_str());
  px_transcript_input input{raw.data(), raw.size(), since_ms, until_ms};
  if (descriptor_->parse_transcripts(&input, &sink) != PX_OK)
    return Error::plugin("plugin " + name_ + " failed to read transcripts: " + state.error);
  return std::move(state.out);
}

Result<std::vector<std::string>> LoadedPlugin::transcript_roots(const fs::path& run_home) const {
  if (!descriptor_->transcript_roots) return std::vector<std::string>{};
  struct State : SinkState {
    std::vector<std::string> roots;
  } state;
  px_path_sink sink{};
  sink.ctx = static_cast<SinkState*>(&state);
  sink.path = [](void* ctx, const char* path, const char*) {
    auto* s = state_of<State>(ctx);
    s->roots.push_back(s->take(path));
  };
  set_error_callback(sink);
  const std::string home = run_home.string();
  if (descriptor_->transcript_roots(home.c_str(), &sink) != PX_OK)
    return Error::plugin("plugin " + name_ + " failed to name its transcript folders: " + state.error);
  return std::move(state.roots);
}

Result<policy::ProjectFiles> LoadedPlugin::project_files() const {
  policy::ProjectFiles out;
  out.plugin = name_;
  out.harness = harness_;
  constexpr std::size_t kEnd = offsetof(px_plugin, project_files) + sizeof(px_plugin::project_files);
  if (descriptor_->struct_size < kEnd || !descriptor_->project_files) return out;
  struct State : SinkState {
    std::vector<policy::ProjectFiles::File> files;
  } state;
  px_path_sink sink{};
  sink.ctx = static_cast<SinkState*>(&state);
  sink.path = [](void* ctx, const char* path, const char* reason) {
    auto* s = state_of<State>(ctx);
    s->files.push_back({s->take(path), reason ? s->take(reason) : ""});
  };
  set_error_callback(sink);
  if (descriptor_->project_files(&sink) != PX_OK)
    return Error::plugin("plugin " + name_ + " failed to name its project files: " + state.error);
  if (state.bad_string) return Error::plugin("plugin " + name_ + " passed a null or oversized project file");
  for (auto& f : state.files) {
    const fs::path p(f.path);
    bool climbs = false;
    for (const auto& part : p) climbs = climbs || part == "..";
    if (f.path.empty() || p.is_absolute() || climbs || p.lexically_normal() == "." ||
        f.path.find('\0') != std::string::npos)
      return Error::plugin("plugin " + name_ + " named the project file '" + f.path.substr(0, 200) +
                           "', which is not a path inside the project (relative, without '..'); the plugin needs "
                           "fixing");
    std::string normal = p.lexically_normal().string();
    while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
    out.files.push_back({std::move(normal), std::move(f.reason)});
  }
  return out;
}

Result<policy::DeclaredHomeFiles> LoadedPlugin::home_files(policy::Platform platform) const {
  policy::DeclaredHomeFiles out;
  out.plugin = name_;
  out.harness = harness_;
  constexpr std::size_t kEnd = offsetof(px_plugin, home_files) + sizeof(px_plugin::home_files);
  if (descriptor_->struct_size < kEnd || !descriptor_->home_files) return out;
  struct State : SinkState {
    std::vector<policy::DeclaredHomeFiles::File> files;
  } state;
  px_home_file_sink sink{};
  sink.ctx = static_cast<SinkState*>(&state);
  sink.file = [](void* ctx, const px_home_file* f) {
    auto* s = state_of<State>(ctx);
    // Every field of ABI 1.4's px_home_file; a later SDK's larger struct
    // starts with the same ones.
    if (f == nullptr || f->struct_size < sizeof(px_home_file) || f->key_count > 256 ||
        (f->key_count > 0 && f->keys == nullptr)) {
      s->bad_string = true;
      return;
    }
    // Anything but PX_HOME_DATA is read as settings: held back, never written.
    const auto kind = [](px_home_kind k) {
      return k == PX_HOME_DATA ? policy::HomeKind::data : policy::HomeKind::settings;
    };
    policy::DeclaredHomeFiles::File file;
    file.path = s->take(f->path);
    file.directory = f->directory != 0;
    file.kind = kind(f->kind);
    file.format = f->format == PX_HOME_JSON   ? policy::HomeFormat::json
                  : f->format == PX_HOME_TOML ? policy::HomeFormat::toml
                                              : policy::HomeFormat::whole;
    if (f->reason) file.reason = s->take(f->reason);
    for (std::size_t i = 0; i < f->key_count; ++i) {
      const px_home_key& k = f->keys[i];
      file.keys.push_back({s->take(k.pattern), kind(k.kind), k.reason ? s->take(k.reason) : ""});
    }
    s->files.push_back(std::move(file));
  };
  set_error_callback(sink);
  if (descriptor_->home_files(to_abi(platform), &sink) != PX_OK)
    return Error::plugin("plugin " + name_ + " failed to name its home files: " + state.error);
  if (state.bad_string)
    return Error::plugin("plugin " + name_ + " passed a null, oversized or malformed home file");
  for (auto& f : state.files) {
    const fs::path p(f.path);
    bool climbs = false;
    for (const auto& part : p) climbs = climbs || part == "..";
    if (f.path.rfind("~/", 0) != 0 || f.path.size() < 3 || climbs || f.path.find('\0') != std::string::npos)
      return Error::plugin("plugin " + name_ + " named the home file '" + f.path.substr(0, 200) +
                           "', which is not a path under '~/' without '..'; the plugin needs fixing");
    for (const auto& k : f.keys) {
      const auto parts = policy::split_key_pattern(k.pattern, "/");
      const bool empty_part =
          std::any_of(parts.begin(), parts.end(), [](const std::string& x) { return x.empty(); });
      if (k.pattern.empty() || empty_part || f.format == policy::HomeFormat::whole || f.directory)
        return Error::plugin(
            "plugin " + name_ + " named the key '" + k.pattern.substr(0, 200) + "' in " + f.path +
            ", which is not a key path (a.b.c) of a JSON or TOML file; the plugin needs fixing");
    }
    std::string normal = "~/" + p.lexically_normal().string().substr(2);
    while (normal.size() > 2 && normal.back() == '/') normal.pop_back();
    f.path = std::move(normal);
    out.files.push_back(std::move(f));
  }
  return out;
}

}  // namespace px::plugins
