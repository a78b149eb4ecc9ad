// opencode: since 1.2 an SQLite store ($XDG_DATA_HOME/opencode/opencode.db), before that
// pretty-printed JSON files under storage/. Both hold the same objects: a session, its
// messages, and each message's parts (tool calls live in parts of type "tool").
//
// SQLite tables assumed (opencode 1.18; columns read by name, extra ones ignored):
//   session(id, project_id, parent_id, slug, directory, title, version, time_created, time_updated, ...)
//   message(id, session_id, time_created, time_updated, data)   -- data: message JSON without id/sessionID
//   part(id, message_id, session_id, time_created, time_updated, data) -- data: part JSON without ids
#include "parallex_transcripts/opencode.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/apply_patch.hpp"
#include "common/json_dom.hpp"
#include "common/util.hpp"

namespace parallex::transcripts::opencode {
namespace {

using jsonl::Value;
using nlohmann::json;
namespace fs = std::filesystem;

// A message's or part's `tokens`.
struct Tokens {
  bool present = false;  // an object was there (even an empty one)
  std::int64_t input = 0, output = 0, reasoning = 0, cache_read = 0, cache_write = 0;
};

// What a part says, read when it is loaded: its JSON is not kept.
struct Part {
  std::string type, tool, status;
  // state.input
  std::string file_path, patch_text, patch, command, workdir, url, query;
  std::optional<bool> exists;                    // state.metadata.exists
  std::optional<std::int64_t> exit_code, start;  // state.metadata.exit, state.time.start
  Tokens tokens;
};

struct Message {
  std::string id;
  // From the message's JSON (empty when its file was malformed).
  std::string role, model, cwd;
  std::optional<double> cost;
  Tokens tokens;
  std::vector<Part> parts;
};

struct Session {
  std::string id, parent, directory;
  std::optional<std::int64_t> created, updated;
  std::vector<Message> messages;
  std::set<std::string> files;
  std::uint64_t malformed = 0;
};

std::optional<std::int64_t> int_of(const Value& v) {
  return jsonl::integer(v);
}

Tokens tokens_of(const Value& t) {
  Tokens out;
  if (!t.is_object()) return out;
  out.present = true;
  out.input = int_of(t["input"]).value_or(0);
  out.output = int_of(t["output"]).value_or(0);
  out.reasoning = int_of(t["reasoning"]).value_or(0);
  out.cache_read = int_of(t["cache"]["read"]).value_or(0);
  out.cache_write = int_of(t["cache"]["write"]).value_or(0);
  return out;
}

void read_message(const Value& d, Message& m) {
  m.role = jsonl::str(d["role"]);
  m.model = jsonl::str(d["modelID"]);
  if (m.model.empty()) m.model = jsonl::str(d["model"]["modelID"]);
  m.cwd = jsonl::str(d["path"]["cwd"]);
  double cost = 0;
  if (d["cost"].get(cost) == simdjson::SUCCESS) m.cost = cost;
  m.tokens = tokens_of(d["tokens"]);
}

Part read_part(const Value& d) {
  Part p;
  p.type = jsonl::str(d["type"]);
  p.tokens = tokens_of(d["tokens"]);
  if (p.type != "tool") return p;
  p.tool = jsonl::str(d["tool"]);
  const Value state = d["state"];
  p.status = jsonl::str(state["status"]);
  const Value input = state["input"];
  p.file_path = jsonl::str(input["filePath"]);
  p.patch_text = jsonl::str(input["patchText"]);
  p.patch = jsonl::str(input["patch"]);
  p.command = jsonl::str(input["command"]);
  p.workdir = jsonl::str(input["workdir"]);
  p.url = jsonl::str(input["url"]);
  p.query = jsonl::str(input["query"]);
  bool exists = false;
  if (state["metadata"]["exists"].get(exists) == simdjson::SUCCESS) p.exists = exists;
  p.exit_code = int_of(state["metadata"]["exit"]);
  p.start = int_of(state["time"]["start"]);
  return p;
}

// A JSON object from a file (an error value when the file is not one: truncated writes).
Value read_json_file(const std::string& path, jsonl::Parser& parser, bool& readable) {
  std::ifstream in(path, std::ios::binary);
  readable = static_cast<bool>(in);
  if (!readable) return simdjson::IO_ERROR;
  std::stringstream ss;
  ss << in.rdbuf();
  Value j = parser.parse(ss.str());
  if (!j.is_object()) return simdjson::INCORRECT_TYPE;
  return j;
}

std::vector<std::string> sorted_children(const std::string& dir, bool dirs) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  if (ec) return out;
  for (; it != end; it.increment(ec)) {
    std::error_code fec;
    if (dirs ? it->is_directory(fec) : it->is_regular_file(fec)) out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string stem_of(const std::string& path) {
  return fs::path(path).stem().string();
}

class Loader {
 public:
  explicit Loader(ParseResult& r) : result_(r) {}

  void storage(const std::string& root) {
    std::map<std::string, Session> found;
    for (const auto& project : sorted_children(root + "/session", true)) {
      for (const auto& file : sorted_children(project, false)) {
        if (file.size() < 5 || file.compare(file.size() - 5, 5, ".json") != 0) continue;
        bool readable = true;
        const Value info = read_json_file(file, parser_, readable);
        std::string id = jsonl::str(info["id"]);
        if (id.empty()) id = stem_of(file);
        Session& s = found[id];
        s.id = id;
        s.files.insert(file);
        if (!readable) {
          result_.warnings.push_back({file, "Cannot read " + file + "; check its permissions."});
          continue;
        }
        if (info.error()) {
          ++s.malformed;
          continue;
        }
        s.parent = jsonl::str(info["parentID"]);
        s.directory = jsonl::str(info["directory"]);
        s.created = int_of(info["time"]["created"]);
        s.updated = int_of(info["time"]["updated"]);
      }
    }
    // Messages of sessions whose session file is missing are still activity.
    for (const auto& dir : sorted_children(root + "/message", true)) {
      std::string sid = fs::path(dir).filename().string();
      if (!found.count(sid)) found[sid].id = sid;
    }
    for (auto& [sid, s] : found) {
      for (const auto& file : sorted_children(root + "/message/" + sid, false)) {
        if (file.size() < 5 || file.compare(file.size() - 5, 5, ".json") != 0) continue;
        s.files.insert(file);
        bool readable = true;
        const Value data = read_json_file(file, parser_, readable);
        Message m;
        m.id = jsonl::str(data["id"]);
        if (m.id.empty()) m.id = stem_of(file);
        if (!readable) {
          result_.warnings.push_back({file, "Cannot read " + file + "; check its permissions."});
        } else if (data.error()) {
          ++s.malformed;
        } else {
          read_message(data, m);  // before the parser reads the parts
        }
        for (const auto& pfile : sorted_children(root + "/part/" + m.id, false)) {
          if (pfile.size() < 5 || pfile.compare(pfile.size() - 5, 5, ".json") != 0) continue;
          s.files.insert(pfile);
          bool preadable = true;
          const Value part = read_json_file(pfile, parser_, preadable);
          if (!preadable) {
            result_.warnings.push_back({pfile, "Cannot read " + pfile + "; check its permissions."});
          } else if (part.error()) {
            ++s.malformed;
          } else {
            m.parts.push_back(read_part(part));
          }
        }
        s.messages.push_back(std::move(m));
      }
      add(std::move(s));
    }
  }

  void database(const std::string& path) {
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    if (rc != SQLITE_OK) {
      db_warning(path, db);
      sqlite3_close(db);
      return;
    }
    sqlite3_busy_timeout(db, 1500);
    std::map<std::string, Session> found;
    std::map<std::string, std::string> message_session;
    bool ok = query(db, path, "SELECT * FROM session", [&](sqlite3_stmt* st) {
      Session s;
      for (int i = 0, n = sqlite3_column_count(st); i < n; ++i) {
        std::string col = sqlite3_column_name(st, i);
        if (col == "id")
          s.id = text(st, i);
        else if (col == "parent_id")
          s.parent = text(st, i);
        else if (col == "directory")
          s.directory = text(st, i);
        else if (col == "time_created" && sqlite3_column_type(st, i) != SQLITE_NULL)
          s.created = sqlite3_column_int64(st, i);
        else if (col == "time_updated" && sqlite3_column_type(st, i) != SQLITE_NULL)
          s.updated = sqlite3_column_int64(st, i);
      }
      if (s.id.empty()) return;
      s.files.insert(path);
      std::string id = s.id;
      found[id] = std::move(s);
    });
    ok = ok && query(db, path, "SELECT id, session_id, data FROM message ORDER BY session_id, id",
                     [&](sqlite3_stmt* st) {
                       std::string sid = text(st, 1);
                       auto it = found.find(sid);
                       if (it == found.end()) return;
                       Message m;
                       m.id = text(st, 0);
                       const Value data = parser_.parse(text(st, 2));
                       if (data.is_object()) {
                         read_message(data, m);
                       } else {
                         ++it->second.malformed;
                       }
                       message_session[m.id] = sid;
                       it->second.messages.push_back(std::move(m));
                     });
    std::map<std::string, std::vector<Part>> parts;
    ok = ok && query(db, path, "SELECT id, message_id, data FROM part ORDER BY message_id, id",
                     [&](sqlite3_stmt* st) {
                       std::string mid = text(st, 1);
                       auto ms = message_session.find(mid);
                       if (ms == message_session.end()) return;
                       const Value data = parser_.parse(text(st, 2));
                       if (!data.is_object()) {
                         ++found[ms->second].malformed;
                         return;
                       }
                       parts[mid].push_back(read_part(data));
                     });
    sqlite3_close(db);
    if (!ok) return;
    for (auto& [sid, s] : found) {
      for (auto& m : s.messages) {
        auto it = parts.find(m.id);
        if (it != parts.end()) m.parts = std::move(it->second);
      }
      add(std::move(s));
    }
  }

  void finish(Window w, Form form) {
    std::vector<Finished> built;
    for (auto& s : sessions_) built.push_back(finished(build(s), form));
    finish_sessions(std::move(built), w, form, result_);
  }

 private:
  static std::string text(sqlite3_stmt* st, int i) {
    const unsigned char* t = sqlite3_column_text(st, i);
    int n = sqlite3_column_bytes(st, i);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<std::size_t>(n)) : std::string();
  }

  void db_warning(const std::string& path, sqlite3* db) {
    int code = db ? sqlite3_errcode(db) : SQLITE_NOMEM;
    std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    std::string msg;
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
      msg = "opencode database " + path + " is locked by another process (" + why +
            "); its sessions are missing from this report. Try again when opencode is idle.";
    else if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
      msg = "opencode database " + path + " is corrupt or not an SQLite database (" + why +
            "); its sessions are missing from this report.";
    else
      msg = "Cannot read opencode database " + path + " (" + why +
            "); its sessions are missing from this report.";
    result_.warnings.push_back({path, msg});
  }

  template <class F>
  bool query(sqlite3* db, const std::string& path, const char* sql, F&& row) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
      db_warning(path, db);
      return false;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st);
    bool ok = rc == SQLITE_DONE;
    if (!ok) db_warning(path, db);
    sqlite3_finalize(st);
    return ok;
  }

