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
// catches exceptions, so a throwing plugin becomes an error message, not a crash.
#pragma once

#include <parallex/plugin_abi.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parallex::sdk {

// Capitalised: `linux` is a predefined macro in GNU C++ modes.
enum class Platform { Linux = PX_PLATFORM_LINUX, MacOS = PX_PLATFORM_MACOS };

// ---- inputs -----------------------------------------------------------------

struct Command {
  std::vector<std::string> argv;
  std::string resolved_path;  // argv[0] found on PATH, or empty
  std::string resolved_real;  // the same with symlinks resolved, or empty

  static Command from(const px_command& c) {
    Command out;
    for (size_t i = 0; i < c.argc; ++i) out.argv.emplace_back(c.argv[i] ? c.argv[i] : "");
    if (c.resolved_path) out.resolved_path = c.resolved_path;
    if (c.resolved_real) out.resolved_real = c.resolved_real;
    return out;
  }
};

struct Detection {
  int confidence = 0;  // 0..100
  std::string reason;
};

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
  std::vector<std::string> paths;
  std::int64_t since_ms = 0;
  std::int64_t until_ms = 0;
};

// ---- outputs: thin wrappers over the host's sinks ------------------------------

class Contribution {
 public:
  explicit Contribution(const px_contribute_sink& sink) : sink_(sink) {}
  void read(const std::string& path, const std::string& reason) {
    sink_.path(sink_.ctx, PX_ACCESS_READ, path.c_str(), reason.c_str());
  }
  void read_write(const std::string& path, const std::string& reason) {
    sink_.path(sink_.ctx, PX_ACCESS_READ_WRITE, path.c_str(), reason.c_str());
  }
  // A directory of the harness's own state that the host creates when missing (ABI 1.1).
  void state_dir(const std::string& path, const std::string& reason) {
    sink_.path(sink_.ctx, PX_ACCESS_STATE_DIR, path.c_str(), reason.c_str());
  }
  void executable_dir(const std::string& path, const std::string& reason) {
    sink_.executable_dir(sink_.ctx, path.c_str(), reason.c_str());
  }
  void keep_env(const std::string& pattern, const std::string& reason) {
    sink_.env(sink_.ctx, PX_ENV_KEEP, pattern.c_str(), nullptr, reason.c_str());
  }
  void strip_env(const std::string& pattern, const std::string& reason) {
    sink_.env(sink_.ctx, PX_ENV_STRIP, pattern.c_str(), nullptr, reason.c_str());
  }
  void set_env(const std::string& name, const std::string& value, const std::string& reason) {
    sink_.env(sink_.ctx, PX_ENV_SET, name.c_str(), value.c_str(), reason.c_str());
  }
  void config_dir(const std::string& variable, const std::string& path, const std::string& reason) {
    sink_.config_dir(sink_.ctx, variable.c_str(), path.c_str(), reason.c_str());
  }
  void nested_sandbox_env(const std::string& name, const std::string& value, const std::string& reason) {
    sink_.nested_sandbox(sink_.ctx, PX_NESTED_ENV, name.c_str(), value.c_str(), reason.c_str());
  }
  void nested_sandbox_arg(const std::string& argument, const std::string& reason) {
    sink_.nested_sandbox(sink_.ctx, PX_NESTED_ARG, "", argument.c_str(), reason.c_str());
  }
  void suggested_host(const std::string& host, const std::string& reason) {
    sink_.suggested_host(sink_.ctx, host.c_str(), reason.c_str());
  }
  // A provider key the host brokers (ABI 1.2): the run gets a placeholder in
  // `variable`, and the run's proxy sends the key to `hosts` only (or to the
  // host of the https:// URL in `base_url_variable` when the user set one).
  void brokered_credential(const std::string& variable, const std::vector<std::string>& hosts,
                           const std::string& base_url_variable, const std::string& shape,
                           const std::string& reason) {
    std::vector<const char*> names;
    for (const auto& h : hosts) names.push_back(h.c_str());
    px_credential c{};
    c.struct_size = sizeof c;
    c.variable = variable.c_str();
    c.hosts = names.data();
    c.host_count = names.size();
    c.base_url_variable = base_url_variable.empty() ? nullptr : base_url_variable.c_str();
    c.shape = shape.empty() ? nullptr : shape.c_str();
    c.reason = reason.c_str();
    // A host that loads a 1.2 plugin has this callback; one that left it
    // unset brokers nothing, and the plugin must not crash for it.
    if (sink_.credential) sink_.credential(sink_.ctx, &c);
  }

