// Parallex plugin SDK — the C++ authoring layer over <parallex/plugin_abi.h>.
//
// A plugin author writes an ordinary class and one macro:
//
//   #include <parallex/plugin.hpp>
//
//   class GeminiPlugin final : public parallex::sdk::Plugin {
//    public:
//     std::optional<parallex::sdk::Detection> detect(const parallex::sdk::Command& cmd) override {
//       return parallex::sdk::detect_program(cmd, {{"gemini"}, {"@google/gemini-cli"}});
//     }
//     void contribute(const parallex::sdk::ContributeInput& in, parallex::sdk::Contribution& out) override {
//       out.read_write("~/.gemini", "Gemini CLI's settings, sign-in and history");
//       out.keep_env("GEMINI_*", "Gemini CLI's API key");
//     }
//   };
//
//   PARALLEX_PLUGIN(GeminiPlugin, "gemini", "1.0.0", "Gemini CLI", "Runs Google's Gemini CLI")
//
// Everything here is header-only and inline: the plugin carries its own copy,
// and only the C structs of plugin_abi.h cross into the host. Every trampoline
// catches exceptions, so a throwing plugin becomes an error message, not a
// crash. (The host calls plugins in a process of their own besides, so even a
// crash or a hang in a plugin does not take it down: docs/plugins.md.)
//
// Beside this header: <parallex/detect.hpp> (detect_program, included here),
// <parallex/support.hpp> (install dirs, sign-in files, agent runs),
// <parallex/json.hpp> (writing transcript sessions with nlohmann/json) and
// <parallex/transcripts.hpp> (a parser bound to a plugin in one line).
#pragma once

#include <parallex/plugin_abi.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <parallex/detect.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

// The SDK's own symbols stay inside each plugin, whatever visibility the
// plugin is built with: a static that two plugins both defined with default
// visibility would be one object for both (GNU unique symbols), and one
// plugin would answer for the other.
#if defined(__GNUC__)
#define PX_SDK_LOCAL __attribute__((visibility("hidden")))
#else
#define PX_SDK_LOCAL
#endif

