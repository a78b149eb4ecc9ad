// Codex CLI rollouts: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl and archived_sessions/.
// One file is one session. Eras: bare (first line {id, timestamp}, then bare response items)
// and wrapped ({timestamp, type, payload}). Actions come from response items (function calls
// and their outputs) and from event_msg completion records (exec_command_end, patch_apply_end,
// and in current releases item_completed), matched by call id so each action counts once.
#include "parallex_transcripts/codex.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <unordered_map>

#include "common/apply_patch.hpp"
#include "common/json_dom.hpp"
#include "common/line_reader.hpp"
#include "common/util.hpp"

namespace parallex::transcripts::codex {
namespace {

using jsonl::Value;
using nlohmann::json;

enum class Kind { read, change, command, url, search };

struct Event {
  Kind kind;
  std::string value;  // read: path, url, search: query
  // change
  std::vector<PatchOp> ops;
  std::string base;  // directory the patch's relative paths are resolved against
  std::string tool;
  bool failed = false;
  bool final = false;  // a completion record decided the outcome; outputs no longer change it
  Command cmd;
};

std::string lower_compact(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '_' || c == '-' || c == ' ') continue;
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

std::vector<std::string> argv_of(const Value& v) {
  std::vector<std::string> argv;
  jsonl::for_each_element(v, [&](const Value& a) {
    argv.push_back(jsonl::text(a));
    return true;
  });
  return argv;
}

std::optional<std::int64_t> number_after(std::string_view text, std::string_view marker) {
  auto pos = text.find(marker);
  if (pos == std::string_view::npos) return std::nullopt;
  pos += marker.size();
  bool neg = pos < text.size() && text[pos] == '-';
  if (neg) ++pos;
  std::int64_t v = 0;
  std::size_t start = pos;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - start < 12)
    v = v * 10 + (text[pos++] - '0');
  if (pos == start) return std::nullopt;
  return neg ? -v : v;
}

// What a tool output says about the call.
struct Outcome {
  std::optional<std::int64_t> exit_code;
  std::string running_session;  // unified exec: "Process running with session ID S"
  std::string text;
  bool success_flag_false = false;
};

// Exit codes and success markers sit at the start of an output; long outputs are not decoded whole.
constexpr std::size_t kOutputHead = 1024;
// A patch's summary lists one line per file: enough for any patch a model writes.
constexpr std::size_t kListingHead = 64 * 1024;

// `parser` reads an output that is JSON serialized into a string.
Outcome read_output(const Value& output, jsonl::Parser& parser) {
  Outcome o;
  if (output.is_string()) {
    const std::string_view text = jsonl::view(output);
    if (!text.empty() && text.front() == '{') {
      // {"output": "...", "metadata": {"exit_code": N}} serialized into the string (the parser
      // copies it into a buffer of its own: the line's stays as it is).
      Value j = parser.parse(text);
      if (j.is_object() && !j["metadata"].error()) {
        o.exit_code = jsonl::integer(j["metadata"]["exit_code"]);
        o.text = jsonl::str_prefix(j["output"], kOutputHead);
        return o;
      }
      o.text = std::string(text.substr(0, kOutputHead));
    } else {
      o.text = jsonl::str_prefix(output, kOutputHead);
    }
  } else if (output.is_array()) {
    jsonl::for_each_element(output, [&](const Value& item) {
      Value t = item["text"];
      if (t.is_string()) o.text += jsonl::str_prefix(t, kOutputHead);
      return o.text.size() < kOutputHead;
    });
  } else if (output.is_object()) {
    o.text = jsonl::str_prefix(output["content"], kOutputHead);
    if (output["success"].is_bool() && !jsonl::truthy(output["success"])) o.success_flag_false = true;
  }
  std::string_view t = o.text;
  if (t.substr(0, 11) == "Exit code: ") {
    o.exit_code = number_after(t, "Exit code: ");
    return o;
  }
  if (auto c = number_after(t, "Process exited with code ")) {
    o.exit_code = c;
    return o;
  }
  auto running = t.find("Process running with session ID ");
  if (running != std::string_view::npos) {
    auto rest = t.substr(running + 32);
    std::size_t n = 0;
    while (n < rest.size() && rest[n] != '\n' && rest[n] != ' ' && rest[n] != '\r') ++n;
    o.running_session = std::string(rest.substr(0, n));
  }
  return o;
}

void set_exit(Command& c, std::optional<std::int64_t> code) {
  c.exit_code = code;
  c.status = code ? (*code == 0 ? "success" : "error") : "error";
}

// What a thread reuses from one file to the next: the read buffer and the parsers' (the line
// being read, and what is JSON inside its strings: arguments, outputs).
struct Reading {
  LineReader reader;
  jsonl::Parser line, args, output;
};

class SessionParser {
 public:
  SessionParser(std::string path, ParseResult& r, Reading& reading)
      : path_(std::move(path)), result_(r), reading_(reading) {}

