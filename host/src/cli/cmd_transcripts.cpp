// `parallex transcripts --harness NAME [--json] PATH...`: the sessions a harness
// plugin extracts from transcript files or folders, in the shape of the
// fixtures' EXPECTED.json sessions (docs/transcripts.md) — for users, and for
// plugin authors checking their parser.
#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "common/json_io.hpp"
#include "common/redact.hpp"
#include "common/shown.hpp"
#include "pluginhost/plugin_set.hpp"
#include "report/session_text.hpp"

namespace px::cli {
namespace {

using Json = nlohmann::ordered_json;

struct TranscriptsOptions {
  std::string harness;
  bool json = false;
  std::vector<std::string> paths;
};

// Transcripts hold whatever the model and its tools printed: every control
// byte escaped (common/shown.hpp), so that none reaches the terminal, and
// secrets masked.
std::string text_of(const std::string& text) {
  return redact(shown(text));
}

std::string str(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : to_json_text(*it);
}

void print_summary(const Json& s) {
  std::printf("%s session %s\n", text_of(str(s, "_harness")).c_str(), text_of(str(s, "session_id")).c_str());
  if (!str(s, "parent_session_id").empty())
    std::printf("  parent    %s\n", text_of(str(s, "parent_session_id")).c_str());
  std::printf("  cwd       %s\n", text_of(str(s, "cwd")).c_str());
  std::string models;
  for (const auto& m : s.value("models", Json::array()))
    models += (models.empty() ? "" : ", ") + m.get<std::string>();
  std::printf("  models    %s\n", text_of(models).c_str());
  std::printf("  time      %s -> %s\n", text_of(str(s, "started_at")).c_str(),
              text_of(str(s, "ended_at")).c_str());
  const auto list = [&](const char* title, const char* key) {
    const auto items = s.value(key, Json::array());
    std::printf("  %s (%zu)\n", title, items.size());
    for (const auto& i : items)
      std::printf("    %s\n", text_of(i.is_string() ? i.get<std::string>() : to_json_text(i)).c_str());
  };
  list("files read", "files_read");
  const auto changed = s.value("files_changed", Json::array());
  std::printf("  files changed (%zu)\n", changed.size());
  for (const auto& c : changed)
    std::printf("    %-7s %-12s %s%s\n", text_of(str(c, "action")).c_str(), text_of(str(c, "tool")).c_str(),
                str(c, "from").empty() ? "" : (text_of(str(c, "from")) + " -> ").c_str(),
                text_of(str(c, "path")).c_str());
  const auto commands = s.value("commands", Json::array());
  std::printf("  commands (%zu)\n", commands.size());
  for (const auto& c : commands) {
    const std::string exit =
        c.contains("exit_code") && c["exit_code"].is_number() ? to_json_text(c["exit_code"]) : "?";
    std::printf("    [%s %s] %s  (in %s)\n", exit.c_str(), text_of(str(c, "status")).c_str(),
                text_of(str(c, "command")).c_str(), text_of(str(c, "cwd")).c_str());
  }
  list("urls", "urls");
  list("web searches", "web_searches");
  if (s.contains("token_usage") && !s["token_usage"].is_null())
    std::printf("  tokens    %s\n", text_of(to_json_text(s["token_usage"])).c_str());
  if (s.value("malformed_lines", 0) > 0)
    std::printf("  malformed lines skipped: %d\n", s.value("malformed_lines", 0));
  std::printf("\n");
}

int run(const TranscriptsOptions& o) {
  const auto set = pluginhost::PluginSet::load_default();
  auto plugin = set.require(o.harness);
  if (!plugin) return report_error(plugin.error());
  if (!plugin.value()->has_transcripts())
    return report_error(Error::unsupported("The " + o.harness + " plugin does not read transcripts."));
  // Each session is read as outside input, masked and printed as it arrives
  // from the plugins' process, while the plugin sends the next, and let go:
  // 8 MB of Codex sessions, kept, read into a DOM and dumped again, took
  // longer here than the plugin took to parse 200 MB of transcripts.
  report::SessionMasker masker;
  std::size_t printed = 0;
  const auto print = [&](std::string_view text) {
    auto masked = masker.masked(text, o.json ? 2 : 0);
    if (!masked) {
      say("warning: the " + o.harness +
          " plugin returned a session that was skipped: " + masked.error().message);
      return;
    }
    if (o.json) {
      std::fputs(printed == 0 ? "[\n  " : ",\n  ", stdout);
      std::fwrite(masked.value().data(), 1, masked.value().size(), stdout);
    } else {
      auto session = parse_json_input<Json>(masked.value());
      session["_harness"] = o.harness;
      print_summary(session);
    }
    ++printed;
  };
  auto parsed = plugin.value()->parse_transcripts(o.paths, 0, 0, print);
  // The array stays whole when the plugin failed after some sessions: those
  // are printed, and the failure is said and ends the command.
  if (o.json) std::fputs(printed == 0 ? (parsed ? "[]\n" : "") : "\n]\n", stdout);
  if (!parsed) return report_error(parsed.error());
  for (const auto& [path, message] : parsed.value().warnings)
    say("warning: " + path + (path.empty() ? "" : ": ") + message);
  if (!o.json && printed == 0) std::printf("no %s session found in the given paths\n", o.harness.c_str());
  // Nothing found and something could not be read: that is a failure to report.
  return printed == 0 && !parsed.value().warnings.empty() ? 1 : 0;
}

Action setup_transcripts(CLI::App& app, GlobalOptions&) {
  auto o = std::make_shared<TranscriptsOptions>();
  app.add_option("--harness", o->harness,
                 "The harness plugin whose parser reads them (claude-code, codex, opencode)")
      ->required();
  app.add_flag("--json", o->json, "Print the sessions as a JSON array");
  app.add_option("paths", o->paths, "Transcript files or folders (e.g. ~/.claude/projects)")->required();
  return [o] { return run(*o); };
}

}  // namespace

PARALLEX_COMMAND("transcripts", "Print the sessions a harness plugin reads from transcript files", 60,
                 setup_transcripts);

}  // namespace px::cli
