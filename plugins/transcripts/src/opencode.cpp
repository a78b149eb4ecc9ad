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
#include "common/util.hpp"

namespace parallex::transcripts::opencode {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct Message {
  std::string id;
  json data;  // null when its file was malformed
  std::vector<json> parts;
};

struct Session {
  std::string id, parent, directory;
  std::optional<std::int64_t> created, updated;
  std::vector<Message> messages;
  std::set<std::string> files;
  std::uint64_t malformed = 0;
};

std::string str_of(const json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<std::int64_t> int_of(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  if (it->is_number_float()) {
    // Only a value an int64 can hold: converting any other double is undefined.
    const double d = it->get<double>();
    if (!(d > -9.2e18 && d < 9.2e18)) return std::nullopt;
    return static_cast<std::int64_t>(d);
  }
  if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    return std::nullopt;
  return it->get<std::int64_t>();
}

const json& member(const json& j, const char* key) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}

// A JSON object from a file, or discarded when the file is not one (truncated writes).
json read_json_file(const std::string& path, bool& readable) {
  std::ifstream in(path, std::ios::binary);
  readable = static_cast<bool>(in);
  if (!readable) return json(json::value_t::discarded);
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, false);
  if (!j.is_object()) return json(json::value_t::discarded);
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
        json info = read_json_file(file, readable);
        std::string id = info.is_discarded() ? stem_of(file) : str_of(info, "id");
        if (id.empty()) id = stem_of(file);
        Session& s = found[id];
        s.id = id;
        s.files.insert(file);
        if (!readable) {
          result_.warnings.push_back({file, "Cannot read " + file + "; check its permissions."});
          continue;
        }
        if (info.is_discarded()) {
          ++s.malformed;
          continue;
        }
        s.parent = str_of(info, "parentID");
        s.directory = str_of(info, "directory");
        const json& time = member(info, "time");
        s.created = int_of(time, "created");
        s.updated = int_of(time, "updated");
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
        json data = read_json_file(file, readable);
        Message m;
        m.id = data.is_discarded() ? stem_of(file) : str_of(data, "id");
        if (m.id.empty()) m.id = stem_of(file);
        if (!readable) {
          result_.warnings.push_back({file, "Cannot read " + file + "; check its permissions."});
        } else if (data.is_discarded()) {
          ++s.malformed;
        } else {
          m.data = std::move(data);
        }
        for (const auto& pfile : sorted_children(root + "/part/" + m.id, false)) {
          if (pfile.size() < 5 || pfile.compare(pfile.size() - 5, 5, ".json") != 0) continue;
          s.files.insert(pfile);
          bool preadable = true;
          json part = read_json_file(pfile, preadable);
          if (!preadable) {
            result_.warnings.push_back({pfile, "Cannot read " + pfile + "; check its permissions."});
          } else if (part.is_discarded()) {
            ++s.malformed;
          } else {
            m.parts.push_back(std::move(part));
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
                       json data = json::parse(text(st, 2), nullptr, false);
                       if (data.is_object()) {
                         data["id"] = m.id;
                         data["sessionID"] = sid;
                         m.data = std::move(data);
                       } else {
                         ++it->second.malformed;
                       }
                       message_session[m.id] = sid;
                       it->second.messages.push_back(std::move(m));
                     });
    std::map<std::string, std::vector<json>> parts;
    ok = ok && query(db, path, "SELECT id, message_id, data FROM part ORDER BY message_id, id",
                     [&](sqlite3_stmt* st) {
                       std::string mid = text(st, 1);
                       auto ms = message_session.find(mid);
                       if (ms == message_session.end()) return;
                       json data = json::parse(text(st, 2), nullptr, false);
                       if (!data.is_object()) {
                         ++found[ms->second].malformed;
                         return;
                       }
                       data["id"] = text(st, 0);
                       data["messageID"] = mid;
                       parts[mid].push_back(std::move(data));
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

  void finish(Window w) {
    for (auto& s : sessions_) result_.sessions.push_back(build(s));
    finish_sessions(result_.sessions, w);
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
    auto add_tokens = [&](const json& t) {
      if (!t.is_object()) return;
      has_tokens = true;
      tok[0] += int_of(t, "input").value_or(0);
      tok[1] += int_of(t, "output").value_or(0);
      tok[2] += int_of(t, "reasoning").value_or(0);
      const json& cache = member(t, "cache");
      tok[3] += int_of(cache, "read").value_or(0);
      tok[4] += int_of(cache, "write").value_or(0);
    };
    for (const auto& m : s.messages) {
      const json& d = m.data;
      std::string cwd = str_of(member(d, "path"), "cwd");
      if (cwd.empty()) cwd = s.directory;
      if (str_of(d, "role") == "assistant") {
        std::string model = str_of(d, "modelID");
        if (model.empty()) model = str_of(member(d, "model"), "modelID");
        models.add(model);
        const json& c = member(d, "cost");
        if (c.is_number()) {
          cost += c.get<double>();
          has_tokens = true;
        }
      }
      bool step_tokens = false;
      for (const auto& p : m.parts) {
        std::string type = str_of(p, "type");
        if (type == "step-finish" && member(p, "tokens").is_object()) {
          add_tokens(member(p, "tokens"));
          step_tokens = true;
        } else if (type == "tool") {
          tool(a, p, cwd);
        }
      }
      if (!step_tokens) add_tokens(member(d, "tokens"));
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

  static void tool(Activity& a, const json& part, const std::string& cwd) {
    std::string name = str_of(part, "tool");
    std::transform(name.begin(), name.end(), name.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
    const json& state = member(part, "state");
    std::string status = str_of(state, "status");
    const json& input = member(state, "input");
    const json& meta = member(state, "metadata");
    bool failed = status == "error";
    const std::optional<std::int64_t> at = int_of(member(state, "time"), "start");
    if (name == "read") {
      std::string p = str_of(input, "filePath");
      if (!failed && !p.empty()) a.read(resolve_path(cwd, p));
    } else if (name == "write") {
      std::string p = str_of(input, "filePath");
      const json& exists = member(meta, "exists");
      if (!failed && !p.empty())
        a.change(resolve_path(cwd, p), name, exists.is_boolean() && !exists.get<bool>() ? "create" : "modify",
                 at);
    } else if (name == "edit" || name == "multiedit") {
      std::string p = str_of(input, "filePath");
      if (!failed && !p.empty()) a.change(resolve_path(cwd, p), name, "modify", at);
    } else if (name == "patch" || name == "apply_patch") {
      if (failed) return;
      std::string text = str_of(input, "patchText");
      if (text.empty()) text = str_of(input, "patch");
      for (const auto& op : parse_apply_patch(text))
        a.change(resolve_path(cwd, op.path), name, op.action, at,
                 op.from.empty() ? "" : resolve_path(cwd, op.from));
    } else if (name == "bash") {
      Command c;
      c.command = str_of(input, "command");
      if (c.command.empty()) return;
      std::string workdir = str_of(input, "workdir");
      c.cwd = workdir.empty() ? cwd : resolve_path(cwd, workdir);
      c.tool = name;
      c.at = at;
      if (failed) {
        c.status = "error";
      } else if (status == "completed") {
        if (auto code = int_of(meta, "exit")) {
          c.exit_code = code;
          c.status = *code == 0 ? "success" : "error";
        }
      }
      a.command(std::move(c));
    } else if (name == "webfetch") {
      std::string u = str_of(input, "url");
      if (!failed && !u.empty()) a.url(u);
    } else if (name == "websearch") {
      std::string q = str_of(input, "query");
      if (!failed && !q.empty()) a.search(q);
    }
  }

  ParseResult& result_;
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

ParseResult parse(const std::vector<std::string>& paths, Window w) {
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
  loader.finish(w);
  return result;
}

std::vector<std::string> roots(const std::string& home) {
  return {home + "/.local/share/opencode"};
}

}  // namespace parallex::transcripts::opencode