  // Returns the session id, or empty when the file held nothing recognizable.
  bool run() {
    LineReader& reader = reading_.reader;
    std::string error;
    if (!reader.open(path_, error)) {
      result_.warnings.push_back({path_, error});
      return false;
    }
    std::string_view line;
    bool any = false;
    while (true) {
      auto st = reader.next(line, error);
      if (st == LineReader::Status::end) break;
      if (st == LineReader::Status::error) {
        result_.warnings.push_back({path_, error});
        break;
      }
      if (st == LineReader::Status::oversized) {
        ++malformed_;
        continue;
      }
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      Value root = reading_.line.parse(line, /*padded=*/true);
      if (!root.is_object()) {
        ++malformed_;
        continue;
      }
      any = true;
      line_ = line;
      this->line(root);
    }
    if (id_.empty()) {
      // rollout-2025-10-02T07-12-40-<uuid>.jsonl
      std::string stem = std::filesystem::path(path_).stem().string();
      if (stem.size() >= 36) id_ = stem.substr(stem.size() - 36);
    }
    return any || malformed_ > 0;
  }

  const std::string& id() const { return id_; }

  // The session's report; called once, last: the commands are moved into it.
  json build() {
    Activity a;
    for (std::size_t i = 0; i < events_.size(); ++i) {
      const Event& e = events_[i];
      const std::optional<std::int64_t> at = event_at_[i];
      switch (e.kind) {
        case Kind::read:
          if (!e.failed) a.read(e.value);
          break;
        case Kind::url:
          a.url(e.value);
          break;
        case Kind::search:
          a.search(e.value);
          break;
        case Kind::command: {
          Command c = std::move(events_[i].cmd);
          c.at = at;
          a.command(std::move(c));
          break;
        }
        case Kind::change:
          if (e.failed) break;
          for (const auto& op : e.ops) {
            a.change(resolve_path(e.base, op.path), e.tool, op.action, at,
                     op.from.empty() ? std::string() : resolve_path(e.base, op.from));
          }
          break;
      }
    }
    json j;
    j["session_id"] = id_;
    j["parent_session_id"] = parent_.empty() ? json(nullptr) : json(parent_);
    j["source_files"] = json::array({path_});
    j["cwd"] = session_cwd_.empty() ? json(nullptr) : json(session_cwd_);
    j["models"] = models_.to_json();
    j["started_at"] = started_ ? json(format_iso8601_ms(*started_)) : json(nullptr);
    j["ended_at"] = ended_ ? json(format_iso8601_ms(*ended_)) : json(nullptr);
    a.write(j);
    // The last token_count line is parsed again for its totals, once: its counts, by their names.
    // Only numbers are kept: the file is the run's, and a value nested there (arrays 300 deep)
    // made the whole session one the host refuses to read.
    json totals = json::object();
    jsonl::for_each_member(reading_.line.parse(tokens_line_)["payload"]["info"]["total_token_usage"],
                           [&](std::string_view k, const Value& v) {
                             if (v.is_number()) totals[std::string(k)] = jsonl::to_json(v);
                             return true;
                           });
    j["token_usage"] = tokens_line_.empty() ? json(nullptr) : std::move(totals);
    j["malformed_lines"] = malformed_;
    return j;
  }

