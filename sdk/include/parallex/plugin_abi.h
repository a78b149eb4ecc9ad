/*
 * Parallex plugin ABI — the C boundary between the `parallex` host and a
 * harness plugin (a shared library).
 *
 * A plugin exports one symbol, `parallex_plugin_entry`, returning a pointer to
 * a static `px_plugin` whose first fields are its size and ABI version. The
 * host refuses a plugin of another ABI major, or of a newer minor than it
 * knows, naming the file and both versions.
 *
 * Rules of the boundary:
 *  - Only plain C data and function pointers cross it. No C++ object, no
 *    exception, no allocation that the other side must free.
 *  - Data flows from plugin to host through *sinks*: the host passes a sink
 *    (a context pointer and callbacks); the plugin calls them with strings that
 *    need only live for the duration of the call. The host copies at once.
 *  - Every callback returns PX_OK or PX_ERROR; on error the plugin first calls
 *    the sink's `error` callback with a message for the user.
 *  - A plugin never enforces anything. It describes its harness; the host
 *    decides, and refuses contributions that would widen the seal.
 *
 * Most plugin authors should not use this header directly: <parallex/plugin.hpp>
 * lets them write an ordinary C++ class and one registration macro.
 *
 * ABI history:
 *   1.0  detect, contribute, parse_transcripts, carry_sign_in.
 *   1.1  PX_ACCESS_STATE_DIR: a state dir the host creates when missing.
 *   1.2  px_contribute_sink.credential: a provider key the host brokers.
 *   1.3  project_files: the files in a project that the harness runs or trusts
 *        when it starts there (hooks, MCP servers, commands). Plugins built
 *        for 1.0 to 1.2 still load; they simply declare none.
 *   1.4  home_files: the harness's files in a home, each one its own data
 *        (written back after a run) or a setting that runs commands (held
 *        back for the user to apply), down to keys inside JSON and TOML
 *        files. Plugins built for 1.0 to 1.3 still load; they declare none.
 *   1.5  PX_ACCESS_STATE_FILE and PX_ACCESS_READ_ONLY; transcript_roots_in
 *        (the roots told the run's folder too); attach_host (the host's log
 *        sink); parallex_plugin_entry_error (why the entry point returned
 *        NULL). Plugins built for 1.0 to 1.4 still load.
 *   1.6  PX_HOME_SCRATCH: a folder the harness writes and runs from within a
 *        session only (shell snapshots, launcher links first on its PATH);
 *        each run gets its own, dropped when it ends. Plugins built for 1.0
 *        to 1.5 still load.
 * Adding a field at the end of a struct is a minor bump; the host reads a
 * field only when `struct_size` says the plugin has it.
 */
#ifndef PARALLEX_PLUGIN_ABI_H
#define PARALLEX_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PX_PLUGIN_ABI_MAJOR 1
#define PX_PLUGIN_ABI_MINOR 6

#define PX_PLUGIN_ENTRY_SYMBOL "parallex_plugin_entry"
/* Since 1.5, optional: `const char* parallex_plugin_entry_error(void)`, the
 * reason the entry point returned NULL (a constructor's exception), which the
 * host shows. The SDK's PARALLEX_PLUGIN macro defines it. */
#define PX_PLUGIN_ENTRY_ERROR_SYMBOL "parallex_plugin_entry_error"

#define PX_OK 0
#define PX_ERROR 1

#if defined(_WIN32)
#define PX_PLUGIN_EXPORT __declspec(dllexport)
#else
#define PX_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ---- Common inputs ------------------------------------------------------ */

typedef enum px_platform { PX_PLATFORM_LINUX = 1, PX_PLATFORM_MACOS = 2 } px_platform;

/* The command a run would start, as the host sees it. */
typedef struct px_command {
  const char* const* argv; /* argv[0..argc-1], NUL-terminated strings */
  size_t argc;
  const char* resolved_path; /* absolute path of argv[0] after PATH lookup, or NULL */
  const char* resolved_real; /* the same with symlinks resolved (node wrappers), or NULL */
} px_command;

/* ---- detect ------------------------------------------------------------- */

typedef struct px_detect_sink {
  void* ctx;
  /* Claim the command with a confidence in 0..100 and a reason a user reads,
   * e.g. "argv[0] is a symlink to .../@anthropic-ai/claude-code/cli.js". */
  void (*claim)(void* ctx, int confidence, const char* reason);
  void (*error)(void* ctx, const char* message);
} px_detect_sink;

