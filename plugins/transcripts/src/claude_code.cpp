// Claude Code transcripts: <config>/projects/<project>/<sessionId>.jsonl, plus subagent files
// (2.0.x agent-<id>.jsonl beside it, 2.1.2+ <sessionId>/subagents/agent-<id>.jsonl). Lines are
// grouped by their sessionId, not by file, because subagent lines carry the parent's id.
#include "parallex_transcripts/claude_code.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include "common/json_dom.hpp"
#include "common/line_reader.hpp"
#include "common/util.hpp"

namespace parallex::transcripts::claude_code {
namespace {

using jsonl::Value;

struct ToolCall {
  std::int64_t ts = 0;
  std::optional<std::int64_t> at;  // the line's own time stamp (ts falls back to an earlier line's)
  std::uint64_t seq = 0;
  bool sidechain = false;
  std::string id, name, cwd, arg;  // arg: path, command, url or query depending on the tool
};

struct ToolResult {
  bool is_error = false;
  std::optional<std::int64_t> exit_code;  // from "Exit code N"
  std::string result_type;                // toolUseResult.type (Write: create/update)
  bool return_code_interpretation = false;
  bool created_text = false;
};

struct Ordered {
  std::int64_t ts;
  std::uint64_t seq;
  std::string value;
};

struct Session {
  std::string id;
  std::set<std::string> files;
  std::optional<std::int64_t> min_ts, max_ts;
  std::string cwd;
  std::int64_t cwd_ts = 0;
  int cwd_rank = 0;  // 2: main line, 1: sidechain line, 0: none yet
  std::vector<ToolCall> calls;
  std::unordered_map<std::string, ToolResult> results;
  std::vector<Ordered> models, subagents;
  // Per file: usage of each new (message.id, requestId) key, deduplicated across files on merge
  // (one node a key: the set of keys and the list of usages were two copies of each).
  std::unordered_map<std::string, std::array<std::int64_t, 4>> usages;
  // Usage on lines with neither id: every one counts.
  std::array<std::int64_t, 4> unkeyed{};
  bool has_unkeyed = false;
  std::int64_t tokens[4] = {0, 0, 0, 0};
  bool has_usage = false, has_sidechain = false;
  std::uint64_t malformed = 0;
};

constexpr const char* kTokenFields[4] = {"input_tokens", "output_tokens", "cache_creation_input_tokens",
                                         "cache_read_input_tokens"};

std::optional<std::int64_t> exit_code_prefix(std::string_view text) {
  // "Exit code 2\n..." (tool_result content) or "Error: Exit code 2..." (toolUseResult)
  if (text.substr(0, 7) == "Error: ") text.remove_prefix(7);
  if (text.substr(0, 10) != "Exit code ") return std::nullopt;
  text.remove_prefix(10);
  std::int64_t v = 0;
  bool neg = false;
  std::size_t i = 0;
  if (i < text.size() && text[i] == '-') {
    neg = true;
    ++i;
  }
  std::size_t start = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 12)
    v = v * 10 + (text[i++] - '0');
  if (i == start) return std::nullopt;
  return neg ? -v : v;
}

// The start of a tool_result's content (a string, or its first text block): only markers at
// its start are looked for ("Exit code N", "File created successfully at: <path>").
std::string_view result_head(const Value& content) {
  static constexpr std::size_t kHead = 4096;
  if (content.is_string()) return jsonl::view(content).substr(0, kHead);
  std::string_view out;
  jsonl::for_each_element(content, [&](const Value& block) {
    Value t = block["text"];
    if (!t.is_string()) return true;
    out = jsonl::view(t).substr(0, kHead);
    return false;
  });
  return out;
}

// What a thread reuses from one file to the next: the read buffer and the parser's.
struct Reading {
  LineReader reader;
  jsonl::Parser json;
};

// Parses one file into its own sessions (grouped by sessionId), so files can be read in
// parallel; Merger combines them in path order.
class Parser {
 public:
  explicit Parser(std::uint64_t seq_base) : seq_(seq_base) {}

  struct Orphan {
    std::string stem, path;
    std::uint64_t count;
  };
  std::map<std::string, Session> sessions_;
  std::vector<Orphan> orphan_malformed_;
  std::vector<Warning> warnings_;

