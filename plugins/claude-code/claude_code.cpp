// Claude Code (@anthropic-ai/claude-code). What it touches was observed on
// Linux with strace (docs/plugins.md, docs/real-clients.md); the
// macOS carve-outs follow the Seatbelt workspace policy it is known to run under.
#include <parallex/plugin.hpp>
#include <parallex/support.hpp>
#include <parallex/transcripts.hpp>
#include <parallex_transcripts/claude_code.hpp>

namespace {

using namespace parallex::sdk;
namespace tx = parallex::transcripts;

const ProgramSpec kProgram{{"claude"}, {"@anthropic-ai/claude-code"}};
// Claude Code's native installer: ~/.local/bin/claude -> ~/.local/share/claude/versions/<version>.
constexpr std::string_view kNativeVersions = "/.local/share/claude/versions/";

const InstallSpec kInstall{{"@anthropic-ai/claude-code"},
                           {"@anthropic-ai/claude-code-linux-", "@anthropic-ai/claude-code-darwin-"},
                           {".local/share/claude/versions"},
                           "Claude Code"};

// Inside our seal a nested bubblewrap or sandbox-exec cannot start, so Claude
// Code's own /sandbox must stay off. Settings given with --settings outrank the
// user's and the project's settings files (only managed policy outranks them),
// and Claude Code reads no environment variable that turns the sandbox off.
constexpr const char* kSandboxOff = R"(--settings={"sandbox":{"enabled":false}})";

class ClaudeCodePlugin final
    : public ReadsTranscripts<&tx::parse_to_texts<&tx::claude_code::parse>, &tx::claude_code::roots> {
 public:
  std::optional<Detection> detect(const Command& command) override {
    if (auto found = detect_program(command, kProgram)) return found;
    if (!command.argv.empty() && !is_launcher(basename_of(command.argv[0])) &&
        command.resolved_real.find(kNativeVersions) != std::string::npos)
      return Detection{90, "`" + command.argv[0] + "` resolves to " + command.resolved_real +
                               ", a version installed by Claude Code's native installer"};
    return std::nullopt;
  }

  void contribute(const ContributeInput& in, Contribution& out) override {
    contribute_state(in, out);
    contribute_install_dirs(in, kInstall, out);
    contribute_environment(in, out);

    // Argument insertion reaches Claude Code only when argv[0] is Claude Code.
    if (!in.command || detect(head_of(*in.command)))
      out.nested_sandbox_arg(
          kSandboxOff,
          "Claude Code's /sandbox would start bubblewrap (Linux) or sandbox-exec (macOS) "
          "inside this seal, where neither can run; the seal already confines its commands, "
          "so its own sandbox is turned off for this run (--settings outranks your settings "
          "files)");

    // As root, Claude Code refuses --dangerously-skip-permissions unless it is
    // told it runs in a sandbox. Inside the seal it does (the host sets this
    // only for sealed runs, as every nested-sandbox switch).
    out.nested_sandbox_env("IS_SANDBOX", "1",
                           "Claude Code runs sealed: as root it accepts --dangerously-skip-permissions only "
                           "when IS_SANDBOX=1 says it is inside a sandbox");

    // The keys Claude Code reads, brokered: the run holds placeholders of the
    // same shape, the run's proxy sends each key to Anthropic's API only (or
    // to the host of an https:// ANTHROPIC_BASE_URL the user set).
    const std::vector<std::string> api{"api.anthropic.com"};
    out.brokered_credential("ANTHROPIC_API_KEY", api, "ANTHROPIC_BASE_URL", "",
                            "Claude Code's API key (x-api-key)");
    out.brokered_credential("ANTHROPIC_AUTH_TOKEN", api, "ANTHROPIC_BASE_URL", "",
                            "a bearer token Claude Code sends instead of an API key");
    out.brokered_credential("CLAUDE_CODE_OAUTH_TOKEN", api, "ANTHROPIC_BASE_URL", "",
                            "a long-lived sign-in token (claude setup-token)");

    out.suggested_host("api.anthropic.com", "Claude Code's model API; it is the only host Claude Code needs");
    out.suggested_host("platform.claude.com",
                       "refreshes a Claude subscription sign-in (OAuth token endpoint)");
  }

  // What Claude Code loads from a project when it starts there (its own list
  // of "files that control the agent's behavior", checked against 2.1): each
  // can make the next session run a program or approve one. CLAUDE.md and
  // .claude/rules are instructions, not programs, and runs edit them as
  // ordinary work, so they stay writable.
  std::vector<ProjectFile> project_files() override {
    return {
        {".claude/settings.json",
         "project settings: hooks, permission rules that approve commands, MCP servers, statusLine and "
         "apiKeyHelper commands"},
        {".claude/settings.local.json", "local project settings: the same keys (approvals are saved here)"},
        {".mcp.json", "the MCP servers Claude Code starts in this project"},
        {".claude/hooks", "scripts its hooks run"},
        {".claude/commands", "slash commands, which may run shell commands"},
        {".claude/agents", "subagents and the tools they may use"},
        {".claude/skills", "skills and the scripts they run"},
        {".claude/workflows", "workflow scripts it runs"},
        {".claude/routines", "routines it runs"},
        {".claude/scheduled_tasks.json", "prompts it runs on a schedule"},
        {".claude/loop.md", "the prompt /loop runs"},
    };
  }

  // Claude Code's files in a home (checked against 2.1). ~/.claude.json is
  // mostly its own state (first start, onboarding, the API-key answer, usage
  // counters, per-project history and trust); a few of its keys start
  // programs or approve them. Its settings.json is settings through and
  // through (hooks, permissions, env, statusLine, apiKeyHelper). Its
  // folders of agents, commands, skills, hooks and plugins are read-only in
  // a run (contribute_state), named here so an agent's home is checked for
  // them too.
  std::vector<HomeFile> home_files(Platform) override {
    const auto settings = HomeKind::settings;
    const auto data = HomeKind::data;
    const std::vector<HomeKey> state_keys{
        {"mcpServers", settings, "an MCP server Claude Code starts in every project"},
        {"projects.*.mcpServers", settings, "an MCP server Claude Code starts in that project"},
        {"projects.*.enabledMcpjsonServers", settings,
         "approves a project's .mcp.json servers, which then start without asking"},
        {"projects.*.disabledMcpjsonServers", settings,
         "the project's .mcp.json servers you turned down (a run removing one approves it)"},
        {"projects.*.enableAllProjectMcpServers", settings,
         "approves every MCP server a project's .mcp.json names"},
        {"projects.*.allowedTools", settings, "tools and commands Claude Code runs without asking"},
        {"projects.{run_folder}.hasTrustDialogAccepted", data, "you trusted the run's folder in the run"},
        {"projects.*.hasTrustDialogAccepted", settings,
         "trusts another folder: its hooks and settings would run there without asking"},
    };
    const std::string state_reason =
        "Claude Code's own state (first start, onboarding, the API-key answer, history and trust per "
        "project); "
        "its MCP servers and approvals run commands";
    return {
        HomeFile::data_file("~/.claude.json", HomeFormat::json, state_keys, state_reason),
        // Where it lives with CLAUDE_CONFIG_DIR=~/.claude (an agent's home).
        HomeFile::data_file("~/.claude/.claude.json", HomeFormat::json, state_keys, state_reason),
        HomeFile::settings_file("~/.claude/settings.json", HomeFormat::json, {},
                                "Claude Code's user settings: hooks, permission rules, env, statusLine and "
                                "apiKeyHelper commands"),
        HomeFile::data_file("~/.claude/.credentials.json", HomeFormat::whole, {},
                            "Claude Code's sign-in, refreshed when its token renews"),
        HomeFile::data_dir("~/.claude/projects", "Claude Code's session transcripts"),
        HomeFile::data_dir("~/.claude/todos", "Claude Code's per-session to-do lists"),
        HomeFile::data_dir("~/.claude/file-history", "Claude Code's checkpoints of files it edits"),
        HomeFile::settings_dir("~/.claude/hooks", "scripts Claude Code's hooks run"),
        HomeFile::settings_dir("~/.claude/commands", "slash commands, which may run shell commands"),
        HomeFile::settings_dir("~/.claude/agents", "subagents and the tools they may use"),
        HomeFile::settings_dir("~/.claude/skills", "skills and the scripts they run"),
        HomeFile::settings_dir("~/.claude/plugins",
                               "Claude Code plugins: their hooks, commands and MCP servers"),
        // Written by every session, and run by it: before each Bash command Claude Code runs the
        // scripts in session-env/<session id>/ (its SessionStart hooks' environment) and its
        // shell snapshot. One planted for the run's session ran unsealed at the user's `claude -c`
        // there. Each run's own, dropped when it ends (a session that goes on makes them again).
        HomeFile::scratch_dir("~/.claude/session-env",
                              "the scripts Claude Code runs before each command of a session (its "
                              "SessionStart hooks' environment), kept per session"),
        HomeFile::scratch_dir("~/.claude/shell-snapshots",
                              "the shell set-up Claude Code runs before each command of a session"),
    };
  }

  bool has_sign_in() const override { return true; }
  void carry_sign_in(const SignInInput& in, SignIn& out) override {
    if (in.platform == Platform::MacOS) {
      out.instruction(
          "Claude Code keeps its macOS sign-in in your login keychain (item \"Claude Code-credentials\"), "
          "which a sealed run cannot read. Either sign the agent in once inside a sealed run with /login "
          "(it shows a link and a code), or copy your sign-in into the agent's home yourself: "
          "security find-generic-password -s \"Claude Code-credentials\" -w > \"" +
          without_trailing_slashes(in.agent_home) + "/.claude/.credentials.json\" && chmod 600 \"" +
          without_trailing_slashes(in.agent_home) + "/.claude/.credentials.json\"");
      return;
    }
    carry_file(in, out, ".claude/.credentials.json", "Claude Code sign-in",
               "Sign the agent in once inside a run with /login (it shows a link and a code).");
  }

 private:
  static void contribute_state(const ContributeInput& in, Contribution& out) {
    out.read_write("~/.claude.json",
                   "Claude Code's own state file (first start, machine id, trusted folders, MCP servers); "
                   "rewritten on every start");
    out.read_write("~/.claude.json.lock", "the lock Claude Code holds while it rewrites ~/.claude.json");
    // Writable through a copy of the run's own (home_files: hooks in it run
    // commands, so a change is held back until you apply it).
    out.read_write("~/.claude/settings.json", "Claude Code's user settings (hooks, permissions, env)");
    out.read_write("~/.claude/.credentials.json",
                   "Claude Code's sign-in (refreshed in place when its token renews)");
    struct Dir {
      const char* path;
      const char* reason;
    };
    static constexpr Dir kWritable[] = {
        {"~/.claude/projects", "Claude Code's session transcripts, one folder per project"},
        {"~/.claude/sessions", "Claude Code's registry of live sessions (one file per running process)"},
        // Its own writes stay in the run (home_files: each run has its own).
        {"~/.claude/session-env", "the scripts Claude Code runs before each command of a session"},
        {"~/.claude/todos", "Claude Code's per-session to-do lists"},
        {"~/.claude/shell-snapshots", "the shell set-up Claude Code runs before each command of a session"},
        {"~/.claude/file-history", "Claude Code's checkpoints of files it edits (for /rewind)"},
        {"~/.claude/plans", "plans written in Claude Code's plan mode"},
        {"~/.claude/paste-cache", "large pastes Claude Code keeps out of the transcript"},
        {"~/.claude/image-cache", "images attached to a Claude Code session"},
        {"~/.claude/statsig", "Claude Code's cached feature flags"},
        {"~/.claude/telemetry", "Claude Code's queue of usage events not yet sent"},
        {"~/.claude/backups", "Claude Code's backups of ~/.claude.json"},
        {"~/.claude/debug", "Claude Code's debug logs"},
        {"~/.claude/cache", "Claude Code's own cache (release notes)"},
    };
    for (const auto& d : kWritable) out.state_dir(d.path, d.reason);
    static constexpr Dir kReadable[] = {
        {"~/.claude/CLAUDE.md", "your instructions for Claude Code in every project"},
        {"~/.claude/agents", "your Claude Code subagents"},
        {"~/.claude/commands", "your Claude Code slash commands"},
        {"~/.claude/skills", "your Claude Code skills"},
        {"~/.claude/rules", "your Claude Code rules"},
        {"~/.claude/output-styles", "your Claude Code output styles"},
        {"~/.claude/plugins", "the Claude Code plugins you installed (read only: they hold code and hooks)"},
        {"~/.claude/ide", "lock files of IDEs Claude Code can connect to"},
        {"~/.config/anthropic", "Anthropic's shared client configuration, which Claude Code reads"},
    };
    for (const auto& d : kReadable) out.read(d.path, d.reason);

    // ${CLAUDE_CODE_TMPDIR:-${TMPDIR:-/tmp}}/claude-<uid>: made before every
    // Bash tool call; without it no command runs. On Linux the seal's /tmp is
    // the run's private temp dir (already writable); macOS needs the carve-in.
    if (in.platform == Platform::MacOS)
      out.read_write("/private/tmp/claude-" + uid_string(),
                     "Claude Code's per-user scratch dir, created before every Bash tool call; without it no "
                     "command runs");
  }

  static void contribute_environment(const ContributeInput& in, Contribution& out) {
    out.keep_env("ANTHROPIC_*", "Claude Code's API key, base URL and model settings");
    out.keep_env("CLAUDE_CODE_*",
                 "Claude Code's own settings (Bedrock/Vertex switches, OAuth token, limits)");
    out.strip_env("CLAUDE_CODE_TMPDIR", "it would move Claude Code's scratch dir out of the run's temp dir");
    out.strip_env("CLAUDE_CODE_DEBUG_LOGS_DIR", "it would move Claude Code's logs outside the seal");
    out.strip_env("CLAUDE_CODE_PLUGIN_CACHE_DIR",
                  "it would move Claude Code's plugin cache outside the seal");
    out.strip_env("GOOGLE_APPLICATION_CREDENTIALS",
                  "it names a Google service-account key file; never passed into a run (use an API key)");
    out.set_env("DISABLE_AUTOUPDATER", "1",
                "Claude Code's install is read only inside the seal, so its auto-updater could only fail");
    if (is_agent_run(in))
      out.config_dir("CLAUDE_CONFIG_DIR", "~/.claude",
                     "points Claude Code at the agent's own config, sign-in and history "
                     "(its ~/.claude.json moves into ~/.claude too)");
  }
};

}  // namespace

PARALLEX_PLUGIN(ClaudeCodePlugin, "claude-code", "1.0.0", "Claude Code",
                "Runs Anthropic's Claude Code CLI (claude, @anthropic-ai/claude-code)")