/* ---- contribute --------------------------------------------------------- */

typedef struct px_contribute_input {
  px_platform platform;
  const char* user_home;     /* the real user's home */
  const char* run_home;      /* the $HOME the harness runs with (an agent's home, or user_home) */
  const char* run_folder;    /* absolute */
  const px_command* command; /* may be NULL (policy shown for a harness by name) */
} px_contribute_input;

typedef enum px_access {
  PX_ACCESS_READ = 1,
  PX_ACCESS_READ_WRITE = 2,
  /* Since 1.1: a directory of the harness's own state, read-write; the host
   * creates it (mode 0700) before the run when it is missing, since the seal
   * cannot grant a path that does not exist yet. */
  PX_ACCESS_STATE_DIR = 3,
  /* Since 1.5: a file of the harness's own state, read-write, and only that
   * file (not its folder). In an agent's home the host makes it (empty,
   * 0600) when it is missing; in the user's own home a missing one stays
   * missing in the run (the harness cannot create it there). */
  PX_ACCESS_STATE_FILE = 4,
  /* Since 1.5: a file or folder the run may read but never change, even
   * inside a writable folder of the harness or an agent's home (a dotenv
   * file the harness loads, say). */
  PX_ACCESS_READ_ONLY = 5
} px_access;

typedef enum px_env_action {
  PX_ENV_KEEP = 1,  /* pattern: keep host variables that match (provider keys) */
  PX_ENV_STRIP = 2, /* pattern: strip host variables that match */
  PX_ENV_SET = 3    /* name + value: set in the child */
} px_env_action;

typedef enum px_nested_kind {
  PX_NESTED_ENV = 1, /* set an environment variable `name`=`value` */
  PX_NESTED_ARG = 2  /* insert `value` as one argument after argv[0]; calls keep their order */
} px_nested_kind;

/* Since 1.2: a provider's credential the host brokers by default (the run
 * gets a placeholder of its shape; the run's proxy swaps the key in on
 * requests to `hosts` only). The host reads a field only when `struct_size`
 * says the plugin has it. */
typedef struct px_credential {
  uint32_t struct_size;     /* sizeof(px_credential) as the plugin was built */
  const char* variable;     /* the variable holding the key, e.g. "ANTHROPIC_API_KEY" */
  const char* const* hosts; /* the provider's API hosts (exact names) the key may go to */
  size_t host_count;
  const char* base_url_variable; /* a variable naming another base URL for the key
                                    ("ANTHROPIC_BASE_URL"), or NULL */
  const char* shape;             /* "anthropic-key", "openai-key", or NULL: not checked */
  const char* reason;
} px_credential;

typedef struct px_contribute_sink {
  void* ctx;
  /* A state path of the harness. `path` is absolute or starts with "~/"
   * (relative to run_home). Kinds beyond the harness's own state are refused
   * by the host (all of $HOME, a secret path, the root). */
  void (*path)(void* ctx, px_access access, const char* path, const char* reason);
  /* The harness's own executable dir (e.g. ~/.nvm/.../bin): readable and
   * executable, never writable. */
  void (*executable_dir)(void* ctx, const char* path, const char* reason);
  /* Environment rules. Patterns: an exact name, or a prefix ending in '*'
   * ("ANTHROPIC_*"), or a suffix starting with '*' ("*_API_KEY"). */
  void (*env)(void* ctx, px_env_action action, const char* name_or_pattern, const char* value,
              const char* reason);
  /* A variable that points the harness at its config dir under run_home,
   * e.g. ("CLAUDE_CONFIG_DIR", "~/.claude"). The host sets it and makes the
   * dir writable. */
  void (*config_dir)(void* ctx, const char* variable, const char* path, const char* reason);
  /* What turns off the harness's own sandbox inside ours (a nested
   * sandbox-exec or bwrap fails). Visible in `parallex policy show`. */
  void (*nested_sandbox)(void* ctx, px_nested_kind kind, const char* name, const char* value,
                         const char* reason);
  /* Hosts the harness needs to reach to work at all (its model API). Shown as
   * suggestions; the network rule itself stays the user's. */
  void (*suggested_host)(void* ctx, const char* host, const char* reason);
  void (*error)(void* ctx, const char* message);
  /* Since 1.2: a provider key to broker (px_credential). Brokered only when
   * its variable is set when the run starts. */
  void (*credential)(void* ctx, const px_credential* credential);
} px_contribute_sink;