  void file(const std::string& path, Reading& reading) {
    LineReader& reader = reading.reader;
    std::string error;
    if (!reader.open(path, error)) {
      warnings_.push_back({path, error});
      return;
    }
    std::string primary;
    current_ = nullptr;
    std::uint64_t malformed = 0;
    std::int64_t last_ts = 0;
    std::string_view line;
    while (true) {
      auto st = reader.next(line, error);
      if (st == LineReader::Status::end) break;
      if (st == LineReader::Status::error) {
        warnings_.push_back({path, error});
        break;
      }
      if (st == LineReader::Status::oversized) {
        ++malformed;
        continue;
      }
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      Value root = reading.json.parse(line, /*padded=*/true);
      if (!root.is_object()) {
        ++malformed;
        continue;
      }
      this->line(root, path, primary, last_ts);
    }
    if (malformed == 0) return;
    if (primary.empty()) {
      // Nothing readable: the file name is the session id for main files.
      std::string stem = std::filesystem::path(path).stem().string();
      orphan_malformed_.push_back({stem, path, malformed});
    } else {
      auto& s = sessions_[primary];
      s.malformed += malformed;
      s.files.insert(path);
    }
  }

 private:
  void line(const Value& root, const std::string& path, std::string& primary, std::int64_t& last_ts) {
    Value type, session_id, timestamp, sidechain, agent_id, cwd, message, tool_use_result, request_id;
    jsonl::for_each_member(root, [&](std::string_view k, const Value& v) {
      if (jsonl::key_is(k, "type"))
        type = v;
      else if (jsonl::key_is(k, "sessionId"))
        session_id = v;
      else if (jsonl::key_is(k, "timestamp"))
        timestamp = v;
      else if (jsonl::key_is(k, "isSidechain"))
        sidechain = v;
      else if (jsonl::key_is(k, "agentId"))
        agent_id = v;
      else if (jsonl::key_is(k, "cwd"))
        cwd = v;
      else if (jsonl::key_is(k, "message"))
        message = v;
      else if (jsonl::key_is(k, "toolUseResult"))
        tool_use_result = v;
      else if (jsonl::key_is(k, "requestId"))
        request_id = v;
      return true;
    });
    if (!session_id.is_string()) return;  // summary lines and the like
    // A file's lines almost all carry one session id: its session is looked up (and the file
    // added to it) only when the id changes.
    if (current_ == nullptr || !jsonl::equals(session_id, current_->id)) {
      std::string sid = jsonl::str(session_id);
      if (sid.empty()) return;
      if (primary.empty()) primary = sid;
      Session& found = sessions_[sid];
      if (found.id.empty()) found.id = sid;
      found.files.insert(path);
      current_ = &found;
    }
    Session& s = *current_;
    std::int64_t ts = last_ts;
    const std::optional<std::int64_t> at = timestamp_ms(timestamp);
    if (const auto& t = at) {
      ts = last_ts = *t;
      if (!s.min_ts || *t < *s.min_ts) s.min_ts = *t;
      if (!s.max_ts || *t > *s.max_ts) s.max_ts = *t;
    }
    std::uint64_t seq = ++seq_;
    bool side = jsonl::truthy(sidechain);
    // Decoded only where it is kept: most lines repeat the cwd the session already has.
    if (!jsonl::view(cwd).empty()) {
      int rank = side ? 1 : 2;
      if (rank > s.cwd_rank || (rank == s.cwd_rank && ts < s.cwd_ts)) {
        s.cwd = jsonl::str(cwd);
        s.cwd_rank = rank;
        s.cwd_ts = ts;
      }
    }
    if (side) {
      s.has_sidechain = true;
      if (agent_id.is_string()) s.subagents.push_back({ts, seq, jsonl::str(agent_id)});
    }
    if (jsonl::equals(type, "assistant")) {
      assistant(s, message, request_id, ts, at, seq, side, cwd);
    } else if (jsonl::equals(type, "user")) {
      user(s, message, tool_use_result);
    }
  }