 private:
  void line(const Value& root) {
    Value type = root["type"], payload = root["payload"];
    line_ts_.reset();
    if (type.is_string() && !payload.error()) {
      wrapped_ = true;
      line_ts_ = timestamp_ms(root["timestamp"]);
      if (line_ts_) envelope_ts_ = line_ts_;
      if (jsonl::equals(type, "session_meta"))
        meta(payload);
      else if (jsonl::equals(type, "turn_context"))
        turn_context(payload);
      else if (jsonl::equals(type, "response_item"))
        response_item(payload);
      else if (jsonl::equals(type, "event_msg"))
        event_msg(payload);
      if (envelope_ts_) ended_ = envelope_ts_;
      return;
    }
    if (!root["record_type"].error()) return;  // bare-era state snapshots
    if (!seen_first_ && type.error() && root["id"].is_string()) {
      // Bare era: {id, timestamp, instructions, git}
      seen_first_ = true;
      id_ = jsonl::str(root["id"]);
      if (auto t = timestamp_ms(root["timestamp"])) started_ = *t;
      return;
    }
    seen_first_ = true;
    if (type.is_string()) response_item(root);
  }

  void meta(const Value& p) {
    seen_first_ = true;
    if (have_meta_) return;  // forks repeat their parent's lines; the first meta is ours
    have_meta_ = true;
    id_ = jsonl::str(p["id"]);
    if (id_.empty()) id_ = jsonl::str(p["session_id"]);
    if (auto t = timestamp_ms(p["timestamp"]))
      started_ = *t;
    else if (envelope_ts_)
      started_ = envelope_ts_;
    std::string cwd = jsonl::str(p["cwd"]);
    if (!cwd.empty()) {
      session_cwd_ = cwd;
      if (turn_cwd_.empty()) turn_cwd_ = cwd;
    }
    Value parent = p["source"]["subagent"]["thread_spawn"]["parent_thread_id"];
    if (parent.is_string()) parent_ = jsonl::str(parent);
  }

  void turn_context(const Value& p) {
    std::string cwd = jsonl::str(p["cwd"]);
    if (!cwd.empty()) {
      turn_cwd_ = resolve_path(turn_cwd_, cwd);
      if (session_cwd_.empty()) session_cwd_ = turn_cwd_;
    }
    Value model = p["model"];
    if (model.is_string()) models_.add(jsonl::str(model));
  }

  Event& add(Event e, const std::string& call_id) {
    events_.push_back(std::move(e));
    event_at_.push_back(line_ts_);
    if (!call_id.empty()) by_call_[call_id] = events_.size() - 1;
    return events_.back();
  }

  // `script` and `argv` are moved into the command (made for the call by its callers).
  void add_command(const std::string& call_id, const std::string& tool, std::string script,
                   std::optional<std::vector<std::string>> argv, const std::string& workdir) {
    std::string cwd = workdir.empty() ? turn_cwd_ : resolve_path(turn_cwd_, workdir);
    // apply_patch sent through a shell tool is intercepted by Codex and applied as a patch.
    std::string patch, cd_dir;
    bool is_patch = false;
    if (argv && argv->size() >= 2) {
      std::string_view a0 = (*argv)[0];
      if (auto slash = a0.rfind('/'); slash != std::string_view::npos) a0.remove_prefix(slash + 1);
      if ((a0 == "apply_patch" || a0 == "applypatch") &&
          (*argv)[1].find("*** Begin Patch") != std::string::npos) {
        patch = (*argv)[1];
        is_patch = true;
      }
    }
    if (!is_patch) is_patch = extract_patch_invocation(script, patch, cd_dir);
    if (is_patch) {
      Event e{Kind::change,
              {},
              parse_apply_patch(patch),
              cd_dir.empty() ? cwd : resolve_path(cwd, cd_dir),
              "apply_patch",
              false,
              false,
              {}};
      add(std::move(e), call_id);
      return;
    }
    Event e{Kind::command, {}, {}, {}, {}, false, false, {}};
    e.cmd.command = std::move(script);
    e.cmd.cwd = std::move(cwd);
    e.cmd.tool = tool;
    e.cmd.argv = std::move(argv);
    add(std::move(e), call_id);
  }

