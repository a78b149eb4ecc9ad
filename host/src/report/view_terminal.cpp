#include <cstdio>
#include <vector>

#include "common/json_io.hpp"
#include "common/shown.hpp"
#include "report/time_text.hpp"
#include "report/views.hpp"

namespace px::report {

namespace {

struct Style {
  bool on;
  std::string operator()(const char* code, const std::string& text) const {
    return on ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
  }
};

// Columns on a terminal: UTF-8 continuation bytes and our own colour codes
// (ESC [ ... m, from Style) take none, so coloured cells line up.
std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0x1b && i + 1 < s.size() && s[i + 1] == '[') {
      i += 2;
      while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e)) ++i;
      continue;
    }
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

// Column widths from the cells, at most kMaxColumn; the last column is never padded. A
// cell wider than its column is shown whole, and the rest of its row goes on the next
// line, under its own columns: every column stays in line, and nothing is cut.
// `notes` (when given, one per row): a line under the row, from its last
// column on ("changed: a.c, b.c" under a command); empty: none.
constexpr std::size_t kMaxColumn = 48;
void table(std::string& out, const std::vector<std::vector<std::string>>& rows, const Style& style,
           const std::vector<std::string>& header, const std::vector<std::string>& notes = {}) {
  if (rows.empty()) {
    out += "  " + style("2", "(none)") + "\n";
    return;
  }
  std::vector<std::size_t> width(header.size(), 0);
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = display_width(header[c]);
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::min<std::size_t>(std::max(width[c], display_width(row[c])), kMaxColumn);
  auto line = [&](const std::vector<std::string>& cells, bool head) {
    std::string l = "  ";
    std::size_t at = 0;  // where the next column starts, after the indent
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool last = c + 1 == cells.size();
      const std::size_t cell_width = display_width(cells[c]);
      l += head ? style("1", cells[c]) : cells[c];
      if (last) break;
      at += width[c] + 2;
      if (cell_width > width[c]) {
        out += l + "\n";
        l = std::string(2 + at, ' ');
      } else {
        l += std::string(width[c] - cell_width + 2, ' ');
      }
    }
    out += l + "\n";
  };
  std::size_t last_column = 2;
  for (std::size_t c = 0; c + 1 < header.size(); ++c) last_column += width[c] + 2;
  line(header, true);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    line(rows[r], false);
    if (r < notes.size() && !notes[r].empty()) out += std::string(last_column, ' ') + notes[r] + "\n";
  }
}

// A command's or file change's time ("at") as HH:MM:SS of its ISO UTC time;
// "-" when its session gave none.
std::string clock_time(const Json& item) {
  const std::string at = str(item, "at");
  return at.size() >= 19 && at[10] == 'T' ? at.substr(11, 8) : "-";
}

void heading(std::string& out, const Style& style, const std::string& title, std::size_t count) {
  out += "\n" + style("1;36", title) + " (" + std::to_string(count) + ")\n";
}

}  // namespace

std::string str(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : to_json_text(*it);
}

std::string human_bytes(std::uint64_t bytes) {
  char buf[32];
  if (bytes < 1024)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else if (bytes < 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  else if (bytes < 1024ULL * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / 1048576.0);
  else
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / 1073741824.0);
  return buf;
}

std::string exit_text(const Json& e) {
  if (e.is_number_integer()) return std::to_string(e.get<long long>());
  return "unknown";
}