  void assistant(Session& s, const Value& message, const Value& request_id, std::int64_t ts,
                 std::optional<std::int64_t> at, std::uint64_t seq, bool side, const Value& cwd) {
    Value model, id, content, usage;
    jsonl::for_each_member(message, [&](std::string_view k, const Value& v) {
      if (jsonl::key_is(k, "model"))
        model = v;
      else if (jsonl::key_is(k, "id"))
        id = v;
      else if (jsonl::key_is(k, "content"))
        content = v;
      else if (jsonl::key_is(k, "usage"))
        usage = v;
      return true;
    });
    bool synthetic = jsonl::equals(model, "<synthetic>");
    // The report lists each model at its earliest line: the same model again on a line no earlier
    // than the one kept before it changes nothing (most lines repeat the session's model).
    if (model.is_string() && !synthetic &&
        (s.models.empty() || s.models.back().value != jsonl::view(model) || ts < s.models.back().ts))
      s.models.push_back({ts, seq, jsonl::str(model)});
    if (usage.is_object() && !synthetic) {
      std::string key;
      bool dedupe = id.is_string() || request_id.is_string();
      if (dedupe) {
        key.reserve(jsonl::view(id).size() + 1 + jsonl::view(request_id).size());
        key.append(jsonl::view(id)).append(1, '\n').append(jsonl::view(request_id));
      }
      auto read = [&](std::array<std::int64_t, 4>& vals, bool add) {
        for (std::size_t i = 0; i < 4; ++i)
          if (auto n = jsonl::integer(usage[kTokenFields[i]])) vals[i] = add ? vals[i] + *n : *n;
      };
      if (!dedupe) {
        read(s.unkeyed, true);
        s.has_unkeyed = true;
      } else if (auto [it, fresh] = s.usages.try_emplace(std::move(key)); fresh) {
        read(it->second, false);
      }
    }
    jsonl::for_each_element(content, [&](const Value& block) {
      if (!jsonl::equals(block["type"], "tool_use")) return true;
      ToolCall c;
      c.ts = ts;
      c.at = at;
      c.seq = seq;
      c.sidechain = side;
      c.id = jsonl::str(block["id"]);
      c.name = jsonl::str(block["name"]);
      Value input = block["input"];
      const char* field = nullptr;
      if (c.name == "Read" || c.name == "Write" || c.name == "Edit" || c.name == "MultiEdit")
        field = "file_path";
      else if (c.name == "NotebookEdit")
        field = "notebook_path";
      else if (c.name == "Bash" || c.name == "PowerShell")
        field = "command";
      else if (c.name == "WebFetch")
        field = "url";
      else if (c.name == "WebSearch")
        field = "query";
      if (!field) return true;
      Value arg = input[field];
      if (!arg.is_string() && c.name == "NotebookEdit") arg = input["file_path"];
      if (!arg.is_string()) return true;
      c.arg = jsonl::str(arg);
      c.cwd = jsonl::str(cwd);
      s.calls.push_back(std::move(c));
      return true;
    });
  }

  void user(Session& s, const Value& message, const Value& tool_use_result) {
    Value content = message["content"];
    if (!content.is_array()) return;
    // toolUseResult and tool_result blocks hold whole files and outputs: one pass over each.
    std::string result_type;
    bool rci = false;
    std::optional<std::int64_t> tur_exit;
    if (tool_use_result.is_object()) {
      jsonl::for_each_member(tool_use_result, [&](std::string_view k, const Value& v) {
        if (jsonl::key_is(k, "type"))
          result_type = jsonl::str(v);
        else if (jsonl::key_is(k, "returnCodeInterpretation"))
          rci = !v.is_null();
        return true;
      });
    } else if (tool_use_result.is_string()) {
      tur_exit = exit_code_prefix(jsonl::str_prefix(tool_use_result, 64));
    }
    jsonl::for_each_element(content, [&](const Value& block) {
      Value type, id, is_error, body;
      jsonl::for_each_member(block, [&](std::string_view k, const Value& v) {
        if (jsonl::key_is(k, "type"))
          type = v;
        else if (jsonl::key_is(k, "tool_use_id"))
          id = v;
        else if (jsonl::key_is(k, "is_error"))
          is_error = v;
        else if (jsonl::key_is(k, "content"))
          body = v;
        return true;
      });
      if (!jsonl::equals(type, "tool_result")) return true;
      std::string tool_use_id = jsonl::str(id);
      if (tool_use_id.empty()) return true;
      ToolResult r;
      r.is_error = jsonl::truthy(is_error);
      const std::string_view text = result_head(body);
      r.exit_code = exit_code_prefix(text);
      if (!r.exit_code) r.exit_code = tur_exit;
      r.result_type = result_type;
      r.return_code_interpretation = rci;
      // Only read for a Write whose toolUseResult names no type and that did not fail: not
      // searched for where it cannot count (most results, some of them long outputs).
      if (result_type.empty() && !r.is_error) r.created_text = contains(text, "File created successfully");
      s.results.insert_or_assign(std::move(tool_use_id), std::move(r));  // the id moved, not copied
      return true;
    });
  }

