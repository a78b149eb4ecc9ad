#include "mcp/install.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "common/read_file.hpp"
#include "common/replace_file.hpp"
#include "common/spawn.hpp"

namespace px::mcp {

namespace fs = std::filesystem;

namespace {

constexpr const char* kName = "parallex";

std::string quote(const std::string& s) {
  if (s.find_first_of(" '\"\\$`") == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// The client's program on PATH, or an error naming how to get it and the
// line that does the same by hand.
Result<std::string> client_program(const std::string& program, const std::string& package,
                                   const std::string& by_hand) {
  const auto found = find_executable(program, env_or("PATH", "/usr/local/bin:/usr/bin:/bin"));
  if (!found)
    return Error::not_found("`" + program + "` is not on PATH: install it (npm i -g " + package +
                            "), or add the server yourself: " + by_hand);
  return found->string();
}

// A client's own command; its output is said when it fails.
Result<std::string> run(const std::vector<std::string>& argv) {
  PX_TRY_ASSIGN(auto ran, spawn_capture({.argv = argv}, {.merge_stderr = true}));
  if (ran.exit_status != 0) {
    std::string shown;
    for (const auto& a : argv) shown += (shown.empty() ? "" : " ") + quote(a);
    return Error::internal("`" + shown + "` failed (exit status " + std::to_string(ran.exit_status) +
                           "): " + ran.out.substr(0, 2000));
  }
  return ran.out;
}

// The JSON object in a client's output (its warnings around it).
nlohmann::json json_in(const std::string& output) {
  const auto open = output.find('{'), close = output.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return nullptr;
  return parse_json_input(std::string_view(output).substr(open, close - open + 1));
}

bool is_ours(const nlohmann::json& command, const nlohmann::json& args, const fs::path& parallex) {
  return command.is_string() && command.get<std::string>() == parallex.string() && args.is_array() &&
         args.size() == 1 && args[0] == "mcp";
}

// Claude Code keeps user-scoped servers in ~/.claude.json (CLAUDE_CONFIG_DIR
// moves it), which it rewrites itself: it is only ever read here, and
// changed through `claude mcp`.
Result<Installed> install_claude(const fs::path& parallex) {
  const std::string by_hand = "claude mcp add -s user parallex -- " + quote(parallex.string()) + " mcp";
  PX_TRY_ASSIGN(auto claude, client_program("claude", "@anthropic-ai/claude-code", by_hand));
  const char* dir = std::getenv("CLAUDE_CONFIG_DIR");
  const fs::path config = dir && *dir ? fs::path(dir) / ".claude.json" : user_home() / ".claude.json";
  Installed out{"claude", config.string(), parallex.string() + " mcp (user scope: every project)", false};
  bool present = false;
  if (auto text = read_regular_file(config, {.max_bytes = 64 << 20})) {
    const auto j = parse_json_input(text.value());
    if (j.is_object() && j.contains("mcpServers") && j["mcpServers"].is_object() &&
        j["mcpServers"].contains(kName)) {
      const auto& entry = j["mcpServers"][kName];
      present = true;
      if (entry.is_object() &&
          is_ours(entry.value("command", nlohmann::json()), entry.value("args", nlohmann::json()), parallex))
        return out;
    }
  }
  if (present) PX_TRY(run({claude, "mcp", "remove", "-s", "user", kName}));
  PX_TRY(run({claude, "mcp", "add", "-s", "user", kName, "--", parallex.string(), "mcp"}));
  out.changed = true;
  return out;
}

// Codex keeps servers in $CODEX_HOME/config.toml; `codex mcp add` writes the
// table (and replaces one of the same name).
Result<Installed> install_codex(const fs::path& parallex) {
  const std::string by_hand = "codex mcp add parallex -- " + quote(parallex.string()) + " mcp";
  PX_TRY_ASSIGN(auto codex, client_program("codex", "@openai/codex", by_hand));
  const fs::path config = fs::path(env_or("CODEX_HOME", (user_home() / ".codex").string())) / "config.toml";
  Installed out{"codex", config.string(),
                "[mcp_servers.parallex] command = \"" + parallex.string() + "\", args = [\"mcp\"]", false};
  if (auto got = spawn_capture({.argv = {codex, "mcp", "get", kName, "--json"}}, {.merge_stderr = true});
      got && got.value().exit_status == 0) {
    const auto j = json_in(got.value().out);
    if (j.is_object() && j.contains("transport") && j["transport"].is_object() &&
        is_ours(j["transport"].value("command", nlohmann::json()),
                j["transport"].value("args", nlohmann::json()), parallex))
      return out;
  }
  PX_TRY(run({codex, "mcp", "add", kName, "--", parallex.string(), "mcp"}));
  out.changed = true;
  return out;
}

// opencode reads $XDG_CONFIG_HOME/opencode/opencode.json (or .jsonc): its
// "mcp" object gets the entry, the rest of the file is kept as it was. A file
// with comments is not rewritten (they would be lost): the entry is said instead.
Result<Installed> install_opencode(const fs::path& parallex) {
  const std::string xdg = env_or("XDG_CONFIG_HOME", "");
  const fs::path dir =
      (!xdg.empty() && fs::path(xdg).is_absolute() ? fs::path(xdg) : user_home() / ".config") / "opencode";
  std::error_code ec;
  fs::path config = dir / "opencode.json";
  if (!fs::exists(config, ec) && fs::exists(dir / "opencode.jsonc", ec)) config = dir / "opencode.jsonc";
  const nlohmann::ordered_json entry{
      {"type", "local"}, {"command", {parallex.string(), "mcp"}}, {"enabled", true}};
  Installed out{"opencode", config.string(), "\"mcp\": {\"parallex\": " + entry.dump() + "}", false};
  // Ordered: the user's keys stay where they were (a new file starts with its schema).
  nlohmann::ordered_json doc{{"$schema", "https://opencode.ai/config.json"}};
  if (fs::exists(config, ec)) {
    PX_TRY_ASSIGN(auto text, read_regular_file(config, {.max_bytes = 16 << 20}));
    doc = parse_json_input<nlohmann::ordered_json>(text);
    if (doc.is_discarded() || !doc.is_object()) {
      const bool commented = nlohmann::json::accept(text, /*ignore_comments=*/true);
      return Error::invalid(config.string() +
                            (commented ? " holds comments, which rewriting it would lose"
                                       : " is not a JSON object, so it cannot be added to") +
                            "; add this to it yourself: " + out.entry);
    }
  }
  if (!doc.contains("mcp")) doc["mcp"] = nlohmann::ordered_json::object();
  if (!doc["mcp"].is_object())
    return Error::invalid(config.string() +
                          ": \"mcp\" is not an object; add this to it yourself: " + out.entry);
  if (doc["mcp"].contains(kName) && doc["mcp"][kName] == entry) return out;
  doc["mcp"][kName] = entry;
  fs::create_directories(dir, ec);
  if (ec) return Error::io("create " + dir.string(), ec.value());
  PX_TRY(replace_file(config, to_json_text(doc, 2) + "\n"));
  out.changed = true;
  return out;
}

}  // namespace

Result<Installed> install(const std::string& client, const fs::path& parallex) {
  if (client == "claude" || client == "claude-code") return install_claude(parallex);
  if (client == "codex") return install_codex(parallex);
  if (client == "opencode") return install_opencode(parallex);
  return Error::invalid("unknown MCP client '" + client + "': give claude, codex or opencode");
}

}  // namespace px::mcp