  void add_patch(const std::string& call_id, const std::string& patch) {
    Event e{Kind::change, {}, parse_apply_patch(patch), turn_cwd_, "apply_patch", false, false, {}};
    add(std::move(e), call_id);
  }

  // `args` is the parsed arguments object (none when they are not JSON); `arguments` the
  // record's own value (their text, or the object itself in older builds).
  void function_call(const std::string& name, Value args, const Value& arguments,
                     const std::string& call_id) {
    if (name == "shell" || name == "container.exec") {
      auto argv = argv_of(args["command"]);
      if (argv.empty()) return;
      std::string script = command_from_argv(argv);
      add_command(call_id, name, std::move(script), std::move(argv), jsonl::str(args["workdir"]));
    } else if (name == "shell_command" || name == "exec_command") {
      std::string script = jsonl::str(args[name == "exec_command" ? "cmd" : "command"]);
      if (script.empty()) script = jsonl::str(args[name == "exec_command" ? "command" : "cmd"]);
      if (script.empty() && args["command"].is_array()) {
        auto argv = argv_of(args["command"]);
        std::string joined = command_from_argv(argv);
        add_command(call_id, name, std::move(joined), std::move(argv), jsonl::str(args["workdir"]));
        return;
      }
      if (script.empty()) return;
      add_command(call_id, name, std::move(script), std::nullopt, jsonl::str(args["workdir"]));
    } else if (name == "write_stdin") {
      Value sid = args["session_id"];
      std::string session = jsonl::text(sid);
      if (!session.empty()) stdin_calls_[call_id] = session;
    } else if (name == "apply_patch") {
      std::string patch = jsonl::str(args["input"]);
      if (patch.empty()) patch = jsonl::str(args["patch"]);
      if (patch.empty()) {
        std::string raw = jsonl::text(arguments);
        if (raw.find("*** Begin Patch") != std::string::npos) patch = std::move(raw);
      }
      add_patch(call_id, patch);
    } else if (name == "read_file" || name == "view_image") {
      std::string path = jsonl::str(args[name == "read_file" ? "file_path" : "path"]);
      if (path.empty()) path = jsonl::str(args["path"]);
      if (path.empty()) return;
      add(Event{Kind::read, resolve_path(turn_cwd_, path), {}, {}, {}, false, false, {}}, call_id);
    }
    // update_plan, spawn_agent, wait, code-mode exec (its actions arrive as item_completed), MCP: not
    // actions.
  }

