// Parallex plugin for aider (PyPI aider-chat): an example of a harness plugin
// written outside the Parallex tree, against the installed SDK, for a Python
// tool. It uses what the SDK gives besides the plugin class: Python launch
// forms in detect_program, a state folder with a read-only file inside it,
// project files, and transcripts read from the project (project-aware roots)
// and written with the SDK's JSON helper.
//
// What only this plugin knows: aider keeps its caches in ~/.aider, loads API
// keys from ~/.aider/oauth-keys.env as dotenv when it starts, reads
// .aider.conf.yml (whose lint-cmd and test-cmd it runs) from the project,
// and writes its chat history to .aider.chat.history.md in the project.
#include <algorithm>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <parallex/json.hpp>
#include <parallex/plugin.hpp>
#include <parallex/support.hpp>
#include <parallex/transcripts.hpp>
#include <string>
#include <vector>

namespace aider {

namespace fs = std::filesystem;
using parallex::sdk::Json;

struct Window {
  std::int64_t since_ms = 0, until_ms = 0;
};
struct Warning {
  std::string path, message;
};
struct Result {
  std::vector<Json> sessions;
  std::vector<Warning> warnings;
};

constexpr const char* kHistory = ".aider.chat.history.md";

// "2025-06-01 10:00:00", in local time as aider writes it: epoch ms, or -1.
std::int64_t local_ms(const std::string& text) {
  std::tm tm{};
  if (!strptime(text.c_str(), "%Y-%m-%d %H:%M:%S", &tm)) return -1;
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  return t == static_cast<std::time_t>(-1) ? -1 : static_cast<std::int64_t>(t) * 1000;
}

std::string iso_utc(std::int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  return std::string(text) + ".000Z";
}

// One history file: a session per "# aider chat started at" header. aider
// writes no end time, so a session is kept when it started before the
// window's end.
void read_history(const fs::path& file, const Window& window, Result& out) {
  std::ifstream in(file);
  if (!in) {
    out.warnings.push_back({file.string(), "cannot be read"});
    return;
  }
  const std::string cwd = file.parent_path().string();
  const std::string header = "# aider chat started at ";
  std::optional<Json> session;
  int count = 0;
  const auto finish = [&] {
    if (session) out.sessions.push_back(std::move(*session));
    session.reset();
  };
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(header, 0) == 0) {
      finish();
      const std::int64_t started = local_ms(line.substr(header.size()));
      ++count;
      if (started < 0 || (window.until_ms != 0 && started > window.until_ms)) continue;
      session = Json{{"session_id", file.string() + "#" + std::to_string(count)},
                     {"parent_session_id", nullptr},
                     {"source_files", {file.string()}},
                     {"cwd", cwd},
                     {"models", Json::array()},
                     {"started_at", iso_utc(started)},
                     {"ended_at", nullptr},
                     {"files_read", Json::array()},
                     {"files_changed", Json::array()},
                     {"commands", Json::array()},
                     {"urls", Json::array()},
                     {"web_searches", Json::array()},
                     {"token_usage", nullptr},
                     {"malformed_lines", 0}};
      continue;
    }
    if (!session) continue;
    Json& s = *session;
    // "> Main model: anthropic/claude-sonnet-4 with diff edit format".
    for (const std::string prefix : {"> Main model: ", "> Model: "}) {
      if (line.rfind(prefix, 0) != 0) continue;
      const std::string model = line.substr(prefix.size(), line.find(" with ") - prefix.size());
      if (std::find(s["models"].begin(), s["models"].end(), model) == s["models"].end())
        s["models"].push_back(model);
    }
    // A shell command the user had aider run.
    if (line.rfind("#### /run ", 0) == 0)
      s["commands"].push_back({{"command", line.substr(10)},
                               {"cwd", cwd},
                               {"exit_code", nullptr},
                               {"status", "unknown"},
                               {"tool", "/run"}});
    const std::string applied = "> Applied edit to ";
    if (line.rfind(applied, 0) == 0) {
      const std::string path = (fs::path(cwd) / line.substr(applied.size())).lexically_normal().string();
      Json change{{"path", path}, {"tool", "edit"}, {"action", "modify"}};
      if (std::find(s["files_changed"].begin(), s["files_changed"].end(), change) == s["files_changed"].end())
        s["files_changed"].push_back(change);
    }
  }
  finish();
}

// Files or folders (a project holding the history file).
Result parse(const std::vector<std::string>& paths, Window window) {
  Result out;
  for (const auto& p : paths) {
    std::error_code ec;
    const fs::path file = fs::is_directory(p, ec) ? fs::path(p) / kHistory : fs::path(p);
    if (!fs::exists(file, ec)) {
      out.warnings.push_back({file.string(), "missing"});
      continue;
    }
    read_history(file, window, out);
  }
  return out;
}

// aider writes its history in the project it ran in, not in the home.
std::vector<std::string> roots(const std::string& /*run_home*/, const std::string& run_folder) {
  if (run_folder.empty()) return {};
  return {run_folder + "/" + kHistory};
}

}  // namespace aider

namespace {

using namespace parallex::sdk;

class AiderPlugin final : public ReadsTranscripts<&aider::parse, &aider::roots> {
 public:
  std::optional<Detection> detect(const Command& command) override {
    // `aider`, `python -m aider`, `pipx run aider-chat`, `uvx --from aider-chat aider`, `uv run aider`.
    return detect_program(command, {{"aider"}, {}, {"aider-chat"}, {"aider"}});
  }

  void contribute(const ContributeInput&, Contribution& out) override {
    out.state_dir("~/.aider", "aider's caches, analytics choice and the versions it installs");
    // Inside its writable folder, and still read-only: aider loads it as
    // dotenv when it starts, so a run that wrote it would set the variables
    // of every later aider session.
    out.read_only("~/.aider/oauth-keys.env", "API keys aider loads when it starts");
    out.read("~/.aider.conf.yml", "aider's settings");
    out.keep_env("AIDER_*", "aider's own settings");
    out.keep_env("OPENAI_API_KEY", "the OpenAI key aider uses");
    out.keep_env("ANTHROPIC_API_KEY", "the Anthropic key aider uses");
    out.brokered_credential("ANTHROPIC_API_KEY", {"api.anthropic.com"}, "ANTHROPIC_BASE_URL", "",
                            "aider's Anthropic API key");
  }

  std::vector<ProjectFile> project_files() override {
    return {{".aider.conf.yml", "aider's project settings: the lint and test commands it runs"}};
  }
};

}  // namespace

PARALLEX_PLUGIN(AiderPlugin, "aider", "0.1.0", "aider",
                "Runs aider, the Python coding agent (example third-party plugin)")