std::string render_terminal(const Json& report, bool colour) {
  const Style style{colour};
  std::string out;
  const auto& problems = report.value("problems", Json::array());
  for (const auto& p : problems) out += style("1;31", "problem: ") + shown(p.get<std::string>()) + "\n";
  const auto& runs = report.value("runs", Json::array());
  for (const auto& run : runs) {
    out += "\n" + style("1", "Run " + shown(str(run, "id"))) +
           (str(run, "agent").empty() ? "" : "  agent " + shown(str(run, "agent"))) + "\n";
    const auto row = [&](const char* label, const std::string& value) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "  %-10s", label);
      out += style("2", buf) + value + "\n";
    };
    row("command", shown(str(run, "command")));
    row("harness", shown(str(run, "harness").empty() ? "-" : str(run, "harness")));
    row("folder", shown(str(run, "run_folder")));
    std::string times = shown(str(run, "started_at")) + " -> " +
                        (str(run, "ended_at").empty() ? "(no end)" : shown(str(run, "ended_at")));
    if (run.contains("duration_ms") && run["duration_ms"].is_number_integer())
      times += "  (" + format_duration(run["duration_ms"].get<std::int64_t>()) + ")";
    row("time", times);
    // value(), not [] on a const object: a missing key there is undefined behaviour.
    const std::string exit = exit_text(run.value("exit_status", Json()));
    row("exit", exit == "0" ? style("32", exit) : style("31", exit));
    const Json sealed_flag = run.value("sealed", Json());
    const std::string sealed =
        sealed_flag.is_boolean() ? (sealed_flag.get<bool>() ? "sealed" : "UNSEALED") : "?";
    row("seal",
        (sealed == "UNSEALED" ? style("33", sealed) : sealed) + ", network " + shown(str(run, "network")));
    for (const auto& n : run.value("notices", Json::array()))
      if (n.is_string()) row("notice", shown(n.get<std::string>()));
    for (const auto& q : run.value("quarantined", Json::array()))
      if (q.is_object())
        row("MOVED", style("33", shown(str(q, "path"))) + " (" + shown(str(q, "why")) +
                         "): " + shown(str(q, "contents")) + " -> " + shown(str(q, "moved_to")));

    const auto& sessions = run.value("sessions", Json::array());
    heading(out, style, "Sessions", sessions.size());
    std::vector<std::vector<std::string>> rows;
    for (const auto& s : sessions) {
      std::string models;
      for (const auto& m : s.value("models", Json::array()))
        models += (models.empty() ? "" : ", ") + m.get<std::string>();
      rows.push_back({shown(str(s, "harness")), shown(str(s, "session_id")), shown(str(s, "cwd")),
                      shown(models), shown(str(s, "started_at")) + " -> " + shown(str(s, "ended_at"))});
    }
    table(out, rows, style, {"HARNESS", "SESSION", "CWD", "MODELS", "TIME"});

    const auto& activity = run.value("activity", Json::object());
    const auto& read = activity.value("files_read", Json::array());
    heading(out, style, "Files read", read.size());
    rows.clear();
    for (const auto& p : read) rows.push_back({shown(p.get<std::string>())});
    table(out, rows, style, {"PATH"});

    const auto& changed = activity.value("files_changed", Json::array());
    heading(out, style, "Files changed", changed.size());
    rows.clear();
    for (const auto& c : changed) {
      std::string path = shown(str(c, "path"));
      if (!str(c, "from").empty()) path = shown(str(c, "from")) + " -> " + path;
      rows.push_back({clock_time(c), shown(str(c, "action")), shown(str(c, "tool")), path});
    }
    table(out, rows, style, {"TIME", "ACTION", "TOOL", "PATH"});

    const auto& commands = activity.value("commands", Json::array());
    heading(out, style, "Commands", commands.size());
    rows.clear();
    // Under a command, the files it changed, where its session linked them.
    std::vector<std::string> changed_by;
    for (const auto& c : commands) {
      const std::string st = str(c, "status");
      const std::string exit_cell = exit_text(c.value("exit_code", Json(nullptr)));
      rows.push_back({clock_time(c),
                      st == "success" ? style("32", exit_cell)
                      : st == "error" ? style("31", exit_cell)
                                      : exit_cell,
                      shown(st), shown(str(c, "cwd")), shown(str(c, "command"))});
      std::string files;
      for (const auto& f : c.value("files_changed", Json::array()))
        if (f.is_string()) files += (files.empty() ? "" : ", ") + shown(f.get<std::string>());
      changed_by.push_back(files.empty() ? "" : style("2", "changed: ") + files);
    }
    table(out, rows, style, {"TIME", "EXIT", "STATUS", "CWD", "COMMAND"}, changed_by);

    const auto& urls = activity.value("urls", Json::array());
    heading(out, style, "URLs", urls.size());
    rows.clear();
    for (const auto& u : urls) rows.push_back({shown(u.get<std::string>())});
    table(out, rows, style, {"URL"});

    const auto& searches = activity.value("web_searches", Json::array());
    if (!searches.empty()) {
      heading(out, style, "Web searches", searches.size());
      rows.clear();
      for (const auto& q : searches) rows.push_back({shown(q.get<std::string>())});
      table(out, rows, style, {"QUERY"});
    }

    const auto& hosts = run.value("hosts", Json::object());
    std::size_t host_count = 0;
    rows.clear();
    for (const char* kind : {"reached", "refused", "failed"}) {
      for (const auto& h : hosts.value(kind, Json::array())) {
        ++host_count;
        std::string reasons;
        for (const auto& r : h.value("reasons", Json::array()))
          reasons += (reasons.empty() ? "" : ", ") + r.get<std::string>();
        const std::string verdict = std::string(kind);
        rows.push_back({verdict == "reached" ? style("32", verdict) : style("31", verdict),
                        // No port is known for a request refused before its target was read.
                        shown(str(h, "host")) + (h.value("port", 0) == 0 ? "" : ":" + str(h, "port")),
                        str(h, "connections"), human_bytes(h.value("bytes_up", 0ULL)),
                        human_bytes(h.value("bytes_down", 0ULL)), shown(reasons)});
      }
    }
    heading(out, style, "Hosts", host_count);
    table(out, rows, style, {"VERDICT", "HOST", "CONNECTIONS", "UP", "DOWN", "REASON"});
    if (hosts.value("bad_lines", 0) > 0)
      out +=
          "  " +
          style("33", std::to_string(hosts.value("bad_lines", 0)) + " bad line(s) in the proxy log skipped") +
          "\n";

    if (run.contains("requests")) {
      const auto& requests = run["requests"];
      const auto& per_host = requests.value("hosts", Json::array());
      heading(out, style, "Requests (terminated hosts)", per_host.size());
      rows.clear();
      for (const auto& h : per_host) {
        std::string reasons, creds;
        for (const auto& r : h.value("reasons", Json::array()))
          reasons += (reasons.empty() ? "" : ", ") + r.get<std::string>();
        for (const auto& c : h.value("credentials", Json::array()))
          creds += (creds.empty() ? "" : ", ") + c.get<std::string>();
        rows.push_back({shown(str(h, "host")), str(h, "requests"),
                        h.value("refused", 0) > 0 ? style("31", str(h, "refused")) : str(h, "refused"),
                        human_bytes(h.value("bytes_up", 0ULL)), human_bytes(h.value("bytes_down", 0ULL)),
                        shown(creds), shown(reasons)});
      }
      table(out, rows, style, {"HOST", "REQUESTS", "REFUSED", "UP", "DOWN", "CREDENTIALS", "REASON"});
      for (const auto& a : requests.value("exfiltration", Json::array()))
        out += "  " + style("1;31", "EXFILTRATION ATTEMPT refused") + ": " + shown(str(a, "host")) + ", " +
               shown(str(a, "detail")) + " x" + str(a, "count") + "\n";
      for (const auto& c : requests.value("connections_refused", Json::array()))
        out += "  " + style("31", "connection refused") + ": " + shown(str(c, "host")) + " " +
               shown(str(c, "reason")) + " x" + str(c, "count") + "\n";
    }

    const auto& commits = run.value("commits", Json::array());
    heading(out, style, "Commits", commits.size());
    rows.clear();
    for (const auto& c : commits) {
      const auto& author = c.value("author", Json::object());
      const std::string sig = c.value("signature", Json::object()).value("status", "");
      std::string files;
      for (const auto& f : c.value("files", Json::array()))
        files += (files.empty() ? "" : ", ") + str(f, "status").substr(0, 1) + " " + str(f, "path");
      rows.push_back(
          {str(c, "short_id"), shown(str(author, "name") + " <" + str(author, "email") + ">"),
           sig == "verified" ? style("32", sig)
           : sig == "bad"    ? style("31", sig)
                             : sig,
           shown(str(c, "summary")) + (files.empty() ? "" : style("2", "  [" + shown(files) + "]"))});
    }
    table(out, rows, style, {"COMMIT", "AUTHOR", "SIGNATURE", "MESSAGE"});

    const auto& sources = run.value("sources", Json::array());
    heading(out, style, "Sources", sources.size());
    for (const auto& s : sources) {
      const std::string status = str(s, "status");
      const std::string status_cell = status == "used"      ? style("32", status)
                                      : status == "missing" ? style("1;31", status)
                                      : status == "partial" ? style("33", status)
                                                            : status;
      out += "  " + style("1", shown(str(s, "name"))) + "  " + status_cell +
             (str(s, "location").empty() ? "" : "  " + shown(str(s, "location"))) + "\n";
      if (!str(s, "message").empty()) out += "    " + shown(str(s, "message")) + "\n";
      if (!str(s, "cannot_show").empty())
        out += "    " + style("2", "cannot show: " + shown(str(s, "cannot_show"))) + "\n";
    }
  }
  if (!str(report, "limits").empty()) out += "\n" + style("2", shown(str(report, "limits"))) + "\n";
  return out;
}

}  // namespace px::report