  void response_item(const Value& p) {
    Value type = p["type"];
    if (jsonl::equals(type, "function_call")) {
      std::string name = jsonl::str(p["name"]);
      Value arguments = p["arguments"];
      // Arguments are a JSON object serialized into a string (older builds: the object itself).
      // Parsed from the line's own buffer: the args parser copies the text into one of its own.
      Value args = arguments.is_string() ? reading_.args.parse(jsonl::view(arguments)) : arguments;
      function_call(name, args, arguments, jsonl::str(p["call_id"]));
    } else if (jsonl::equals(type, "custom_tool_call")) {
      std::string name = jsonl::str(p["name"]);
      if (name == "apply_patch") add_patch(jsonl::str(p["call_id"]), jsonl::str(p["input"]));
    } else if (jsonl::equals(type, "local_shell_call")) {
      Value action = p["action"];
      auto argv = argv_of(action["command"]);
      if (argv.empty()) return;
      std::string call_id = jsonl::str(p["call_id"]);
      if (call_id.empty()) call_id = jsonl::str(p["id"]);
      std::string script = command_from_argv(argv);
      add_command(call_id, "local_shell_call", std::move(script), std::move(argv),
                  jsonl::str(action["working_directory"]));
    } else if (jsonl::equals(type, "function_call_output") ||
               jsonl::equals(type, "custom_tool_call_output")) {
      output(jsonl::str(p["call_id"]), p["output"]);
    } else if (jsonl::equals(type, "web_search_call")) {
      if (jsonl::equals(p["status"], "failed")) return;
      Value action = p["action"];
      Value atype = action["type"];
      if (jsonl::equals(atype, "open_page") || jsonl::equals(atype, "find_in_page")) {
        std::string url = jsonl::str(action["url"]);
        if (!url.empty()) add(Event{Kind::url, url, {}, {}, {}, false, false, {}}, {});
      } else {
        std::string q = jsonl::str(action["query"]);
        if (q.empty()) q = jsonl::str(p["query"]);
        if (!q.empty()) add(Event{Kind::search, q, {}, {}, {}, false, false, {}}, {});
      }
    } else if (jsonl::equals(type, "message")) {
      if (!jsonl::equals(p["role"], "user")) return;
      // Bare era: the cwd is only in the injected <environment_context>.
      if (!turn_cwd_.empty()) return;
      jsonl::for_each_element(p["content"], [&](const Value& c) {
        std::string text = jsonl::str(c["text"]);
        auto b = text.find("<cwd>");
        auto e = text.find("</cwd>");
        if (text.find("<environment_context>") != std::string::npos && b != std::string::npos &&
            e != std::string::npos && e > b) {
          turn_cwd_ = text.substr(b + 5, e - b - 5);
          if (session_cwd_.empty()) session_cwd_ = turn_cwd_;
          return false;
        }
        return true;
      });
    }
  }

  Event* find_call(const std::string& call_id) {
    if (call_id.empty()) return nullptr;
    auto it = by_call_.find(call_id);
    return it == by_call_.end() ? nullptr : &events_[it->second];
  }

  void output(const std::string& call_id, Value out) {
    Outcome o = read_output(out, reading_.output);
    if (auto sit = stdin_calls_.find(call_id); sit != stdin_calls_.end()) {
      // write_stdin polls a running unified-exec process; its exit may show up here.
      auto rit = running_.find(sit->second);
      if (rit != running_.end() && o.exit_code) {
        Event& e = events_[rit->second];
        if (!e.final) set_exit(e.cmd, o.exit_code);
        running_.erase(rit);
      }
      return;
    }
    Event* e = find_call(call_id);
    if (!e || e->final) return;
    if (e->kind == Kind::command) {
      if (!o.running_session.empty() && !o.exit_code) {
        running_[o.running_session] = static_cast<std::size_t>(e - events_.data());
        e->cmd.status = "unknown";
        return;
      }
      set_exit(e->cmd, o.exit_code);
    } else if (e->kind == Kind::change) {
      if (o.exit_code)
        e->failed = *o.exit_code != 0;
      else if (o.text.find("verification failed") != std::string::npos || o.success_flag_false)
        e->failed = true;
      else if (o.text.find("Success") != std::string::npos)
        e->failed = false;
      else if (o.text.find("rejected") != std::string::npos || o.text.find("error") != std::string::npos ||
               o.text.find("failed") != std::string::npos)
        e->failed = true;
    } else if (e->kind == Kind::read) {
      std::string_view t = o.text;
      if (o.success_flag_false || t.substr(0, 6) == "failed" || t.substr(0, 5) == "Error" ||
          t.substr(0, 5) == "error")
        e->failed = true;
    }
  }

  void event_msg(const Value& p) {
    Value type = p["type"];
    if (jsonl::equals(type, "token_count")) {
      Value info = p["info"];
      if (info.is_object()) {
        Value total = info["total_token_usage"];
        if (total.is_object()) tokens_line_.assign(line_);  // made JSON once, at the end
      }
    } else if (jsonl::equals(type, "exec_command_end")) {
      exec_end(p);
    } else if (jsonl::equals(type, "patch_apply_end")) {
      patch_end(p);
    } else if (jsonl::equals(type, "web_search_end")) {
      std::string q = jsonl::str(p["query"]);
      if (!q.empty()) add(Event{Kind::search, q, {}, {}, {}, false, false, {}}, {});
    } else if (jsonl::equals(type, "item_completed")) {
      item_completed(p["item"]);
    }
  }