  void add(Session s) {
    if (!seen_.insert(s.id).second) return;  // the database wins over a leftover JSON copy
    sessions_.push_back(std::move(s));
  }

  json build(const Session& s) const {
    Activity a;
    UniqueList models;
    std::int64_t tok[5] = {0, 0, 0, 0, 0};
    double cost = 0;
    bool has_tokens = false;
    auto add_tokens = [&](const Tokens& t) {
      if (!t.present) return;
      has_tokens = true;
      tok[0] += t.input;
      tok[1] += t.output;
      tok[2] += t.reasoning;
      tok[3] += t.cache_read;
      tok[4] += t.cache_write;
    };
    for (const auto& m : s.messages) {
      const std::string& cwd = m.cwd.empty() ? s.directory : m.cwd;
      if (m.role == "assistant") {
        models.add(m.model);
        if (m.cost) {
          cost += *m.cost;
          has_tokens = true;
        }
      }
      bool step_tokens = false;
      for (const auto& p : m.parts) {
        if (p.type == "step-finish" && p.tokens.present) {
          add_tokens(p.tokens);
          step_tokens = true;
        } else if (p.type == "tool") {
          tool(a, p, cwd);
        }
      }
      if (!step_tokens) add_tokens(m.tokens);
    }
    json j;
    j["session_id"] = s.id;
    j["parent_session_id"] = s.parent.empty() ? json(nullptr) : json(s.parent);
    j["source_files"] = json(std::vector<std::string>(s.files.begin(), s.files.end()));
    j["cwd"] = s.directory.empty() ? json(nullptr) : json(s.directory);
    j["models"] = models.to_json();
    j["started_at"] = s.created ? json(format_iso8601_ms(*s.created)) : json(nullptr);
    j["ended_at"] = s.updated ? json(format_iso8601_ms(*s.updated)) : json(nullptr);
    a.write(j);
    if (has_tokens) {
      j["token_usage"] = {{"input", tok[0]},      {"output", tok[1]},      {"reasoning", tok[2]},
                          {"cache_read", tok[3]}, {"cache_write", tok[4]}, {"cost", round_cost(cost)}};
    } else {
      j["token_usage"] = nullptr;
    }
    j["malformed_lines"] = s.malformed;
    return j;
  }