 private:
  const px_contribute_sink& sink_;
};

class SignIn {
 public:
  explicit SignIn(const px_sign_in_sink& sink) : sink_(sink) {}
  void copy_file(const std::string& from, const std::string& to, const std::string& what) {
    sink_.copy_file(sink_.ctx, from.c_str(), to.c_str(), what.c_str());
  }
  void instruction(const std::string& text) { sink_.instruction(sink_.ctx, text.c_str()); }

 private:
  const px_sign_in_sink& sink_;
};

class TranscriptOutput {
 public:
  explicit TranscriptOutput(const px_transcript_sink& sink) : sink_(sink) {}
  // One session as a JSON object (see plugin_abi.h for its fields).
  void session(std::string_view json) { sink_.session(sink_.ctx, json.data(), json.size()); }
  void warning(const std::string& path, const std::string& message) {
    sink_.warning(sink_.ctx, path.c_str(), message.c_str());
  }

 private:
  const px_transcript_sink& sink_;
};

// ---- a harness's files in a home (ABI 1.4) ------------------------------------------

enum class HomeKind { data = PX_HOME_DATA, settings = PX_HOME_SETTINGS };
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
  // Override all three to report what the harness did.
  virtual bool has_transcripts() const { return false; }
  virtual void parse_transcripts(const TranscriptInput&, TranscriptOutput&) {}
  virtual std::vector<std::string> transcript_roots(const std::string& /*run_home*/) { return {}; }
};

// ---- detection helpers shared by plugins ----------------------------------------

struct ProgramSpec {
  std::vector<std::string> names;     // executable names, e.g. {"claude"}
  std::vector<std::string> packages;  // npm packages, e.g. {"@anthropic-ai/claude-code"}
};