  void exec_end(const Value& p) {
    std::string call_id = jsonl::str(p["call_id"]);
    std::optional<std::int64_t> code = jsonl::integer(p["exit_code"]);
    if (Event* e = find_call(call_id)) {
      if (e->kind == Kind::command)
        set_exit(e->cmd, code);
      else if (e->kind == Kind::change)
        e->failed = !code || *code != 0;
      e->final = true;
      return;
    }
    std::string source = lower_compact(jsonl::str(p["source"]));
    if (source == "usershell") return;  // the user's own `!` command
    Value command = p["command"];
    Event e{Kind::command, {}, {}, {}, {}, false, true, {}};
    if (command.is_array()) {
      auto argv = argv_of(command);
      e.cmd.command = command_from_argv(argv);
      e.cmd.argv = argv;
    } else {
      e.cmd.command = jsonl::str(command);
    }
    if (e.cmd.command.empty()) return;
    e.cmd.cwd = cwd_field(p["cwd"]);
    e.cmd.tool = "exec_command";
    set_exit(e.cmd, code);
    add(std::move(e), call_id);
  }

  // A completion record's working directory: Codex writes a code-mode cell's as a file:// URL.
  std::string cwd_field(const Value& v) const {
    std::string cwd = path_from_file_url(jsonl::view(v));
    if (cwd.rfind("file://", 0) == 0) return cwd;  // another machine's: not a path here, kept as written
    return cwd.empty() ? turn_cwd_ : resolve_path(turn_cwd_, cwd);
  }

  // The tool a command without a call of its own was run by (a code-mode cell calls the real
  // tools from JavaScript): unified exec's records say so in their source.
  static std::string tool_of_source(const Value& source) {
    const std::string s = lower_compact(jsonl::str(source));
    if (s == "agent") return "shell";
    return "exec_command";  // unifiedexecstartup, unifiedexecinteraction, and code mode's default
  }

  // Changes from a completion record: {path: {type add|delete|update, move_path}} or
  // [{path, kind: {type, move_path} | "add"}]. A map comes in the writer's hash order, so the
  // files are put back in the patch's order from its summary ("Success. Updated the following
  // files:\nA new.txt\nM edit.txt\n", in `listing`), paths relative to `base`.
  std::vector<PatchOp> ops_from_changes(const Value& changes, const std::string& listing,
                                        const std::string& base) {
    std::vector<PatchOp> ops = ops_from_changes(changes);
    std::vector<std::string> listed;
    std::string_view rest = listing;
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      if (line.size() > 2 && (line[0] == 'A' || line[0] == 'M' || line[0] == 'D') && line[1] == ' ')
        listed.push_back(resolve_path(base, line.substr(2)));
    }
    if (listed.empty() || ops.size() < 2) return ops;
    auto rank = [&](const PatchOp& op) {
      for (std::size_t i = 0; i < listed.size(); ++i)
        if (listed[i] == op.path || (!op.from.empty() && listed[i] == op.from)) return i;
      return listed.size();
    };
    std::stable_sort(ops.begin(), ops.end(),
                     [&](const PatchOp& a, const PatchOp& b) { return rank(a) < rank(b); });
    return ops;
  }

  std::vector<PatchOp> ops_from_changes(const Value& changes) {
    std::vector<PatchOp> ops;
    auto one = [&](const std::string& path, Value kind_holder) {
      Value kind = kind_holder["kind"].error() ? kind_holder : kind_holder["kind"];
      std::string type = lower_compact(kind.is_string() ? jsonl::str(kind) : jsonl::str(kind["type"]));
      std::string move = jsonl::str(kind["move_path"]);
      if (move.empty()) move = jsonl::str(kind_holder["move_path"]);
      if (type == "add" || type == "create")
        ops.push_back({"create", path, {}});
      else if (type == "delete" || type == "remove")
        ops.push_back({"delete", path, {}});
      else if (!move.empty())
        ops.push_back({"move", move, path});
      else
        ops.push_back({"modify", path, {}});
    };
    if (changes.is_object()) {
      jsonl::for_each_member(changes, [&](std::string_view key, const Value& v) {
        one(std::string(key), v);
        return true;
      });
    } else {
      jsonl::for_each_element(changes, [&](const Value& c) {
        std::string path = jsonl::str(c["path"]);
        if (!path.empty()) one(path, c);
        return true;
      });
    }
    return ops;
  }