/* ---- sign-in ------------------------------------------------------------ */

typedef struct px_sign_in_input {
  px_platform platform;
  const char* user_home;  /* where the user's own sign-in lives */
  const char* agent_home; /* the agent's home, where a copy should go */
} px_sign_in_input;

typedef struct px_sign_in_sink {
  void* ctx;
  /* Ask the host to copy `from` (absolute) to `to` (absolute, under
   * agent_home) with mode 0600, after the user agrees. The plugin never copies
   * itself: the host asks, copies, and records it. */
  void (*copy_file)(void* ctx, const char* from, const char* to, const char* what);
  /* A step the user must do by hand (macOS keychain, a device-code login). */
  void (*instruction)(void* ctx, const char* text);
  void (*error)(void* ctx, const char* message);
} px_sign_in_sink;

/* ---- transcripts -------------------------------------------------------- */

typedef struct px_transcript_input {
  const char* const* paths; /* files or directories to read */
  size_t path_count;
  int64_t since_ms; /* only sessions active at or after (epoch ms); 0 = no bound */
  int64_t until_ms; /* only sessions active at or before; 0 = no bound */
} px_transcript_input;

/*
 * A session is one JSON object, UTF-8, in the shape of the extraction
 * contract (docs/transcripts.md): session_id, parent_session_id, cwd, models,
 * started_at, ended_at, files_read, files_changed, commands, urls,
 * web_searches, token_usage, malformed_lines, and, for harnesses with
 * sidechains, sidechain. Unknown fields are kept by the host.
 */
typedef struct px_transcript_sink {
  void* ctx;
  void (*session)(void* ctx, const char* json, size_t length);
  /* A problem with one input that does not stop the others ("unreadable"). */
  void (*warning)(void* ctx, const char* path, const char* message);
  void (*error)(void* ctx, const char* message);
} px_transcript_sink;

/* Since 1.5: where to look for transcripts. */
typedef struct px_transcript_roots_input {
  uint32_t struct_size;   /* sizeof(px_transcript_roots_input) as the host was built */
  const char* run_home;   /* the $HOME the harness ran with, absolute */
  const char* run_folder; /* the folder it ran in, absolute; NULL when unknown */
} px_transcript_roots_input;

typedef struct px_path_sink {
  void* ctx;
  void (*path)(void* ctx, const char* path, const char* reason);
  void (*error)(void* ctx, const char* message);
} px_path_sink;

/* ---- home files (since 1.4) --------------------------------------------- */

/* What a file (or a key inside one) of the harness in a home is. */
typedef enum px_home_kind {
  /* The harness's own data: transcripts, sessions, history, its sign-in
   * refresh, trust it records. What a run writes lands in the home. */
  PX_HOME_DATA = 1,
  /* A setting that runs or approves commands the next time the harness
   * starts (MCP servers, hooks, plugins, `notify`, `statusLine`, approved
   * tools). The run sees its own change; the user's home gets it only when
   * the user applies it (`parallex runs apply`). */
  PX_HOME_SETTINGS = 2,
  /* Since 1.6, for a folder or a file taken whole (PX_HOME_WHOLE, no keys):
   * what the harness writes and then runs or acts on within one session,
   * and never needs after it (a shell snapshot it sources before each
   * command, launcher links it puts first on its children's PATH, a cache
   * that names packages it installs). Another session of the harness outside
   * the run would run what a run wrote there, so each run gets its own: it
   * sees the path as it is and what it writes there is dropped when it ends,
   * without a word. A host older than 1.6 reads it as PX_HOME_SETTINGS. */
  PX_HOME_SCRATCH = 3
} px_home_kind;

/* How the host reads keys inside a file. */
typedef enum px_home_format {
  PX_HOME_WHOLE = 0, /* the file is one thing: no keys */
  PX_HOME_JSON = 1,
  PX_HOME_TOML = 2
} px_home_format;

/* A key rule inside a JSON or TOML file. `pattern` is a path of keys joined
 * by '.': "mcpServers", "projects.*.mcpServers". `*` is any one key;
 * `{run_folder}` is the key equal to the run's folder (an absolute path),
 * for what a harness records per project. A rule covers the key and
 * everything beneath it. The first rule that matches a key decides. */