  std::uint64_t seq_;
  Session* current_ = nullptr;  // the session of the file's last line (sessions_ keeps it in place)
};

void merge_session(Session& into, Session&& from) {
  if (into.id.empty() && into.files.empty()) {
    // The session's first file (most sessions have only one): taken whole. Its usages are
    // already unique (a file's Parser drops repeated keys), so each one counts.
    into = std::move(from);
    for (const auto& [key, vals] : into.usages) {
      into.has_usage = true;
      for (std::size_t i = 0; i < 4; ++i) into.tokens[i] += vals[i];
    }
    if (into.has_unkeyed) {
      into.has_usage = true;
      for (std::size_t i = 0; i < 4; ++i) into.tokens[i] += into.unkeyed[i];
    }
    return;
  }
  if (into.id.empty()) into.id = from.id;
  into.files.insert(from.files.begin(), from.files.end());
  if (from.min_ts && (!into.min_ts || *from.min_ts < *into.min_ts)) into.min_ts = from.min_ts;
  if (from.max_ts && (!into.max_ts || *from.max_ts > *into.max_ts)) into.max_ts = from.max_ts;
  if (from.cwd_rank > into.cwd_rank ||
      (from.cwd_rank == into.cwd_rank && from.cwd_rank > 0 && from.cwd_ts < into.cwd_ts)) {
    into.cwd = std::move(from.cwd);
    into.cwd_rank = from.cwd_rank;
    into.cwd_ts = from.cwd_ts;
  }
  for (auto& c : from.calls) into.calls.push_back(std::move(c));
  for (auto& [id, r] : from.results) into.results[id] = std::move(r);
  for (auto& m : from.models) into.models.push_back(std::move(m));
  for (auto& a : from.subagents) into.subagents.push_back(std::move(a));
  while (!from.usages.empty()) {
    auto moved = into.usages.insert(from.usages.extract(from.usages.begin()));
    if (!moved.inserted) continue;  // counted from an earlier file
    into.has_usage = true;
    for (std::size_t i = 0; i < 4; ++i) into.tokens[i] += moved.position->second[i];
  }
  if (from.has_unkeyed) {
    into.has_usage = true;
    for (std::size_t i = 0; i < 4; ++i) into.tokens[i] += from.unkeyed[i];
  }
  into.has_sidechain = into.has_sidechain || from.has_sidechain;
  into.malformed += from.malformed;
}

class Merger {
 public:
  explicit Merger(ParseResult& r) : result_(r) {}

  void add(Parser&& p) {
    for (auto& w : p.warnings_) result_.warnings.push_back(std::move(w));
    for (auto& o : p.orphan_malformed_) orphan_malformed_.push_back(std::move(o));
    for (auto& [id, session] : p.sessions_) merge_session(sessions_[id], std::move(session));
  }

  void finish(Window w, Form form, unsigned threads) {
    for (auto& [stem, path, count] : orphan_malformed_) {
      auto it = sessions_.find(stem);
      if (it != sessions_.end()) {
        it->second.malformed += count;
        it->second.files.insert(path);
      } else {
        result_.warnings.push_back({path, "No readable Claude Code line in " + path + " (" +
                                              std::to_string(count) +
                                              " malformed line(s)); the file was skipped."});
      }
    }
    // Sessions are built apart from each other: on as many threads as the files were read.
    std::vector<Session*> order;
    order.reserve(sessions_.size());
    for (auto& [id, s] : sessions_) order.push_back(&s);
    std::vector<Finished> built(order.size());
    std::vector<std::exception_ptr> failed(order.size());
    parallel_for(order.size(), threads, [&](std::size_t i) {
      try {
        built[i] = finished(build(*order[i]), form);
        // Freed here, on the worker threads, rather than all on one when the map goes.
        *order[i] = Session{};
      } catch (...) {
        failed[i] = std::current_exception();
      }
    });
    for (const auto& e : failed)
      if (e) std::rethrow_exception(e);
    finish_sessions(std::move(built), w, form, result_);
  }