  void patch_end(const Value& p) {
    std::string call_id = jsonl::str(p["call_id"]);
    bool ok = jsonl::truthy(p["success"]);
    if (Event* e = find_call(call_id)) {
      e->failed = !ok;
      e->final = true;
      return;
    }
    if (!ok) return;
    Event e{Kind::change,
            {},
            ops_from_changes(p["changes"], jsonl::str_prefix(p["stdout"], kListingHead), turn_cwd_),
            turn_cwd_,
            "apply_patch",
            false,
            true,
            {}};
    add(std::move(e), call_id);
  }

  void item_completed(const Value& item) {
    std::string type = lower_compact(jsonl::str(item["type"]));
    // The item repeats a call made through a direct tool: match it by call id (either field).
    std::string id = jsonl::str(item["call_id"]);
    if (id.empty() || !find_call(id)) {
      std::string item_id = jsonl::str(item["id"]);
      if (!item_id.empty() && (id.empty() || find_call(item_id))) id = item_id;
    }
    std::string status = lower_compact(jsonl::str(item["status"]));
    if (type == "commandexecution") {
      Value code_v = item["exit_code"].error() ? item["exitCode"] : item["exit_code"];
      std::optional<std::int64_t> code = jsonl::integer(code_v);
      Event* e = find_call(id);
      if (e) {
        if (e->kind == Kind::command) {
          if (code || status == "failed" || status == "declined")
            set_exit(e->cmd, code);
          else if (status == "completed")
            e->cmd.status = "success";
        } else if (e->kind == Kind::change) {
          e->failed = (code && *code != 0) || status == "failed" || status == "declined";
        }
        e->final = true;
        return;
      }
      Value command = item["command"];
      Event ev{Kind::command, {}, {}, {}, {}, false, true, {}};
      if (command.is_array()) {
        auto argv = argv_of(command);
        ev.cmd.command = command_from_argv(argv);
        ev.cmd.argv = argv;
      } else {
        ev.cmd.command = jsonl::str(command);
      }
      if (ev.cmd.command.empty()) return;
      ev.cmd.cwd = cwd_field(item["cwd"]);
      ev.cmd.tool = tool_of_source(item["source"]);
      if (code || status == "failed" || status == "declined") {
        set_exit(ev.cmd, code);
      } else if (status == "completed") {
        ev.cmd.status = "success";
      }
      add(std::move(ev), id);
    } else if (type == "filechange") {
      bool failed = status == "failed" || status == "declined";
      if (Event* e = find_call(id)) {
        if (status == "completed" || failed) {
          e->failed = failed;
          e->final = true;
        }
        return;
      }
      if (failed) return;
      Event ev{Kind::change,
               {},
               ops_from_changes(item["changes"], jsonl::str_prefix(item["stdout"], kListingHead), turn_cwd_),
               turn_cwd_,
               "apply_patch",
               false,
               true,
               {}};
      add(std::move(ev), id);
    } else if (type == "websearch") {
      Value action = item["action"];
      Value atype = action["type"];
      if ((jsonl::equals(atype, "open_page") || jsonl::equals(atype, "openPage") ||
           jsonl::equals(atype, "find_in_page") || jsonl::equals(atype, "findInPage")) &&
          action["url"].is_string()) {
        add(Event{Kind::url, jsonl::str(action["url"]), {}, {}, {}, false, false, {}}, {});
      } else {
        std::string q = jsonl::str(item["query"]);
        if (!q.empty()) add(Event{Kind::search, q, {}, {}, {}, false, false, {}}, {});
      }
    }
  }