inline std::string_view basename_of(std::string_view path) {
  auto slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// "@openai/codex@0.1" -> "@openai/codex"; "opencode-ai@latest" -> "opencode-ai".
inline std::string_view strip_package_version(std::string_view spec) {
  auto at = spec.find('@', spec.size() > 0 && spec[0] == '@' ? 1 : 0);
  return at == std::string_view::npos ? spec : spec.substr(0, at);
}

inline bool path_has_package(std::string_view path, const std::string& package) {
  std::string needle = "/" + package + "/";
  return std::string(path).find(needle) != std::string::npos;
}

// Recognises the program itself, a symlink into its npm package, a node/bun/deno
// wrapper running its script, and npx/bunx/pnpx/`npm exec`/`pnpm dlx`/`yarn dlx`.
// `env VAR=x` and a leading `--` are looked through.
inline std::optional<Detection> detect_program(const Command& command, const ProgramSpec& spec) {
  const auto& argv = command.argv;
  std::size_t i = 0;
  auto name_is = [&](std::string_view n) {
    for (const auto& want : spec.names)
      if (n == want) return true;
    return false;
  };
  auto package_is = [&](std::string_view p) {
    for (const auto& want : spec.packages)
      if (strip_package_version(p) == want) return true;
    return false;
  };
  // Look through `env [-i] [VAR=value]...`.
  if (i < argv.size() && basename_of(argv[i]) == "env") {
    ++i;
    while (i < argv.size() && (argv[i].rfind("-", 0) == 0 || argv[i].find('=') != std::string::npos)) ++i;
  }
  if (i >= argv.size()) return std::nullopt;
  const std::string_view program = basename_of(argv[i]);

  for (const auto& package : spec.packages) {
    if (i == 0 && path_has_package(command.resolved_real, package))
      return Detection{95, "`" + argv[i] + "` resolves to " + command.resolved_real + ", inside npm package " + package};
  }
  if (name_is(program)) return Detection{90, "the program is `" + std::string(program) + "`"};

  auto first_operand = [&](std::size_t from) -> std::optional<std::size_t> {
    for (std::size_t j = from; j < argv.size(); ++j) {
      if (argv[j] == "--") return j + 1 < argv.size() ? std::optional(j + 1) : std::nullopt;
      if (argv[j].rfind("-", 0) != 0) return j;
      // Options that take a separate value.
      if (argv[j] == "-p" || argv[j] == "--package" || argv[j] == "-r" || argv[j] == "--require") ++j;
    }
    return std::nullopt;
  };

  if (program == "node" || program == "nodejs" || program == "bun" || program == "deno") {
    std::size_t from = i + 1;
    if (program == "deno" && from < argv.size() && argv[from] == "run") ++from;
    if (program == "bun" && from < argv.size() && (argv[from] == "run" || argv[from] == "x")) ++from;
    if (auto script = first_operand(from)) {
      const std::string& s = argv[*script];
      for (const auto& package : spec.packages)
        if (path_has_package(s, package) || package_is(s))
          return Detection{90, "`" + std::string(program) + "` runs " + s + " from npm package " + package};
      if (name_is(basename_of(s)))
        return Detection{80, "`" + std::string(program) + "` runs a script named `" + std::string(basename_of(s)) + "`"};
    }
    return std::nullopt;
  }

  std::size_t from = 0;
  if (program == "npx" || program == "bunx" || program == "pnpx") {
    from = i + 1;
  } else if ((program == "npm" || program == "pnpm" || program == "yarn") && i + 1 < argv.size() &&
             (argv[i + 1] == "exec" || argv[i + 1] == "dlx" || argv[i + 1] == "x")) {
    from = i + 2;
  } else {
    return std::nullopt;
  }
  if (auto operand = first_operand(from)) {
    const std::string& s = argv[*operand];
    if (package_is(s) || name_is(s))
      return Detection{85, "`" + std::string(program) + "` runs package `" + s + "`"};
  }
  return std::nullopt;
}

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
struct Trampolines {
  static P& instance() {
    static P plugin;
    return plugin;
  }
  static int detect(const px_command* command, const px_detect_sink* sink) noexcept {
    return guarded(sink, [&] {
      if (auto found = instance().detect(Command::from(*command)); found && found->confidence > 0)
        sink->claim(sink->ctx, found->confidence > 100 ? 100 : found->confidence, found->reason.c_str());
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
      for (const auto& root : instance().transcript_roots(run_home ? run_home : ""))
        sink->path(sink->ctx, root.c_str(), "transcripts");
    });
  }
  static int project_files(const px_path_sink* sink) noexcept {
    return guarded(sink, [&] {
      for (const auto& f : instance().project_files()) sink->path(sink->ctx, f.path.c_str(), f.reason.c_str());
    });
  }
  static int home_files(px_platform platform, const px_home_file_sink* sink) noexcept {
    return guarded(sink, [&] {
      for (const auto& f : instance().home_files(static_cast<Platform>(platform))) {
        std::vector<px_home_key> keys;
        for (const auto& k : f.keys)
          keys.push_back({k.pattern.c_str(), static_cast<px_home_kind>(k.kind), k.reason.c_str()});
        px_home_file c{};
        c.struct_size = sizeof c;
        c.path = f.path.c_str();
        c.directory = f.directory ? 1 : 0;
        c.kind = static_cast<px_home_kind>(f.kind);
        c.format = static_cast<px_home_format>(f.format);
        c.keys = keys.data();
        c.key_count = keys.size();
        c.reason = f.reason.c_str();
        sink->file(sink->ctx, &c);
      }
    });
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
        return d;
      }();
      return &descriptor;
    } catch (...) {
      return nullptr;
    }
  }
};

}  // namespace parallex::sdk::detail

// Registers `Class` (default-constructible, derived from parallex::sdk::Plugin)
// as this shared library's plugin. Use once per library.
#define PARALLEX_PLUGIN(Class, name, version, harness, description)                                    \
  extern "C" PX_PLUGIN_EXPORT const px_plugin* parallex_plugin_entry(void) {                           \
    return ::parallex::sdk::detail::Trampolines<Class>::entry(name, version, harness, description);     \
  }