typedef struct px_home_key {
  const char* pattern;
  px_home_kind kind;
  const char* reason; /* shown to the user beside a change it holds back */
} px_home_key;

typedef struct px_home_file {
  uint32_t struct_size; /* sizeof(px_home_file) as the plugin was built */
  /* "~/.claude.json", "~/.codex", "~/.codex/config.toml": under the home the
   * harness runs with. A declared path inside a declared folder overrides
   * the folder for itself. */
  const char* path;
  int directory;         /* 1: a folder; its entries take `kind` */
  px_home_kind kind;     /* the file's kind; for keys, those no rule matches */
  px_home_format format; /* a file's format (PX_HOME_WHOLE for a folder) */
  const px_home_key* keys;
  size_t key_count;
  const char* reason;
} px_home_file;

typedef struct px_home_file_sink {
  void* ctx;
  void (*file)(void* ctx, const px_home_file* file);
  void (*error)(void* ctx, const char* message);
} px_home_file_sink;

/* ---- the host's services (since 1.5) ------------------------------------ */

typedef enum px_log_level { PX_LOG_DEBUG = 1, PX_LOG_INFO = 2, PX_LOG_WARN = 3 } px_log_level;

typedef struct px_host {
  uint32_t struct_size; /* sizeof(px_host) as the host was built */
  void* ctx;
  /* A line for the host's log (shown with `-v` at debug level, at warn by
   * default), named after the plugin. The host copies it at once and may
   * shorten it; secrets in it are redacted as in every log line. */
  void (*log)(void* ctx, px_log_level level, const char* message);
} px_host;

/* ---- the plugin --------------------------------------------------------- */

typedef struct px_plugin {
  uint32_t struct_size; /* sizeof(px_plugin) as the plugin was built */
  uint16_t abi_major;
  uint16_t abi_minor;
  const char* name;        /* [a-z0-9-]+, unique among loaded plugins */
  const char* version;     /* the plugin's own version */
  const char* description; /* one line */
  const char* harness;     /* the harness's display name, e.g. "Claude Code" */

  int (*detect)(const px_command* command, const px_detect_sink* sink);
  int (*contribute)(const px_contribute_input* input, const px_contribute_sink* sink);
  /* May be NULL: the harness has no sign-in to carry. */
  int (*carry_sign_in)(const px_sign_in_input* input, const px_sign_in_sink* sink);
  /* May be NULL: the harness writes no transcripts the plugin can read. */
  int (*parse_transcripts)(const px_transcript_input* input, const px_transcript_sink* sink);
  /* Where the harness keeps its transcripts under a home (for reports).
   * May be NULL. */
  int (*transcript_roots)(const char* run_home, const px_path_sink* sink);
  /* Since 1.3 (read only when struct_size covers it). The files and folders
   * in a project that the harness runs or trusts the next time it starts
   * there: settings with hooks, MCP server lists, commands, skills, plugins.
   * Each `path` is relative to the project's folder ("`.mcp.json`",
   * "`.claude/commands`"), with no ".." and no leading '/'. The host keeps
   * them read-only in every sealed run, whatever its harness, and moves aside
   * what a run creates there. May be NULL. */
  int (*project_files)(const px_path_sink* sink);
  /* Since 1.4 (read only when struct_size covers it). The harness's files
   * and folders in a home, each its own data or a setting that runs
   * commands (px_home_file). In a run under the user's own home the run
   * sees its writes to them; data lands in the home, a changed setting is
   * held back in the run's record until the user applies it. In an agent's
   * home they say what to warn about before an unsealed run. May be NULL. */
  int (*home_files)(px_platform platform, const px_home_file_sink* sink);
  /* Since 1.5 (read only when struct_size covers it). transcript_roots, told
   * the run's folder too (a harness that keeps its history in the project).
   * The host prefers it to transcript_roots. Every root is absolute. May be
   * NULL. */
  int (*transcript_roots_in)(const px_transcript_roots_input* input, const px_path_sink* sink);
  /* Since 1.5. Called once, after the entry point, with the host's services;
   * `host` lives as long as the plugin is loaded. May be NULL. */
  void (*attach_host)(const px_host* host);
} px_plugin;

typedef const px_plugin* (*px_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* PARALLEX_PLUGIN_ABI_H */
