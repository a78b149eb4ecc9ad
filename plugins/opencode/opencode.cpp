// opencode (opencode-ai). It follows the XDG base dirs on Linux and macOS
// alike, and keeps its state in one "opencode" folder under each. It has no
// sandbox of its own (only its permission prompts), so nothing is turned off.
#include <parallex/plugin.hpp>
#include <parallex/support.hpp>
#include <parallex/transcripts.hpp>
#include <parallex_transcripts/opencode.hpp>

namespace {

using namespace parallex::sdk;
namespace tx = parallex::transcripts;

const ProgramSpec kProgram{{"opencode"}, {"opencode-ai"}};

const InstallSpec kInstall{{"opencode-ai"},
                           {"opencode-linux-", "opencode-darwin-"},
                           {".opencode/bin"},  // its curl installer
                           "opencode"};

class OpencodePlugin final
    : public ReadsTranscripts<&tx::parse_to_texts<&tx::opencode::parse>, &tx::opencode::roots> {
 public:
  std::optional<Detection> detect(const Command& command) override {
    return detect_program(command, kProgram);
  }

  void contribute(const ContributeInput& in, Contribution& out) override {
    out.state_dir("~/.config/opencode", "opencode's config (opencode.jsonc, agents, commands, plugins)");
    out.state_dir("~/.local/share/opencode",
                  "opencode's sessions (opencode.db), logs, worktree snapshots and sign-in (auth.json)");
    out.state_dir("~/.local/state/opencode", "opencode's locks and last-used model");
    out.state_dir("~/.cache/opencode", "opencode's own cache (models list, provider packages it installs)");
    out.read("~/.claude/CLAUDE.md", "opencode reads Claude Code's global instructions too");
    contribute_install_dirs(in, kInstall, out);

    out.keep_env("ANTHROPIC_*", "opencode's Anthropic provider key");
    out.keep_env("OPENAI_*", "opencode's OpenAI provider key");
    out.keep_env("GEMINI_*", "opencode's Gemini provider key");
    out.keep_env("GOOGLE_GENERATIVE_AI_API_KEY", "opencode's Google AI provider key");
    out.keep_env("OPENROUTER_API_KEY", "opencode's OpenRouter provider key");
    out.keep_env("OPENCODE_*", "opencode's own settings and API key");
    out.strip_env("OPENCODE_DB", "it would move opencode's database outside the seal");
    out.strip_env("OPENCODE_CONFIG_DIR", "it would add a config dir outside the seal");
    out.strip_env("OPENCODE_TEST_HOME", "it would move opencode's home outside the seal");
    out.strip_env("GOOGLE_APPLICATION_CREDENTIALS",
                  "it names a Google service-account key file; never passed into a run (use an API key)");
    out.set_env("OPENCODE_DISABLE_AUTOUPDATE", "1",
                "opencode's install is read only inside the seal, so its auto-updater could only fail");

    if (is_agent_run(in)) {
      const char* why = "points opencode at the agent's own home (opencode follows the XDG base dirs)";
      out.config_dir("XDG_CONFIG_HOME", "~/.config", why);
      out.config_dir("XDG_DATA_HOME", "~/.local/share", why);
      out.config_dir("XDG_STATE_HOME", "~/.local/state", why);
      out.config_dir("XDG_CACHE_HOME", "~/.cache", why);
    }

    // The provider keys opencode reads that go in Authorization or x-api-key,
    // brokered: placeholders in the run, each key sent to its provider's API
    // host only. (Google's keys travel in their own header or the query: a
    // profile can broker them with headers: [x-goog-api-key].)
    out.brokered_credential("ANTHROPIC_API_KEY", {"api.anthropic.com"}, "", "",
                            "opencode's Anthropic provider key");
    out.brokered_credential("OPENAI_API_KEY", {"api.openai.com"}, "", "", "opencode's OpenAI provider key");
    out.brokered_credential("OPENROUTER_API_KEY", {"openrouter.ai"}, "", "",
                            "opencode's OpenRouter provider key");
    out.brokered_credential("OPENCODE_API_KEY", {"opencode.ai"}, "", "", "opencode's own models (Zen)");

    out.suggested_host("opencode.ai",
                       "opencode's own models (Zen) and its model catalogue at models.opencode.ai");
    out.suggested_host("registry.npmjs.org", "opencode installs its provider packages and plugins from npm");
  }

  // What opencode loads from a project (checked against 1.18): its config
  // (MCP servers, commands, permission rules, plugins) and the folder of
  // agents, commands, plugins and tools, which are JavaScript it runs.
  std::vector<ProjectFile> project_files() override {
    return {
        {"opencode.json", "the project's opencode config: MCP servers, commands, permission rules, plugins"},
        {"opencode.jsonc", "the project's opencode config (the same, with comments)"},
        {".opencode", "agents, commands, skills, and plugins and tools (JavaScript opencode runs)"},
    };
  }

  // opencode's files in a home (checked against 1.18). Its config folder is
  // settings through and through: its config (MCP servers, commands,
  // permission rules, plugins), and plugins, tools, agents and commands
  // (JavaScript it runs), with the packages it installs for them. It writes
  // a .gitignore there itself. The provider packages it installs in its
  // cache are code it runs too; the rest of its data and state is its own.
  std::vector<HomeFile> home_files(Platform) override {
    const auto data = HomeKind::data;
    const std::vector<HomeKey> config_keys{{"$schema", data, "the schema opencode names in a new config"}};
    return {
        HomeFile::settings_dir("~/.config/opencode",
                               "opencode's config folder: its config, plugins, tools, agents and commands "
                               "(JavaScript it runs)"),
        HomeFile::settings_file("~/.config/opencode/opencode.json", HomeFormat::json, config_keys,
                                "opencode's config: MCP servers, commands, permission rules, plugins"),
        HomeFile::settings_file("~/.config/opencode/opencode.jsonc", HomeFormat::json, config_keys,
                                "opencode's config: MCP servers, commands, permission rules, plugins"),
        HomeFile::settings_file("~/.config/opencode/config.json", HomeFormat::json, config_keys,
                                "opencode's config (an older name)"),
        HomeFile::data_file("~/.config/opencode/.gitignore", HomeFormat::whole, {},
                            "the .gitignore opencode writes in its config folder"),
        HomeFile::data_dir("~/.local/share/opencode",
                           "opencode's sessions (opencode.db), logs, snapshots and sign-in (auth.json)"),
        // A git folder per project that opencode runs git on (`--git-dir`) at every step of every
        // session there, unsealed outside a run: its config names commands git runs
        // (core.fsmonitor: a run's ran at the user's next opencode there). Each run's own, over
        // the user's, dropped when it ends: what opencode keeps there is for undoing steps within
        // a session, and a later session makes what it lacks again.
        HomeFile::scratch_dir("~/.local/share/opencode/snapshot",
                              "opencode's snapshot repositories (git, one per project), for undoing a "
                              "session's steps: their config names commands git runs (core.fsmonitor, "
                              "filters)"),
        // The repositories the user's config names as references, cloned; opencode refreshes each
        // at every start (fetch, checkout, `git reset --hard`), unsealed: a core.fsmonitor or a
        // hook a run wrote into a clone ran there. Each run's own, dropped when it ends: opencode
        // clones again what it lacks.
        HomeFile::scratch_dir("~/.local/share/opencode/repos",
                              "the repositories opencode clones as references and refreshes with git "
                              "at every start: their config and hooks name commands git runs"),
        HomeFile::data_dir("~/.local/state/opencode", "opencode's locks and last-used model"),
        HomeFile::data_dir("~/.cache/opencode", "opencode's own cache (models list)"),
        // The models list names, per provider, the npm package opencode installs and loads for it:
        // one a run rewrote made the user's next opencode install and run the run's package (or a
        // `file:` folder). Each run's own: opencode fetches it again when it is older than 5 min.
        HomeFile::scratch_file(
            "~/.cache/opencode/models.json",
            "opencode's models list, which names the npm package it installs and loads for "
            "each provider"),
        // It runs what it downloads there: ripgrep when none is on PATH (a run's `rg` there ran at
        // the user's next opencode search), language servers.
        HomeFile::settings_dir("~/.cache/opencode/bin",
                               "the programs opencode downloads and runs: ripgrep when none is on PATH, "
                               "language servers (gopls, clangd, the ESLint server)"),
        HomeFile::settings_dir("~/.cache/opencode/node_modules",
                               "the provider packages and plugins opencode installs and runs"),
        HomeFile::settings_file("~/.cache/opencode/package.json", HomeFormat::whole, {},
                                "the packages opencode installs in its cache and runs"),
    };
  }

  bool has_sign_in() const override { return true; }
  void carry_sign_in(const SignInInput& in, SignIn& out) override {
    carry_file(in, out, ".local/share/opencode/auth.json", "opencode sign-in",
               "Sign the agent in once inside a run with `opencode auth login`, or give it a provider "
               "API key.");
  }
};

}  // namespace

PARALLEX_PLUGIN(OpencodePlugin, "opencode", "1.0.0", "opencode",
                "Runs the opencode CLI (opencode, opencode-ai)")