namespace parallex::sdk {

// Capitalised: `linux` is a predefined macro in GNU C++ modes.
enum class Platform { Linux = PX_PLATFORM_LINUX, MacOS = PX_PLATFORM_MACOS };

// ---- inputs -----------------------------------------------------------------

struct ContributeInput {
  Platform platform = Platform::Linux;
  std::string user_home;
  std::string run_home;
  std::string run_folder;
  std::optional<Command> command;
};

struct SignInInput {
  Platform platform = Platform::Linux;
  std::string user_home;
  std::string agent_home;
};

struct TranscriptInput {
  std::vector<std::string> paths;  // absolute, files or folders
  std::int64_t since_ms = 0;
  std::int64_t until_ms = 0;
};

// Where the harness ran, for transcript_roots_in (ABI 1.5).
struct TranscriptRootsInput {
  std::string run_home;    // absolute
  std::string run_folder;  // absolute, or empty when the host does not know it
};

// ---- the host's log (ABI 1.5) ----------------------------------------------------

enum class LogLevel { debug = PX_LOG_DEBUG, info = PX_LOG_INFO, warn = PX_LOG_WARN };

namespace detail {
// The host's services, given to this plugin once it is loaded (attach_host).
PX_SDK_LOCAL inline const px_host*& host_slot() {
  static const px_host* host = nullptr;
  return host;
}

// A string for the C boundary. A NUL inside it would cut it short there
// without a word (`~/.app\0/../.bashrc` would arrive as `~/.app`): refused
// instead, as the plugin's error, naming what it was.
inline const char* c_text(const std::string& s, const char* what) {
  if (s.find('\0') != std::string::npos)
    throw std::invalid_argument(std::string(what) + " \"" + s.substr(0, s.find('\0')) +
                                "\\x00...\" holds a NUL byte, which would cut it short");
  return s.c_str();
}
}  // namespace detail

// A line in the host's log, named after the plugin: debug and info show with
// `parallex -v`, warn always. Secrets in it are redacted as in every log line.
// Before the host attached (and outside a host, in tests) it goes nowhere.
inline void log(LogLevel level, const std::string& message) {
  const px_host* host = detail::host_slot();
  if (host && host->log && message.find('\0') == std::string::npos)
    host->log(host->ctx, static_cast<px_log_level>(level), message.c_str());
}
inline void log_debug(const std::string& message) {
  log(LogLevel::debug, message);
}
inline void log_info(const std::string& message) {
  log(LogLevel::info, message);
}
inline void log_warn(const std::string& message) {
  log(LogLevel::warn, message);
}

// ---- outputs: thin wrappers over the host's sinks ------------------------------

// Paths are "~/..." (under the home the harness runs with) or absolute,
// without "..": the host refuses anything else, naming the plugin.
class Contribution {
 public:
  explicit Contribution(const px_contribute_sink& sink) : sink_(sink) {}
  // Readable. Inside a writable folder (an agent's whole home is writable)
  // this does not make a path read-only: read_only() does.
  void read(const std::string& path, const std::string& reason) { path_(PX_ACCESS_READ, path, reason); }
  void read_write(const std::string& path, const std::string& reason) {
    path_(PX_ACCESS_READ_WRITE, path, reason);
  }
  // A directory of the harness's own state that the host creates when missing (ABI 1.1).
  void state_dir(const std::string& path, const std::string& reason) {
    path_(PX_ACCESS_STATE_DIR, path, reason);
  }
  // A file of the harness's own state, writable, and not its folder (ABI 1.5).
  // In an agent's home the host makes it when missing; in the user's own
  // home a missing one is an empty file of the run's own in the view, made
  // there (0600) after the run only if the run wrote into it.
  void state_file(const std::string& path, const std::string& reason) {
    path_(PX_ACCESS_STATE_FILE, path, reason);
  }
  // Never writable, even inside a writable folder of the harness or an agent's
  // home (ABI 1.5): a file the harness loads settings or variables from.
  void read_only(const std::string& path, const std::string& reason) {
    path_(PX_ACCESS_READ_ONLY, path, reason);
  }
  void executable_dir(const std::string& path, const std::string& reason) {
    sink_.executable_dir(sink_.ctx, detail::c_text(path, "the executable dir"),
                         detail::c_text(reason, "the reason"));
  }
  void keep_env(const std::string& pattern, const std::string& reason) {
    sink_.env(sink_.ctx, PX_ENV_KEEP, detail::c_text(pattern, "the variable pattern"), nullptr,
              detail::c_text(reason, "the reason"));
  }
  void strip_env(const std::string& pattern, const std::string& reason) {
    sink_.env(sink_.ctx, PX_ENV_STRIP, detail::c_text(pattern, "the variable pattern"), nullptr,
              detail::c_text(reason, "the reason"));
  }
  void set_env(const std::string& name, const std::string& value, const std::string& reason) {
    sink_.env(sink_.ctx, PX_ENV_SET, detail::c_text(name, "the variable"), detail::c_text(value, "the value"),
              detail::c_text(reason, "the reason"));
  }
  void config_dir(const std::string& variable, const std::string& path, const std::string& reason) {
    sink_.config_dir(sink_.ctx, detail::c_text(variable, "the variable"),
                     detail::c_text(path, "the config dir"), detail::c_text(reason, "the reason"));
  }
  void nested_sandbox_env(const std::string& name, const std::string& value, const std::string& reason) {
    sink_.nested_sandbox(sink_.ctx, PX_NESTED_ENV, detail::c_text(name, "the variable"),
                         detail::c_text(value, "the value"), detail::c_text(reason, "the reason"));
  }
  void nested_sandbox_arg(const std::string& argument, const std::string& reason) {
    sink_.nested_sandbox(sink_.ctx, PX_NESTED_ARG, "", detail::c_text(argument, "the argument"),
                         detail::c_text(reason, "the reason"));
  }
  void suggested_host(const std::string& host, const std::string& reason) {
    sink_.suggested_host(sink_.ctx, detail::c_text(host, "the host"), detail::c_text(reason, "the reason"));
  }
  // A provider key the host brokers (ABI 1.2): the run gets a placeholder in
  // `variable`, and the run's proxy sends the key to `hosts` only (or to the
  // host of the https:// URL in `base_url_variable` when the user set one).
  void brokered_credential(const std::string& variable, const std::vector<std::string>& hosts,
                           const std::string& base_url_variable, const std::string& shape,
                           const std::string& reason) {
    std::vector<const char*> names;
    for (const auto& h : hosts) names.push_back(detail::c_text(h, "the host"));
    px_credential c{};
    c.struct_size = sizeof c;
    c.variable = detail::c_text(variable, "the variable");
    c.hosts = names.data();
    c.host_count = names.size();
    c.base_url_variable =
        base_url_variable.empty() ? nullptr : detail::c_text(base_url_variable, "the base URL variable");
    c.shape = shape.empty() ? nullptr : detail::c_text(shape, "the shape");
    c.reason = detail::c_text(reason, "the reason");
    // A host that loads a 1.2 plugin has this callback; one that left it
    // unset brokers nothing, and the plugin must not crash for it.
    if (sink_.credential) sink_.credential(sink_.ctx, &c);
  }

