// OpenAI's Codex CLI (@openai/codex). Everything it keeps lives in CODEX_HOME
// (~/.codex): sessions, SQLite state, its sign-in and the helper links it makes
// in tmp/ on every start, so the whole dir is its own state.
#include <parallex/plugin.hpp>
#include <parallex/support.hpp>
#include <parallex/transcripts.hpp>
#include <parallex_transcripts/codex.hpp>

namespace {

using namespace parallex::sdk;
namespace tx = parallex::transcripts;

const ProgramSpec kProgram{{"codex"}, {"@openai/codex"}};

const InstallSpec kInstall{{"@openai/codex"}, {"@openai/codex-linux-", "@openai/codex-darwin-"}, {}, "Codex"};

// Codex's own sandbox (bubblewrap + seccomp on Linux, sandbox-exec on macOS)
// cannot start inside ours. `-c` overrides beat config.toml and profiles, and a
// root `-c` reaches every subcommand (exec, review, resume). Codex reads no
// environment variable for its sandbox mode.
constexpr const char* kSandboxOff = R"(--config=sandbox_mode="danger-full-access")";

class CodexPlugin final : public ReadsTranscripts<&tx::parse_to_texts<&tx::codex::parse>, &tx::codex::roots> {
 public:
  std::optional<Detection> detect(const Command& command) override {
    return detect_program(command, kProgram);
  }

  void contribute(const ContributeInput& in, Contribution& out) override {
    out.state_dir("~/.codex",
                  "Codex's own home: sessions, SQLite state, installation id, shell snapshots, the helper "
                  "links it makes in tmp/ on every start, and its sign-in (auth.json)");
    contribute_install_dirs(in, kInstall, out);

    out.keep_env("OPENAI_*", "Codex's OpenAI API key and organisation settings");
    out.keep_env("CODEX_*", "Codex's own settings and API key (CODEX_API_KEY)");
    out.keep_env("AZURE_OPENAI_API_KEY", "Codex's key for an Azure OpenAI provider");
    out.strip_env("CODEX_HOME", "the host points CODEX_HOME at the run's home, not at yours");
    out.strip_env("CODEX_SQLITE_HOME", "it would move Codex's SQLite state outside the seal");
    out.strip_env("CODEX_GITHUB_PERSONAL_ACCESS_TOKEN",
                  "a GitHub token, stripped like GITHUB_TOKEN: the agent's own token reaches it another way");
    if (is_agent_run(in))
      out.config_dir("CODEX_HOME", "~/.codex",
                     "points Codex at the agent's own config, sign-in and sessions");

    // Argument insertion reaches Codex only when argv[0] is Codex.
    if (!in.command || detect(head_of(*in.command)))
      out.nested_sandbox_arg(kSandboxOff,
                             "Codex would run each command in its own sandbox (bubblewrap on Linux, "
                             "sandbox-exec on macOS), which cannot start inside this seal; the seal confines "
                             "those commands instead (approvals are unchanged)");

    // The keys Codex reads, brokered: placeholders in the run, the key sent to
    // OpenAI's API only (or to the host of an https:// OPENAI_BASE_URL).
    const std::vector<std::string> api{"api.openai.com"};
    out.brokered_credential("OPENAI_API_KEY", api, "OPENAI_BASE_URL", "", "Codex's OpenAI API key");
    out.brokered_credential("CODEX_API_KEY", api, "OPENAI_BASE_URL", "", "Codex's own API key variable");

    out.suggested_host("api.openai.com", "Codex's model API when it signs in with an API key");
    out.suggested_host("chatgpt.com", "Codex's model API when it signs in with ChatGPT");
    out.suggested_host("auth.openai.com", "refreshes a ChatGPT sign-in");
  }

  // What Codex loads from a repository it trusts (checked against 0.171): a
  // project config with hooks, MCP servers and sandbox settings, its agents,
  // hooks and skills, and the repository's skills and plugin marketplaces.
  // AGENTS.md and AGENTS.override.md are instructions and name no command.
  std::vector<ProjectFile> project_files() override {
    return {
        {".codex",
         "the project's Codex config (hooks, MCP servers, sandbox and approval settings), agents, hooks "
         "and skills"},
        {".agents", "skills and plugin marketplaces Codex loads from the repository"},
    };
  }