  std::string path_;
  ParseResult& result_;
  Reading& reading_;
  std::string id_, parent_, session_cwd_, turn_cwd_;
  bool wrapped_ = false, have_meta_ = false, seen_first_ = false;
  // envelope_ts_: the last wrapped line's time stamp; line_ts_: the current line's own, if any.
  std::optional<std::int64_t> started_, ended_, envelope_ts_, line_ts_;
  UniqueList models_;
  std::string_view line_;    // the line being read
  std::string tokens_line_;  // the last line with a total_token_usage
  std::uint64_t malformed_ = 0;
  std::vector<Event> events_;
  std::vector<std::optional<std::int64_t>> event_at_;  // per event: the time stamp of its line
  std::unordered_map<std::string, std::size_t> by_call_;
  std::unordered_map<std::string, std::string> stdin_calls_;  // write_stdin call id -> exec session id
  std::unordered_map<std::string, std::size_t> running_;      // exec session id -> command event
};

}  // namespace

ParseResult parse(const std::vector<std::string>& paths, Window w, Form form) {
  ParseResult result;
  std::vector<std::string> files;
  auto scan_dir = [&](const std::string& dir) {
    auto found = list_files(dir, ".jsonl", result.warnings);
    files.insert(files.end(), found.begin(), found.end());
    std::vector<Warning> ignore;
    for (const auto& z : list_files(dir, ".jsonl.zst", ignore))
      result.warnings.push_back(
          {z, "Compressed Codex rollout " + z + " was skipped; decompress it (zstd -d) to include it."});
  };
  for (const auto& p : paths) {
    if (is_directory(p)) {
      bool home = false;
      for (const char* sub : {"/sessions", "/archived_sessions"}) {
        if (is_directory(p + sub)) {
          scan_dir(p + sub);
          home = true;
        }
      }
      if (!home) scan_dir(p);
    } else if (is_regular_file(p)) {
      files.push_back(p);
    } else if (path_exists(p)) {
      result.warnings.push_back(
          {p, p + " is not a regular file or directory; pass CODEX_HOME, its sessions/ dir "
                  "or a rollout .jsonl file."});
    } else {
      result.warnings.push_back(
          {p, "Codex transcript path " + p + " does not exist; check the path (default ~/.codex/sessions)."});
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  // Files are independent sessions: parse them in parallel, then merge in path order.
  struct FileOutcome {
    std::optional<Finished> session;
    std::string id;
    std::vector<Warning> warnings;
  };
  std::vector<FileOutcome> outcomes(files.size());
  parallel_for_with<Reading>(files.size(), worker_count(files), [&](Reading& reading, std::size_t i) {
    FileOutcome& o = outcomes[i];
    ParseResult local;
    try {
      SessionParser sp(files[i], local, reading);
      if (sp.run()) {
        o.id = sp.id();
        if (o.id.empty())
          local.warnings.push_back(
              {files[i], "No Codex session found in " + files[i] + "; the file was skipped."});
        else
          o.session = finished(sp.build(), form);  // on this worker thread, not all on one at the end
      }
    } catch (const std::exception& e) {
      local.warnings.push_back({files[i], "Reading " + files[i] + " failed: " + e.what()});
    }
    o.warnings = std::move(local.warnings);
  });
  std::set<std::string> seen;
  std::vector<Finished> sessions;
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto& o = outcomes[i];
    for (auto& warn : o.warnings) result.warnings.push_back(std::move(warn));
    if (!o.session) continue;
    if (!seen.insert(o.id).second) {
      result.warnings.push_back({files[i], "Codex session " + o.id + " appears in more than one file; " +
                                               files[i] + " was skipped."});
      continue;
    }
    sessions.push_back(std::move(*o.session));
  }
  finish_sessions(std::move(sessions), w, form, result);
  return result;
}

std::vector<std::string> roots(const std::string& home) {
  std::vector<std::string> out{home + "/.codex/sessions"};
  if (is_directory(home + "/.codex/archived_sessions")) out.push_back(home + "/.codex/archived_sessions");
  return out;
}

}  // namespace parallex::transcripts::codex