 private:
  void path_(px_access access, const std::string& path, const std::string& reason) {
    sink_.path(sink_.ctx, access, detail::c_text(path, "the path"), detail::c_text(reason, "the reason"));
  }
  const px_contribute_sink& sink_;
};

class SignIn {
 public:
  explicit SignIn(const px_sign_in_sink& sink) : sink_(sink) {}
  void copy_file(const std::string& from, const std::string& to, const std::string& what) {
    sink_.copy_file(sink_.ctx, detail::c_text(from, "the file"), detail::c_text(to, "the copy"),
                    detail::c_text(what, "the description"));
  }
  void instruction(const std::string& text) {
    sink_.instruction(sink_.ctx, detail::c_text(text, "the instruction"));
  }

 private:
  const px_sign_in_sink& sink_;
};

class TranscriptOutput {
 public:
  explicit TranscriptOutput(const px_transcript_sink& sink) : sink_(sink) {}
  // One session as a JSON object (see plugin_abi.h for its fields).
  void session(std::string_view json) { sink_.session(sink_.ctx, json.data(), json.size()); }
  void warning(const std::string& path, const std::string& message) {
    sink_.warning(sink_.ctx, detail::c_text(path, "the path"), detail::c_text(message, "the warning"));
  }

 private:
  const px_transcript_sink& sink_;
};

// ---- a harness's files in a home (ABI 1.4) ------------------------------------------

enum class HomeKind { data = PX_HOME_DATA, settings = PX_HOME_SETTINGS, scratch = PX_HOME_SCRATCH };
enum class HomeFormat { whole = PX_HOME_WHOLE, json = PX_HOME_JSON, toml = PX_HOME_TOML };

// A key rule inside a JSON or TOML file: "mcpServers", "projects.*.mcpServers",
// "projects.{run_folder}.trust_level" (`*` any one key, `{run_folder}` the
// run's folder). It covers the key and what lies beneath; the first that
// matches decides.
struct HomeKey {
  std::string pattern;
  HomeKind kind = HomeKind::settings;
  std::string reason;
};

struct HomeFile {
  std::string path;  // "~/.claude.json", "~/.codex"
  bool directory = false;
  HomeKind kind = HomeKind::data;
  HomeFormat format = HomeFormat::whole;
  std::vector<HomeKey> keys;
  std::string reason;

  // A file that is the harness's own data, with the keys in it that run commands.
  static HomeFile data_file(std::string path, HomeFormat format, std::vector<HomeKey> keys,
                            std::string reason) {
    return {std::move(path), false, HomeKind::data, format, std::move(keys), std::move(reason)};
  }
  // A file of settings (every change held back but for the keys named data).
  static HomeFile settings_file(std::string path, HomeFormat format, std::vector<HomeKey> keys,
                                std::string reason) {
    return {std::move(path), false, HomeKind::settings, format, std::move(keys), std::move(reason)};
  }
  static HomeFile data_dir(std::string path, std::string reason) {
    return {std::move(path), true, HomeKind::data, HomeFormat::whole, {}, std::move(reason)};
  }
  static HomeFile settings_dir(std::string path, std::string reason) {
    return {std::move(path), true, HomeKind::settings, HomeFormat::whole, {}, std::move(reason)};
  }
  // A folder (or a file) the harness writes and runs from within a session
  // only (ABI 1.6): each run gets its own, dropped when it ends.
  static HomeFile scratch_dir(std::string path, std::string reason) {
    return {std::move(path), true, HomeKind::scratch, HomeFormat::whole, {}, std::move(reason)};
  }
  static HomeFile scratch_file(std::string path, std::string reason) {
    return {std::move(path), false, HomeKind::scratch, HomeFormat::whole, {}, std::move(reason)};
  }
};

// ---- the class a plugin author derives from --------------------------------------

class Plugin {
 public:
  virtual ~Plugin() = default;
  // Does this command run my harness? nullopt (or confidence 0) when not.
  virtual std::optional<Detection> detect(const Command& command) = 0;
  // The harness's state carve-outs, environment rules and config dirs.
  virtual void contribute(const ContributeInput& input, Contribution& out) = 0;
  // Override both to carry a sign-in into an agent's home.
  virtual bool has_sign_in() const { return false; }
  virtual void carry_sign_in(const SignInInput&, SignIn&) {}
  // The files in a project that the harness runs or trusts when it starts
  // there (ABI 1.3): relative to the project's folder, e.g. {".mcp.json",
  // "MCP servers it starts"}. They stay read-only in every sealed run.
  struct ProjectFile {
    std::string path;
    std::string reason;
  };
  virtual std::vector<ProjectFile> project_files() { return {}; }
  // The harness's files in a home (ABI 1.4), each its own data or a setting
  // that runs commands, down to keys in JSON and TOML files (HomeFile above).
  // In a run under the user's own home, data lands there and a changed
  // setting is held back until the user applies it.
  virtual std::vector<HomeFile> home_files(Platform) { return {}; }
  // Override has_transcripts, parse_transcripts and one of the two roots to
  // report what the harness did (<parallex/transcripts.hpp> binds a parser
  // in one line). Roots are absolute folders or files.
  virtual bool has_transcripts() const { return false; }
  virtual void parse_transcripts(const TranscriptInput&, TranscriptOutput&) {}
  virtual std::vector<std::string> transcript_roots(const std::string& /*run_home*/) { return {}; }
  // Told the run's folder too (ABI 1.5), for a harness that keeps its
  // history in the project. By default, the roots under the home.
  virtual std::vector<std::string> transcript_roots_in(const TranscriptRootsInput& where) {
    return transcript_roots(where.run_home);
  }
};

}  // namespace parallex::sdk