  // Codex's files in its home (checked against 0.171). ~/.codex is its own
  // data: sessions, its SQLite databases (shared with any Codex running at
  // the same time, so the folder stays the real one), logs, history and its
  // sign-in. What in it runs or approves commands: config.toml (notify, MCP
  // servers, hooks, model providers, approval and sandbox settings) but for
  // the keys Codex writes itself, hooks.json, the approved-command rules,
  // skills and plugins, and the instructions it follows in every session.
  std::vector<HomeFile> home_files(Platform) override {
    const auto data = HomeKind::data;
    return {
        HomeFile::data_dir(
            "~/.codex",
            "Codex's own home: sessions, SQLite state, logs, history and its sign-in (auth.json)"),
        HomeFile::settings_file(
            "~/.codex/config.toml", HomeFormat::toml,
            {
                {"projects.{run_folder}.trust_level", data, "you trusted the run's folder in the run"},
                {"notice", data, "notices you dismissed"},
                {"model", data, "the model you chose"},
                {"model_reasoning_effort", data, "the reasoning effort you chose"},
            },
            "Codex's config: notify, MCP servers, hooks, model providers, approval and sandbox settings, and "
            "the folders it trusts"),
        HomeFile::settings_file("~/.codex/hooks.json", HomeFormat::json, {}, "commands Codex's hooks run"),
        HomeFile::settings_dir("~/.codex/rules", "commands you approved for Codex to run without asking"),
        HomeFile::settings_dir("~/.codex/skills", "skills and the scripts they run"),
        // Written by Codex itself at each start (the marker says which release's), run when a
        // session follows their instructions: the run's own, as the release it runs writes them.
        HomeFile::scratch_dir("~/.codex/skills/.system",
                              "the skills Codex installs itself at each start, and the scripts they run"),
        HomeFile::settings_dir("~/.codex/plugins", "Codex plugins: their MCP servers, hooks and skills"),
        HomeFile::settings_file("~/.codex/AGENTS.md", HomeFormat::whole, {},
                                "instructions Codex follows in every session"),
        HomeFile::settings_dir("~/.codex/prompts", "custom prompts Codex offers in every session"),
        // What a live Codex session beside the run (unsealed) writes and then runs: its shell
        // snapshot, sourced before each command (a line a run added to one ran in it); the links
        // to itself it puts first on its commands' PATH (a `git` a run added there would be
        // theirs); the git clone it syncs curated plugins from (git runs what its config says).
        // Each run's own, dropped when it ends: a session needs none of them after it.
        HomeFile::scratch_dir("~/.codex/shell_snapshots",
                              "the shell set-up each Codex session runs before its commands"),
        HomeFile::scratch_dir("~/.codex/tmp",
                              "the links Codex puts first on its commands' PATH (tmp/arg0-linux), made at "
                              "each start"),
        HomeFile::scratch_dir("~/.codex/.tmp",
                              "Codex's staging folder and the git clone it syncs curated plugins from"),
        HomeFile::settings_file("~/.codex/managed_config.toml", HomeFormat::whole, {},
                                "managed configuration that overrides config.toml"),
        HomeFile::settings_file("~/.codex/requirements.toml", HomeFormat::whole, {},
                                "requirements that constrain Codex's settings"),
    };
  }

  bool has_sign_in() const override { return true; }
  void carry_sign_in(const SignInInput& in, SignIn& out) override {
    carry_file(in, out, ".codex/auth.json", "Codex sign-in",
               "Sign the agent in once inside a run with `codex login --device-auth` (it shows a link and "
               "a code), or give it OPENAI_API_KEY.");
  }
};

}  // namespace

PARALLEX_PLUGIN(CodexPlugin, "codex", "1.0.0", "Codex", "Runs OpenAI's Codex CLI (codex, @openai/codex)")
