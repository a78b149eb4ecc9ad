// `parallex transcripts --harness NAME [--json] PATH...`: the sessions a harness
// plugin extracts from transcript files or folders, in the shape of the
// fixtures' EXPECTED.json sessions (docs/transcripts.md) — for users, and for
// plugin authors checking their parser.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <system_error>
#include <thread>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "common/json_io.hpp"
#include "common/redact.hpp"
#include "common/shown.hpp"
#include "pluginhost/plugin_set.hpp"

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

void redact_all(Json& j) {
  if (j.is_string())
    j = redact(j.get_ref<const std::string&>());
  else if (j.is_structured())
    for (auto& child : j) redact_all(child);
}

// A session read as outside input and masked: for --json its text as an
// element of the printed array, else the session itself.
struct Checked {
  bool object = false;  // false: the plugin's text was not a JSON object
  Json session;
  std::string element;
};

// An element of the printed array: the session's indented text, each line
// two spaces in, exactly as the whole array's dump would have it.
std::string element_text(Json&& session) {
  Json one = Json::array();
  one.push_back(std::move(session));        // moved, not copied: a session may be megabytes
  std::string text = to_json_text(one, 2);  // "[\n  {...}\n]"
  return text.substr(2, text.size() - 4);
}

// The plugin's sessions, each read as outside input and masked on its own
// (and, for --json, printed), spread over the machine's cores: 8 MB of Codex
// sessions took 0.1 s on one, and as much again to print. Each text is let go
// once read, and for --json each session once printed, so that the host holds
// little at a time: fresh memory costs page faults, a fifth of the command's
// time when it held them all.
std::vector<Checked> checked_sessions(std::vector<std::string>&& texts, bool json) {
  std::vector<Checked> out(texts.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i; (i = next++) < texts.size();) {
      auto s = parse_json_input<Json>(texts[i]);
      std::string().swap(texts[i]);
      if (s.is_discarded() || !s.is_object()) continue;
      redact_all(s);
      out[i].object = true;
      if (json)
        out[i].element = element_text(std::move(s));
      else
        out[i].session = std::move(s);
    }
  };
  std::vector<std::thread> helpers;
  const unsigned cores = std::min(std::max(1u, std::thread::hardware_concurrency()), 8u);
  for (unsigned t = 1; t < cores && texts.size() >= 64; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no thread to be had: the rest on this one
    }
  }
  work();
  for (auto& h : helpers) h.join();
  return out;
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
  auto parsed = plugin.value()->parse_transcripts(o.paths, 0, 0);
  if (!parsed) return report_error(parsed.error());
  for (const auto& [path, message] : parsed.value().warnings)
    say("warning: " + path + (path.empty() ? "" : ": ") + message);
  std::vector<Checked> sessions;
  for (auto& c : checked_sessions(std::move(parsed.value().sessions), o.json)) {
    if (!c.object) {
      say("warning: the " + o.harness + " plugin returned a session that is not a JSON object");
      continue;
    }
    sessions.push_back(std::move(c));
  }
  if (o.json) {
    // The array as `to_json_text(array, 2)` prints it, one session at a time.
    std::fputs(sessions.empty() ? "[]" : "[\n", stdout);
    for (std::size_t i = 0; i < sessions.size(); ++i) {
      if (i > 0) std::fputs(",\n", stdout);
      std::fwrite(sessions[i].element.data(), 1, sessions[i].element.size(), stdout);
    }
    std::fputs(sessions.empty() ? "\n" : "\n]\n", stdout);
  } else {
    if (sessions.empty()) std::printf("no %s session found in the given paths\n", o.harness.c_str());
    for (auto& c : sessions) {
      c.session["_harness"] = o.harness;
      print_summary(c.session);
    }
  }
  // Nothing found and something could not be read: that is a failure to report.
  return sessions.empty() && !parsed.value().warnings.empty() ? 1 : 0;
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
