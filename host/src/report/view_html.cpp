#include "common/json_io.hpp"
#include "report/time_text.hpp"
#include "report/views.hpp"

namespace px::report {

namespace {

std::string esc(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // Other control characters have no business in a page; show them, escaped.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

// Reads on a phone as on a wide screen: below 720px each table row becomes a
// card of "label: value" lines; a table never grows wider than the page (no
// sideways scrolling: paths and commands, the long words, may break where
// they must); paths wrap after their slashes first; ids and times never wrap
// (class "id").
// Follows the reader's dark mode.
const char* kStyle = R"css(
:root{color-scheme:light dark}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#1d2330;background:#fafbfc}
h1{font-size:1.5rem;margin:0 0 .5rem}h2{font-size:1.25rem;margin:2.5rem 0 .5rem;border-bottom:2px solid #c8102e;padding-bottom:.25rem}
h3{font-size:1.05rem;margin:1.5rem 0 .4rem}
table{border-collapse:collapse;width:100%;margin:.25rem 0 1rem;background:#fff}
th,td{border:1px solid #dde1e6;padding:.3rem .5rem;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#eef1f4;font-weight:600}
td.mono,code{font-family:ui-monospace,"SF Mono",Menlo,Consolas,monospace;font-size:12.5px;white-space:pre-wrap;overflow-wrap:anywhere}
.id{white-space:nowrap}
.ok{color:#137333}.bad{color:#b3261e;font-weight:600}.warn{color:#9a6700}.dim{color:#667085}
.none{color:#667085;font-style:italic}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2rem 1rem;margin:.5rem 0}dt{color:#667085}dd{margin:0;overflow-wrap:anywhere}
.problem{background:#fdecea;border:1px solid #f5c2c0;padding:.5rem .75rem;margin:.5rem 0;overflow-wrap:anywhere}
.limits{background:#fff8e1;border:1px solid #f2d27a;padding:.5rem .75rem;margin:1rem 0}
@media (max-width:720px){
body{margin:1rem auto;padding:0 .6rem}
table,tbody,tr,td{display:block;width:auto}thead{display:none}
tr{border:1px solid #dde1e6;margin:0 0 .6rem}td{border:0;border-bottom:1px solid #eef1f4}
td::before{content:attr(data-label);display:block;font:600 11px/1.3 system-ui,sans-serif;color:#667085;text-transform:uppercase}
dl{grid-template-columns:minmax(0,1fr)}dd{margin-bottom:.3rem}
}
@media (prefers-color-scheme:dark){
body{color:#e3e6eb;background:#121418}
table{background:#1a1d23}th{background:#242932}th,td,tr{border-color:#343a45}td{border-bottom-color:#2a2f38}
.ok{color:#6fcf8b}.bad{color:#ff8a80}.warn{color:#e3b341}.dim,.none,dt,td::before{color:#9aa3b2}
h2{border-bottom-color:#ff5a6e}
.problem{background:#3a1f1f;border-color:#7a2e2e}.limits{background:#352c12;border-color:#6f5b1d}
}
)css";

// Escaped text of a path, command or URL, with a line-break opportunity after
// each '/', so a long one wraps between its parts, not inside a name.
std::string breakable(const std::string& escaped) {
  std::string out;
  out.reserve(escaped.size() + 16);
  for (char c : escaped) {
    out += c;
    // "&lt;/" is the text "</", not a path separator.
    if (c == '/' && !out.ends_with("&lt;/")) out += "<wbr>";
  }
  return out;
}

// An ISO time that wraps, if it must, only between its date and its time of day.
std::string time_html(const std::string& iso) {
  const auto t = iso.find('T');
  if (t == std::string::npos) return "<span class=\"id\">" + esc(iso) + "</span>";
  return "<span class=\"id\">" + esc(iso.substr(0, t)) + "</span><wbr><span class=\"id\">" +
         esc(iso.substr(t)) + "</span>";
}

struct Page {
  std::string out;
  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
             const std::vector<bool>& mono = {}) {
    if (rows.empty()) {
      out += "<p class=\"none\">none</p>\n";
      return;
    }
    out += "<table><thead><tr>";
    for (const auto& h : header) out += "<th>" + esc(h) + "</th>";
    out += "</tr></thead><tbody>\n";
    for (const auto& row : rows) {
      out += "<tr>";
      for (std::size_t c = 0; c < row.size(); ++c) {
        // The column's name, for the narrow layout's "label: value" cards.
        const std::string label = c < header.size() ? " data-label=\"" + esc(header[c]) + "\"" : "";
        out += (c < mono.size() && mono[c] ? "<td class=\"mono\"" + label + ">" + breakable(row[c])
                                           : "<td" + label + ">" + row[c]) +
               "</td>";
      }
      out += "</tr>\n";
    }
    out += "</tbody></table>\n";
  }
};

std::string cls(const char* klass, const std::string& escaped) {
  return std::string("<span class=\"") + klass + "\">" + escaped + "</span>";
}

}  // namespace

std::string render_html(const Json& report) {
  Page p;
  std::string& out = p.out;
  const std::string agent = str(report, "agent");
  const std::string title = "Parallex report" + (agent.empty() ? std::string() : " for agent " + agent);
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
      esc(title) + "</title>\n<style>" + kStyle + "</style></head><body>\n";
  out += "<h1>" + esc(title) + "</h1>\n<p class=\"dim\">Generated " + esc(str(report, "generated_at")) +
         " from " + esc(str(report, "runs_dir")) + "</p>\n";
  for (const auto& problem : report.value("problems", Json::array()))
    out += "<div class=\"problem\">" + esc(problem.get<std::string>()) + "</div>\n";

  for (const auto& run : report.value("runs", Json::array())) {
    const std::string id = str(run, "id");
    out +=
        "<section class=\"run\" id=\"run-" + esc(id) + "\">\n<h2>Run " + cls("id", esc(id)) + "</h2>\n<dl>";
    auto item = [&](const char* label, const std::string& html) {
      out += std::string("<dt>") + label + "</dt><dd>" + html + "</dd>";
    };
    item("Agent", esc(str(run, "agent")));
    item("Command", "<code>" + esc(str(run, "command")) + "</code>");
    item("Harness", esc(str(run, "harness")));
    item("Run folder", "<code>" + esc(str(run, "run_folder")) + "</code>");
    item("Started", esc(str(run, "started_at")));
    item("Ended", str(run, "ended_at").empty() ? cls("warn", "no end recorded") : esc(str(run, "ended_at")));
    if (run.contains("duration_ms") && run["duration_ms"].is_number_integer())
      item("Duration", esc(format_duration(run["duration_ms"].get<std::int64_t>())));
    const std::string exit = exit_text(run.value("exit_status", Json(nullptr)));
    item("Exit status", cls(exit == "0" ? "ok" : "bad", esc(exit)));
    // value(), not [] on a const object: a missing key there is undefined behaviour.
    const Json sealed = run.value("sealed", Json());
    item("Seal", sealed.is_boolean() ? (sealed.get<bool>() ? "sealed" : cls("warn", "unsealed")) : "?");
    item("Network", esc(str(run, "network")));
    out += "</dl>\n";
    for (const auto& n : run.value("notices", Json::array()))
      if (n.is_string()) out += "<p class=\"warn\">" + esc(n.get<std::string>()) + "</p>\n";
    for (const auto& q : run.value("quarantined", Json::array()))
      if (q.is_object())
        out += "<p class=\"warn\">Moved aside <code>" + esc(str(q, "path")) + "</code> (" +
               esc(str(q, "why")) + "): " + esc(str(q, "contents")) + ". Kept in <code>" +
               esc(str(q, "moved_to")) + "</code>.</p>\n";
    for (const auto& w : run.value("warnings", Json::array()))
      if (w.is_string()) out += "<div class=\"problem\">" + esc(w.get<std::string>()) + "</div>\n";

    const auto sessions = run.value("sessions", Json::array());
    out += "<h3 id=\"sessions-" + esc(id) + "\">Sessions</h3>\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& s : sessions) {
      std::string models;
      for (const auto& m : s.value("models", Json::array()))
        models += (models.empty() ? "" : ", ") + m.get<std::string>();
      rows.push_back({esc(str(s, "harness")), "<code class=\"id\">" + esc(str(s, "session_id")) + "</code>",
                      esc(str(s, "cwd")), esc(models), time_html(str(s, "started_at")),
                      time_html(str(s, "ended_at"))});
    }
    p.table({"Harness", "Session", "Working directory", "Models", "Started", "Ended"}, rows,
            {false, false, true});

    const auto activity = run.value("activity", Json::object());
    out += "<h3>Files read</h3>\n";
    rows.clear();
    for (const auto& f : activity.value("files_read", Json::array()))
      rows.push_back({esc(f.get<std::string>())});
    p.table({"Path"}, rows, {true});

    out += "<h3>Files changed</h3>\n";
    rows.clear();
    for (const auto& c : activity.value("files_changed", Json::array()))
      rows.push_back({time_html(str(c, "at")), esc(str(c, "action")), esc(str(c, "tool")),
                      esc(str(c, "path")), esc(str(c, "from"))});
    p.table({"Time", "Action", "Tool", "Path", "From"}, rows, {false, false, false, true, true});

    out += "<h3>Commands</h3>\n";
    rows.clear();
    for (const auto& c : activity.value("commands", Json::array())) {
      const std::string st = str(c, "status");
      // The files it changed, where its session linked them.
      std::string files;
      for (const auto& f : c.value("files_changed", Json::array()))
        if (f.is_string()) files += (files.empty() ? "" : ", ") + esc(f.get<std::string>());
      rows.push_back({time_html(str(c, "at")), esc(str(c, "command")), esc(str(c, "cwd")),
                      cls(st == "success" ? "ok"
                          : st == "error" ? "bad"
                                          : "dim",
                          esc(exit_text(c.value("exit_code", Json(nullptr))))),
                      esc(st), esc(str(c, "tool")), files});
    }
    p.table({"Time", "Command", "Working directory", "Exit", "Status", "Tool", "Files it changed"}, rows,
            {false, true, true, false, false, false, true});

    out += "<h3>URLs</h3>\n";
    rows.clear();
    for (const auto& u : activity.value("urls", Json::array()))
      rows.push_back({esc(u.get<std::string>()), "fetched"});
    for (const auto& q : activity.value("web_searches", Json::array()))
      rows.push_back({esc(q.get<std::string>()), "search"});
    p.table({"URL or query", "Kind"}, rows, {true});

    out += "<h3>Hosts</h3>\n";
    const auto hosts = run.value("hosts", Json::object());
    rows.clear();
    for (const char* kind : {"reached", "refused", "failed"})
      for (const auto& h : hosts.value(kind, Json::array())) {
        std::string reasons;
        for (const auto& r : h.value("reasons", Json::array()))
          reasons += (reasons.empty() ? "" : ", ") + r.get<std::string>();
        rows.push_back({cls(std::string(kind) == "reached" ? "ok" : "bad", kind), esc(str(h, "host")),
                        esc(str(h, "port")), esc(str(h, "connections")),
                        esc(human_bytes(h.value("bytes_up", 0ULL))),
                        esc(human_bytes(h.value("bytes_down", 0ULL))), esc(reasons)});
      }
    p.table({"Verdict", "Host", "Port", "Connections", "Sent", "Received", "Reason"}, rows, {false, true});
    if (hosts.value("bad_lines", 0) > 0)
      out += "<p class=\"warn\">" + std::to_string(hosts.value("bad_lines", 0)) +
             " line(s) of the proxy log are not decisions and were skipped.</p>\n";

    if (run.contains("requests")) {
      const auto& requests = run["requests"];
      out += "<h3>Requests (terminated hosts)</h3>\n";
      rows.clear();
      for (const auto& h : requests.value("hosts", Json::array())) {
        std::string reasons, creds;
        for (const auto& r : h.value("reasons", Json::array()))
          reasons += (reasons.empty() ? "" : ", ") + r.get<std::string>();
        for (const auto& c : h.value("credentials", Json::array()))
          creds += (creds.empty() ? "" : ", ") + c.get<std::string>();
        rows.push_back({esc(str(h, "host")), esc(str(h, "requests")),
                        cls(h.value("refused", 0) > 0 ? "bad" : "dim", esc(str(h, "refused"))),
                        esc(human_bytes(h.value("bytes_up", 0ULL))),
                        esc(human_bytes(h.value("bytes_down", 0ULL))), esc(creds), esc(reasons)});
      }
      p.table({"Host", "Requests", "Refused", "Sent", "Received", "Credentials", "Reason"}, rows, {true});
      for (const auto& a : requests.value("exfiltration", Json::array()))
        out += "<p class=\"bad\">Exfiltration attempt refused: " + esc(str(a, "host")) + ", " +
               esc(str(a, "detail")) + " x" + esc(str(a, "count")) + "</p>\n";
      for (const auto& c : requests.value("connections_refused", Json::array()))
        out += "<p class=\"warn\">Connection refused: " + esc(str(c, "host")) + " " + esc(str(c, "reason")) +
               " x" + esc(str(c, "count")) + "</p>\n";
    }

    out += "<h3>Commits</h3>\n";
    rows.clear();
    for (const auto& c : run.value("commits", Json::array())) {
      const auto author = c.value("author", Json::object());
      const auto sig = c.value("signature", Json::object());
      const std::string status = str(sig, "status");
      std::string files;
      for (const auto& f : c.value("files", Json::array()))
        files += esc(str(f, "status")) + " <code>" + esc(str(f, "path")) + "</code><br>";
      rows.push_back({"<code class=\"id\">" + esc(str(c, "short_id")) + "</code>",
                      esc(str(author, "name")) + " &lt;" + esc(str(author, "email")) + "&gt;",
                      cls(status == "verified" ? "ok"
                          : status == "bad"    ? "bad"
                                               : "dim",
                          esc(status)) +
                          (str(sig, "detail").empty()
                               ? ""
                               : "<br><span class=\"dim\">" + esc(str(sig, "detail")) + "</span>"),
                      "<code>" + esc(str(c, "message")) + "</code>", files});
    }
    p.table({"Commit", "Author", "Signature", "Message", "Files"}, rows);

    out += "<h3>Sources</h3>\n";
    rows.clear();
    for (const auto& s : run.value("sources", Json::array())) {
      const std::string status = str(s, "status");
      rows.push_back({esc(str(s, "name")),
                      cls(status == "used"      ? "ok"
                          : status == "missing" ? "bad"
                          : status == "partial" ? "warn"
                                                : "dim",
                          esc(status)),
                      esc(str(s, "location")), esc(str(s, "message")), esc(str(s, "cannot_show"))});
    }
    p.table({"Source", "Status", "Location", "Problem", "Cannot show"}, rows, {false, false, true});
    out += "</section>\n";
  }
  out += "<div class=\"limits\">" + esc(str(report, "limits")) + "</div>\n</body></html>\n";
  return out;
}

}  // namespace px::report
