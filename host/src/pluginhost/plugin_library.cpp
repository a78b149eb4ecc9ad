#include "pluginhost/plugin_library.hpp"

#include <boost/dll/shared_library_load_mode.hpp>
#include <cstddef>
#include <exception>

namespace px::pluginhost {

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

// The state a sink callback writes into. Lives on the stack for one call.
struct SinkState {
  std::string error;
  bool bad_string = false;

  std::string take(const char* s) { return copy_string(s, bad_string); }
  std::string take_optional(const char* s) { return s ? take(s) : std::string(); }
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

}  // namespace

Result<std::unique_ptr<PluginLibrary>> PluginLibrary::load(const fs::path& file, LogSink log) {
  std::unique_ptr<PluginLibrary> plugin(new PluginLibrary());
  const std::string where = file.string();
  try {
    plugin->library_.load(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    return Error::plugin(where + ": cannot be loaded as a shared library (" + std::string(e.what()) +
                         "); remove it from the plugin path or rebuild it");
  }
  if (!plugin->library_.has(PX_PLUGIN_ENTRY_SYMBOL))
    return Error::plugin(where + ": not a Parallex plugin (it exports no " +
                         std::string(PX_PLUGIN_ENTRY_SYMBOL) +
                         "); build it with the Parallex SDK's PARALLEX_PLUGIN macro");
  auto& entry = plugin->library_.get<const px_plugin*()>(PX_PLUGIN_ENTRY_SYMBOL);
  const px_plugin* d = nullptr;
  try {
    d = entry();
  } catch (...) {
    // A C entry point must not throw; one that does is broken but caught here.
    return Error::plugin(where + ": its entry point threw an exception; the plugin is broken");
  }
  if (!d) {
    // Since ABI 1.5 the SDK keeps why (a constructor's exception).
    std::string why;
    if (plugin->library_.has(PX_PLUGIN_ENTRY_ERROR_SYMBOL)) {
      bool bad = false;
      why = copy_string(plugin->library_.get<const char*()>(PX_PLUGIN_ENTRY_ERROR_SYMBOL)(), bad);
    }
    return Error::plugin(where + ": its entry point failed (returned no descriptor)" +
                         (why.empty() ? std::string("; see the plugin's own logs") : ": " + why));
  }
  constexpr std::size_t kMinSize = offsetof(px_plugin, contribute) + sizeof(d->contribute);
  if (d->struct_size < kMinSize)
    return Error::plugin(where + ": its descriptor is too small (" + std::to_string(d->struct_size) +
                         " bytes); it was not built with the Parallex SDK");
  PluginInfo& info = plugin->info_;
  info.abi_major = d->abi_major;
  info.abi_minor = d->abi_minor;
  const std::string theirs = std::to_string(d->abi_major) + "." + std::to_string(d->abi_minor);
  const std::string ours = std::to_string(PX_PLUGIN_ABI_MAJOR) + "." + std::to_string(PX_PLUGIN_ABI_MINOR);
  if (d->abi_major != PX_PLUGIN_ABI_MAJOR)
    return Error::plugin(where + ": built for plugin ABI " + theirs + ", but this parallex speaks ABI " +
                         ours + "; rebuild the plugin against the SDK of this parallex");
  if (d->abi_minor > PX_PLUGIN_ABI_MINOR)
    return Error::plugin(where + ": built for plugin ABI " + theirs + ", newer than this parallex's ABI " +
                         ours + "; update parallex or rebuild the plugin against this SDK");
  bool bad = false;
  info.name = copy_string(d->name, bad);
  info.version = copy_string(d->version, bad);
  info.description = d->description ? copy_string(d->description, bad) : "";
  info.harness = d->harness ? copy_string(d->harness, bad) : info.name;
  if (bad) return Error::plugin(where + ": its name, version or description is missing or too long");
  if (!d->detect || !d->contribute)
    return Error::plugin(where + ": plugin " + info.name + " lacks its detect or contribute callback");
  info.has_sign_in = d->carry_sign_in != nullptr;
  info.has_transcripts = d->parse_transcripts != nullptr;
  plugin->descriptor_ = d;
  plugin->log_ = std::move(log);
  if (plugin->has(offsetof(px_plugin, attach_host) + sizeof(d->attach_host)) && d->attach_host) {
    plugin->host_.struct_size = sizeof(px_host);
    plugin->host_.ctx = plugin.get();
    plugin->host_.log = [](void* ctx, px_log_level level, const char* message) {
      auto* self = static_cast<PluginLibrary*>(ctx);
      bool bad_line = false;
      if (self->log_ && message) self->log_(static_cast<int>(level), copy_string(message, bad_line));
    };
    d->attach_host(&plugin->host_);
  }
  return plugin;
}

Result<std::optional<Detection>> PluginLibrary::detect(const CommandLine& command) const {
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
  if (descriptor_->detect(&view.c, &sink) != PX_OK) return Error::plugin(state.error);
  if (state.bad_string) return Error::plugin("it passed a null or oversized string");
  return state.found;
}

Result<policy::HarnessContribution> PluginLibrary::contribute(policy::Platform platform,
                                                              const std::string& user_home,
                                                              const std::string& run_home,
                                                              const std::string& run_folder,
                                                              const CommandLine* command) const {
  struct State : SinkState {
    policy::HarnessContribution out;
    bool bad_access = false;
  } state;
  state.out.plugin = info_.name;
  state.out.harness = info_.harness;
  px_contribute_sink sink{};
  sink.ctx = static_cast<SinkState*>(&state);
  sink.path = [](void* ctx, px_access access, const char* path, const char* reason) {
    auto* s = state_of<State>(ctx);
    using K = policy::HarnessContribution::Path::Kind;
    K kind = K::read;
    switch (access) {
      case PX_ACCESS_READ:
        kind = K::read;
        break;
      case PX_ACCESS_READ_WRITE:
        kind = K::read_write;
        break;
      case PX_ACCESS_STATE_DIR:
        kind = K::state_dir;
        break;
      case PX_ACCESS_STATE_FILE:
        kind = K::state_file;
        break;
      case PX_ACCESS_READ_ONLY:
        kind = K::read_only;
        break;
      default:
        s->bad_access = true;
        return;
    }
    s->out.paths.push_back({s->take(path), kind, s->take_optional(reason)});
  };
  sink.executable_dir = [](void* ctx, const char* path, const char* reason) {
    auto* s = state_of<State>(ctx);
    s->out.paths.push_back(
        {s->take(path), policy::HarnessContribution::Path::Kind::executable_dir, s->take_optional(reason)});
  };
  sink.env = [](void* ctx, px_env_action action, const char* name, const char* value, const char* reason) {
    auto* s = state_of<State>(ctx);
    using A = policy::HarnessContribution::Env::Action;
    A a = action == PX_ENV_SET ? A::set : action == PX_ENV_STRIP ? A::strip : A::keep;
    s->out.env.push_back(
        {a, s->take(name), action == PX_ENV_SET ? s->take(value) : "", s->take_optional(reason)});
  };
  sink.config_dir = [](void* ctx, const char* variable, const char* path, const char* reason) {
    auto* s = state_of<State>(ctx);
    s->out.config_dirs.push_back({s->take(variable), s->take(path), s->take_optional(reason)});
  };
  sink.nested_sandbox = [](void* ctx, px_nested_kind kind, const char* name, const char* value,
                           const char* reason) {
    auto* s = state_of<State>(ctx);
    using K = policy::NestedSandboxSwitch::Kind;
    s->out.nested.push_back({kind == PX_NESTED_ARG ? K::arg : K::env, s->take_optional(name), s->take(value),
                             s->take_optional(reason)});
  };
  sink.suggested_host = [](void* ctx, const char* host, const char* reason) {
    auto* s = state_of<State>(ctx);
    s->out.suggested_hosts.push_back({s->take(host), s->take_optional(reason)});
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
    out.base_url_variable = s->take_optional(c->base_url_variable);
    out.shape = s->take_optional(c->shape);
    out.reason = s->take_optional(c->reason);
    s->out.credentials.push_back(std::move(out));
  };
  set_error_callback(sink);

  px_contribute_input input{};
  input.platform = to_abi(platform);
  input.user_home = user_home.c_str();
  input.run_home = run_home.c_str();
  input.run_folder = run_folder.c_str();
  std::optional<CommandView> view;
  if (command) view.emplace(*command);
  input.command = view ? &view->c : nullptr;
  if (descriptor_->contribute(&input, &sink) != PX_OK) return Error::plugin(state.error);
  if (state.bad_string) return Error::plugin("it passed a null or oversized string");
  if (state.bad_access) return Error::plugin("it named a path with an access this host does not know");
  return std::move(state.out);
}

Result<std::vector<SignInStep>> PluginLibrary::sign_in_steps(policy::Platform platform,
                                                             const std::string& user_home,
                                                             const std::string& agent_home) const {
  if (!descriptor_->carry_sign_in) return std::vector<SignInStep>{};
  struct State : SinkState {
    std::vector<SignInStep> steps;
  } state;
  px_sign_in_sink sink{};
  sink.ctx = static_cast<SinkState*>(&state);
  sink.copy_file = [](void* ctx, const char* from, const char* to, const char* what) {
    auto* s = state_of<State>(ctx);
    s->steps.push_back({SignInStep::Kind::copy_file, s->take(from), s->take(to), s->take_optional(what)});
  };
  sink.instruction = [](void* ctx, const char* text) {
    auto* s = state_of<State>(ctx);
    s->steps.push_back({SignInStep::Kind::instruction, "", "", s->take(text)});
  };
  set_error_callback(sink);
  px_sign_in_input input{to_abi(platform), user_home.c_str(), agent_home.c_str()};
  if (descriptor_->carry_sign_in(&input, &sink) != PX_OK) return Error::plugin(state.error);
  if (state.bad_string) return Error::plugin("it passed a null or oversized string");
  return std::move(state.steps);
}

Result<TranscriptSessions> PluginLibrary::parse_transcripts(const std::vector<std::string>& paths,
                                                            std::int64_t since_ms, std::int64_t until_ms,
                                                            const SessionSink& on_session) const {
  if (!descriptor_->parse_transcripts) return Error::unsupported("it does not read transcripts");
  struct State : SinkState {
    TranscriptSessions out;
    const SessionSink* on_session = nullptr;
  } state;
  state.on_session = on_session ? &on_session : nullptr;
  px_transcript_sink sink{};
  sink.ctx = static_cast<SinkState*>(&state);
  sink.session = [](void* ctx, const char* json, std::size_t length) {
    auto* s = state_of<State>(ctx);
    if (!json) return;
    if (s->on_session)
      (*s->on_session)(std::string_view(json, length));
    else
      s->out.sessions.emplace_back(json, length);
  };
  sink.warning = [](void* ctx, const char* path, const char* message) {
    auto* s = state_of<State>(ctx);
    s->out.warnings.emplace_back(s->take_optional(path), s->take(message));
  };
  set_error_callback(sink);
  std::vector<const char*> raw;
  for (const auto& p : paths) raw.push_back(p.c_str());
  px_transcript_input input{raw.data(), raw.size(), since_ms, until_ms};
  if (descriptor_->parse_transcripts(&input, &sink) != PX_OK) return Error::plugin(state.error);
  return std::move(state.out);
}

Result<std::vector<std::string>> PluginLibrary::transcript_roots(const std::string& run_home,
                                                                 const std::string& run_folder) const {
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
  int rc = PX_OK;
  if (has(offsetof(px_plugin, transcript_roots_in) + sizeof(px_plugin::transcript_roots_in)) &&
      descriptor_->transcript_roots_in) {
    px_transcript_roots_input input{sizeof(px_transcript_roots_input), run_home.c_str(),
                                    run_folder.empty() ? nullptr : run_folder.c_str()};
    rc = descriptor_->transcript_roots_in(&input, &sink);
  } else if (descriptor_->transcript_roots) {
    rc = descriptor_->transcript_roots(run_home.c_str(), &sink);
  }
  if (rc != PX_OK) return Error::plugin(state.error);
  if (state.bad_string) return Error::plugin("it passed a null or oversized string");
  return std::move(state.roots);
}

Result<policy::ProjectFiles> PluginLibrary::project_files() const {
  policy::ProjectFiles out;
  out.plugin = info_.name;
  out.harness = info_.harness;
  if (!has(offsetof(px_plugin, project_files) + sizeof(px_plugin::project_files)) ||
      !descriptor_->project_files)
    return out;
  struct State : SinkState {
    std::vector<policy::ProjectFiles::File> files;
  } state;
  px_path_sink sink{};
  sink.ctx = static_cast<SinkState*>(&state);
  sink.path = [](void* ctx, const char* path, const char* reason) {
    auto* s = state_of<State>(ctx);
    s->files.push_back({s->take(path), s->take_optional(reason)});
  };
  set_error_callback(sink);
  if (descriptor_->project_files(&sink) != PX_OK) return Error::plugin(state.error);
  if (state.bad_string) return Error::plugin("it passed a null or oversized string");
  out.files = std::move(state.files);
  return out;
}

Result<policy::DeclaredHomeFiles> PluginLibrary::home_files(policy::Platform platform) const {
  policy::DeclaredHomeFiles out;
  out.plugin = info_.name;
  out.harness = info_.harness;
  if (!has(offsetof(px_plugin, home_files) + sizeof(px_plugin::home_files)) || !descriptor_->home_files)
    return out;
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
    // Anything but data and scratch is read as settings: held back, never written.
    const auto kind = [](px_home_kind k) {
      return k == PX_HOME_DATA      ? policy::HomeKind::data
             : k == PX_HOME_SCRATCH ? policy::HomeKind::scratch
                                    : policy::HomeKind::settings;
    };
    policy::DeclaredHomeFiles::File file;
    file.path = s->take(f->path);
    file.directory = f->directory != 0;
    file.kind = kind(f->kind);
    file.format = f->format == PX_HOME_JSON   ? policy::HomeFormat::json
                  : f->format == PX_HOME_TOML ? policy::HomeFormat::toml
                                              : policy::HomeFormat::whole;
    file.reason = s->take_optional(f->reason);
    for (std::size_t i = 0; i < f->key_count; ++i) {
      const px_home_key& k = f->keys[i];
      file.keys.push_back({s->take(k.pattern), kind(k.kind), s->take_optional(k.reason)});
    }
    s->files.push_back(std::move(file));
  };
  set_error_callback(sink);
  if (descriptor_->home_files(to_abi(platform), &sink) != PX_OK) return Error::plugin(state.error);
  if (state.bad_string) return Error::plugin("it passed a null, oversized or malformed home file");
  out.files = std::move(state.files);
  return out;
}

}  // namespace px::pluginhost