// ---- trampolines and the registration macro ----------------------------------------

namespace parallex::sdk::detail {

template <class Sink>
int guarded(const Sink* sink, auto&& body) noexcept {
  try {
    body();
    return PX_OK;
  } catch (const std::exception& e) {
    if (sink) sink->error(sink->ctx, e.what());
  } catch (...) {
    if (sink) sink->error(sink->ctx, "the plugin threw an unknown exception");
  }
  return PX_ERROR;
}

inline ContributeInput to_input(const px_contribute_input& in) {
  ContributeInput out;
  out.platform = static_cast<Platform>(in.platform);
  out.user_home = in.user_home ? in.user_home : "";
  out.run_home = in.run_home ? in.run_home : "";
  out.run_folder = in.run_folder ? in.run_folder : "";
  if (in.command) out.command = Command::from(*in.command);
  return out;
}

template <class P>
struct PX_SDK_LOCAL Trampolines {
  static P& instance() {
    static P plugin;
    return plugin;
  }
  // Transcript roots through the base class, where both names are seen.
  static std::vector<std::string> roots(const TranscriptRootsInput& where) {
    Plugin& base = instance();
    return base.transcript_roots_in(where);
  }
  static int detect(const px_command* command, const px_detect_sink* sink) noexcept {
    return guarded(sink, [&] {
      if (auto found = instance().detect(Command::from(*command)); found && found->confidence > 0)
        sink->claim(sink->ctx, found->confidence > 100 ? 100 : found->confidence,
                    c_text(found->reason, "the reason"));
    });
  }
  static int contribute(const px_contribute_input* input, const px_contribute_sink* sink) noexcept {
    return guarded(sink, [&] {
      Contribution out(*sink);
      instance().contribute(to_input(*input), out);
    });
  }
  static int carry_sign_in(const px_sign_in_input* input, const px_sign_in_sink* sink) noexcept {
    return guarded(sink, [&] {
      SignInInput in{static_cast<Platform>(input->platform), input->user_home ? input->user_home : "",
                     input->agent_home ? input->agent_home : ""};
      SignIn out(*sink);
      instance().carry_sign_in(in, out);
    });
  }
  static int parse_transcripts(const px_transcript_input* input, const px_transcript_sink* sink) noexcept {
    return guarded(sink, [&] {
      TranscriptInput in;
      for (size_t i = 0; i < input->path_count; ++i) in.paths.emplace_back(input->paths[i]);
      in.since_ms = input->since_ms;
      in.until_ms = input->until_ms;
      TranscriptOutput out(*sink);
      instance().parse_transcripts(in, out);
    });
  }
  static int transcript_roots(const char* run_home, const px_path_sink* sink) noexcept {
    return guarded(sink, [&] {
      for (const auto& root : roots({run_home ? run_home : "", ""}))
        sink->path(sink->ctx, c_text(root, "the transcript root"), "transcripts");
    });
  }
  static int transcript_roots_in(const px_transcript_roots_input* input, const px_path_sink* sink) noexcept {
    return guarded(sink, [&] {
      TranscriptRootsInput where;
      // Fields beyond what the host was built with are not read.
      if (input && input->struct_size >= sizeof(px_transcript_roots_input)) {
        where.run_home = input->run_home ? input->run_home : "";
        where.run_folder = input->run_folder ? input->run_folder : "";
      }
      for (const auto& root : roots(where))
        sink->path(sink->ctx, c_text(root, "the transcript root"), "transcripts");
    });
  }
  static int project_files(const px_path_sink* sink) noexcept {
    return guarded(sink, [&] {
      for (const auto& f : instance().project_files())
        sink->path(sink->ctx, c_text(f.path, "the project file"), c_text(f.reason, "the reason"));
    });
  }
  static int home_files(px_platform platform, const px_home_file_sink* sink) noexcept {
    return guarded(sink, [&] {
      for (const auto& f : instance().home_files(static_cast<Platform>(platform))) {
        std::vector<px_home_key> keys;
        for (const auto& k : f.keys)
          keys.push_back({c_text(k.pattern, "the key"), static_cast<px_home_kind>(k.kind),
                          c_text(k.reason, "the reason")});
        px_home_file c{};
        c.struct_size = sizeof c;
        c.path = c_text(f.path, "the home file");
        c.directory = f.directory ? 1 : 0;
        c.kind = static_cast<px_home_kind>(f.kind);
        c.format = static_cast<px_home_format>(f.format);
        c.keys = keys.data();
        c.key_count = keys.size();
        c.reason = c_text(f.reason, "the reason");
        sink->file(sink->ctx, &c);
      }
    });
  }
  static void attach_host(const px_host* host) noexcept {
    host_slot() = host && host->struct_size >= sizeof(px_host) ? host : nullptr;
  }
  // Why entry() returned NULL: the constructor's exception, kept for the host.
  static std::string& entry_error() {
    static std::string error;
    return error;
  }
  static const px_plugin* entry(const char* name, const char* version, const char* harness,
                                const char* description) noexcept {
    try {
      static const px_plugin descriptor = [&] {
        P& plugin = instance();  // constructed here, so a throwing constructor is caught
        px_plugin d{};
        d.struct_size = sizeof(px_plugin);
        d.abi_major = PX_PLUGIN_ABI_MAJOR;
        d.abi_minor = PX_PLUGIN_ABI_MINOR;
        d.name = name;
        d.version = version;
        d.description = description;
        d.harness = harness;
        d.detect = &Trampolines::detect;
        d.contribute = &Trampolines::contribute;
        d.carry_sign_in = plugin.has_sign_in() ? &Trampolines::carry_sign_in : nullptr;
        d.parse_transcripts = plugin.has_transcripts() ? &Trampolines::parse_transcripts : nullptr;
        d.transcript_roots = plugin.has_transcripts() ? &Trampolines::transcript_roots : nullptr;
        d.project_files = &Trampolines::project_files;
        d.home_files = &Trampolines::home_files;
        d.transcript_roots_in = plugin.has_transcripts() ? &Trampolines::transcript_roots_in : nullptr;
        d.attach_host = &Trampolines::attach_host;
        return d;
      }();
      return &descriptor;
    } catch (const std::exception& e) {
      try {
        entry_error() = std::string("its constructor threw: ") + e.what();
      } catch (...) {
      }
    } catch (...) {
      try {
        entry_error() = "its constructor threw an exception that is not a std::exception";
      } catch (...) {
      }
    }
    return nullptr;
  }
};

}  // namespace parallex::sdk::detail

// Registers `Class` (default-constructible, derived from parallex::sdk::Plugin)
// as this shared library's plugin. Use once per library.
#define PARALLEX_PLUGIN(Class, name, version, harness, description)                                 \
  extern "C" PX_PLUGIN_EXPORT const px_plugin* parallex_plugin_entry(void) {                        \
    return ::parallex::sdk::detail::Trampolines<Class>::entry(name, version, harness, description); \
  }                                                                                                 \
  extern "C" PX_PLUGIN_EXPORT const char* parallex_plugin_entry_error(void) {                       \
    return ::parallex::sdk::detail::Trampolines<Class>::entry_error().c_str();                      \
  }