 private:
  static nlohmann::json build(Session& s) {
    std::stable_sort(s.calls.begin(), s.calls.end(), [](const ToolCall& a, const ToolCall& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.seq < b.seq;
    });
    auto by_time = [](const Ordered& a, const Ordered& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.seq < b.seq;
    };
    std::stable_sort(s.models.begin(), s.models.end(), by_time);
    std::stable_sort(s.subagents.begin(), s.subagents.end(), by_time);

    Activity all, side;
    for (const auto& c : s.calls) {
      auto rit = s.results.find(c.id);
      const ToolResult* r = rit == s.results.end() ? nullptr : &rit->second;
      bool failed = r && r->is_error;
      auto apply = [&](Activity& a) {
        if (c.name == "Read") {
          if (!failed) a.read(resolve_path(c.cwd, c.arg));
        } else if (c.name == "Write") {
          if (failed) return;
          std::string action = "modify";
          if (r && (r->result_type == "create" || (r->result_type.empty() && r->created_text)))
            action = "create";
          a.change(resolve_path(c.cwd, c.arg), c.name, action, c.at);
        } else if (c.name == "Edit" || c.name == "MultiEdit" || c.name == "NotebookEdit") {
          if (!failed) a.change(resolve_path(c.cwd, c.arg), c.name, "modify", c.at);
        } else if (c.name == "Bash" || c.name == "PowerShell") {
          Command cmd;
          cmd.command = c.arg;
          cmd.cwd = c.cwd;
          cmd.tool = c.name;
          cmd.at = c.at;
          if (!r) {
            cmd.status = "unknown";
          } else if (r->is_error) {
            cmd.status = "error";
            cmd.exit_code = r->exit_code;
          } else {
            cmd.status = "success";
            if (!r->return_code_interpretation) cmd.exit_code = 0;
          }
          a.command(std::move(cmd));
        } else if (c.name == "WebFetch") {
          if (!failed) a.url(c.arg);
        } else if (c.name == "WebSearch") {
          if (!failed) a.search(c.arg);
        }
      };
      apply(all);
      if (c.sidechain) apply(side);
    }

    nlohmann::json j;
    j["session_id"] = s.id;
    j["parent_session_id"] = nullptr;
    j["source_files"] = nlohmann::json(std::vector<std::string>(s.files.begin(), s.files.end()));
    j["cwd"] = s.cwd.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.cwd);
    UniqueList models;
    for (const auto& m : s.models) models.add(m.value);
    j["models"] = models.to_json();
    j["started_at"] = s.min_ts ? nlohmann::json(format_iso8601_ms(*s.min_ts)) : nlohmann::json(nullptr);
    j["ended_at"] = s.max_ts ? nlohmann::json(format_iso8601_ms(*s.max_ts)) : nlohmann::json(nullptr);
    all.write(j);
    if (s.has_usage) {
      nlohmann::json u;
      for (int i = 0; i < 4; ++i) u[kTokenFields[i]] = s.tokens[i];
      j["token_usage"] = std::move(u);
    } else {
      j["token_usage"] = nullptr;
    }
    if (s.has_sidechain) {
      nlohmann::json sc;
      UniqueList ids;
      for (const auto& a : s.subagents) ids.add(a.value);
      sc["subagent_ids"] = ids.to_json();
      side.write(sc, Activity::Times::without);
      j["sidechain"] = std::move(sc);
    }
    j["malformed_lines"] = s.malformed;
    return j;
  }

  ParseResult& result_;
  std::map<std::string, Session> sessions_;
  std::vector<Parser::Orphan> orphan_malformed_;
};

}  // namespace

ParseResult parse(const std::vector<std::string>& paths, Window w, Form form) {
  ParseResult result;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    if (is_directory(p)) {
      // A config dir (~/.claude) holds other JSONL (history.jsonl); only projects/ has sessions.
      std::string root = is_directory(p + "/projects") ? p + "/projects" : p;
      auto found = list_files(root, ".jsonl", result.warnings);
      files.insert(files.end(), found.begin(), found.end());
    } else if (is_regular_file(p)) {
      files.push_back(p);
    } else if (path_exists(p)) {
      result.warnings.push_back(
          {p, p + " is not a regular file or directory; pass a Claude Code projects dir or a .jsonl file."});
    } else {
      result.warnings.push_back({p, "Claude Code transcript path " + p +
                                        " does not exist; check the path (default ~/.claude/projects)."});
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  std::vector<std::optional<Parser>> parsed(files.size());
  const unsigned threads = worker_count(files);
  parallel_for_with<Reading>(files.size(), threads, [&](Reading& reading, std::size_t i) {
    // Sequence numbers order calls with equal timestamps by file, then line.
    parsed[i].emplace(static_cast<std::uint64_t>(i) << 40);
    try {
      parsed[i]->file(files[i], reading);
    } catch (const std::exception& e) {
      parsed[i].emplace(static_cast<std::uint64_t>(i) << 40);
      parsed[i]->warnings_.push_back({files[i], "Reading " + files[i] + " failed: " + e.what()});
    }
  });
  Merger merger(result);
  for (auto& p : parsed) merger.add(std::move(*p));
  merger.finish(w, form, threads);
  return result;
}

std::vector<std::string> roots(const std::string& home) {
  std::vector<std::string> out{home + "/.claude/projects"};
  if (is_directory(home + "/.config/claude/projects")) out.push_back(home + "/.config/claude/projects");
  return out;
}

}  // namespace parallex::transcripts::claude_code