  static void tool(Activity& a, const Part& part, const std::string& cwd) {
    std::string name = part.tool;
    std::transform(name.begin(), name.end(), name.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
    const std::string& status = part.status;
    bool failed = status == "error";
    const std::optional<std::int64_t> at = part.start;
    if (name == "read") {
      const std::string& p = part.file_path;
      if (!failed && !p.empty()) a.read(resolve_path(cwd, p));
    } else if (name == "write") {
      const std::string& p = part.file_path;
      if (!failed && !p.empty())
        a.change(resolve_path(cwd, p), name, part.exists == false ? "create" : "modify", at);
    } else if (name == "edit" || name == "multiedit") {
      const std::string& p = part.file_path;
      if (!failed && !p.empty()) a.change(resolve_path(cwd, p), name, "modify", at);
    } else if (name == "patch" || name == "apply_patch") {
      if (failed) return;
      const std::string& text = part.patch_text.empty() ? part.patch : part.patch_text;
      for (const auto& op : parse_apply_patch(text))
        a.change(resolve_path(cwd, op.path), name, op.action, at,
                 op.from.empty() ? "" : resolve_path(cwd, op.from));
    } else if (name == "bash") {
      Command c;
      c.command = part.command;
      if (c.command.empty()) return;
      const std::string& workdir = part.workdir;
      c.cwd = workdir.empty() ? cwd : resolve_path(cwd, workdir);
      c.tool = name;
      c.at = at;
      if (failed) {
        c.status = "error";
      } else if (status == "completed") {
        if (auto code = part.exit_code) {
          c.exit_code = code;
          c.status = *code == 0 ? "success" : "error";
        }
      }
      a.command(std::move(c));
    } else if (name == "webfetch") {
      const std::string& u = part.url;
      if (!failed && !u.empty()) a.url(u);
    } else if (name == "websearch") {
      const std::string& q = part.query;
      if (!failed && !q.empty()) a.search(q);
    }
  }

  ParseResult& result_;
  jsonl::Parser parser_;  // each file's or row's JSON, read into a Message or Part at once
  std::vector<Session> sessions_;
  std::set<std::string> seen_;
};

bool looks_like_sqlite(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  in.read(head, sizeof head);
  return in.gcount() == 16 && std::string_view(head, 15) == "SQLite format 3";
}

}  // namespace

ParseResult parse(const std::vector<std::string>& paths, Window w, Form form) {
  ParseResult result;
  Loader loader(result);
  std::vector<std::string> dbs, storages;
  for (const auto& p : paths) {
    if (is_directory(p)) {
      bool any = false;
      if (is_regular_file(p + "/opencode.db")) {
        dbs.push_back(p + "/opencode.db");
        any = true;
      }
      if (is_directory(p + "/storage/session") || is_directory(p + "/storage/message")) {
        storages.push_back(p + "/storage");
        any = true;
      } else if (is_directory(p + "/session") || is_directory(p + "/message")) {
        storages.push_back(p);
        any = true;
      }
      if (!any)
        result.warnings.push_back({p, "No opencode data (opencode.db or storage/) in " + p +
                                          "; pass opencode's data dir (default ~/.local/share/opencode)."});
    } else if (is_regular_file(p)) {
      if (p.size() >= 3 && p.compare(p.size() - 3, 3, ".db") == 0)
        dbs.push_back(p);
      else if (looks_like_sqlite(p))
        dbs.push_back(p);
      else
        result.warnings.push_back(
            {p, p + " is not an opencode database; pass opencode.db or opencode's data dir."});
    } else {
      result.warnings.push_back(
          {p, "opencode transcript path " + p +
                  " does not exist; check the path (default ~/.local/share/opencode)."});
    }
  }
  std::sort(dbs.begin(), dbs.end());
  dbs.erase(std::unique(dbs.begin(), dbs.end()), dbs.end());
  std::sort(storages.begin(), storages.end());
  storages.erase(std::unique(storages.begin(), storages.end()), storages.end());
  for (const auto& db : dbs) loader.database(db);
  for (const auto& s : storages) loader.storage(s);
  loader.finish(w, form);
  return result;
}

std::vector<std::string> roots(const std::string& home) {
  return {home + "/.local/share/opencode"};
}

}  // namespace parallex::transcripts::opencode
