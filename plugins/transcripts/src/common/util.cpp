#include "common/util.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "common/json_dom.hpp"

namespace fs = std::filesystem;

namespace parallex::transcripts {
namespace {

// Howard Hinnant's days_from_civil / civil_from_days.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

}  // namespace

std::optional<std::int64_t> parse_iso8601_ms(std::string_view s) {
  int Y, M, D, h, m, sec;
  if (!digits(s, 0, 4, Y) || s.size() < 19 || s[4] != '-' || !digits(s, 5, 2, M) || s[7] != '-' ||
      !digits(s, 8, 2, D) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(s, 11, 2, h) ||
      s[13] != ':' || !digits(s, 14, 2, m) || s[16] != ':' || !digits(s, 17, 2, sec))
    return std::nullopt;
  if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60) return std::nullopt;
  std::size_t p = 19;
  int ms = 0;
  if (p < s.size() && (s[p] == '.' || s[p] == ',')) {
    ++p;
    int scale = 100, ndig = 0;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
      ms += (s[p] - '0') * scale;
      scale /= 10;
      ++p;
      ++ndig;
    }
    if (ndig == 0) return std::nullopt;
  }
  std::int64_t offset_min = 0;
  if (p < s.size()) {
    if (s[p] == 'Z' || s[p] == 'z') {
      ++p;
    } else if (s[p] == '+' || s[p] == '-') {
      int sign = s[p] == '-' ? -1 : 1;
      int oh, om = 0;
      if (!digits(s, p + 1, 2, oh)) return std::nullopt;
      std::size_t q = p + 3;
      if (q < s.size() && s[q] == ':') ++q;
      if (q < s.size() && !digits(s, q, 2, om)) return std::nullopt;
      if (q < s.size()) q += 2;
      offset_min = sign * (oh * 60 + om);
      p = q;
    }
  }
  if (p != s.size()) return std::nullopt;
  std::int64_t days = days_from_civil(Y, static_cast<unsigned>(M), static_cast<unsigned>(D));
  std::int64_t secs = days * 86400 + h * 3600 + m * 60 + sec - offset_min * 60;
  return secs * 1000 + ms;
}

std::optional<std::int64_t> timestamp_ms(const jsonl::Value& v) {
  if (!v.is_string()) return std::nullopt;
  return parse_iso8601_ms(jsonl::view(v));
}

std::string format_iso8601_ms(std::int64_t ms) {
  // Years 0000 to 9999: what the format can spell, and no overflow below.
  ms = std::clamp<std::int64_t>(ms, -62167219200000, 253402300799999);
  std::int64_t secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
  auto milli = static_cast<int>(ms - secs * 1000);
  std::int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
  auto sod = static_cast<int>(secs - days * 86400);
  std::int64_t y;
  unsigned mo, d;
  civil_from_days(days, y, mo, d);
  // Digits written in place, not through snprintf: a report formats one time per action.
  char buf[] = "0000-00-00T00:00:00.000Z";
  auto put = [&](std::size_t at, std::int64_t v, std::size_t width) {
    for (std::size_t i = width; i-- > 0; v /= 10) buf[at + i] = static_cast<char>('0' + v % 10);
  };
  put(0, y, 4);
  put(5, mo, 2);
  put(8, d, 2);
  put(11, sod / 3600, 2);
  put(14, (sod / 60) % 60, 2);
  put(17, sod % 60, 2);
  put(20, milli, 3);
  return std::string(buf, sizeof buf - 1);
}

std::string shell_quote(std::string_view s) {
  if (s.empty()) return "''";
  bool safe = std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '@' || c == '%' || c == '+' || c == '=' || c == ':' || c == ',' || c == '.' || c == '/' ||
           c == '-';
  });
  if (safe) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\"'\"'";
    else
      out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

std::string command_from_argv(const std::vector<std::string>& argv) {
  if (argv.size() == 3) {
    std::string_view shell = argv[0];
    if (auto slash = shell.rfind('/'); slash != std::string_view::npos) shell.remove_prefix(slash + 1);
    if ((shell == "sh" || shell == "bash" || shell == "zsh") && (argv[1] == "-c" || argv[1] == "-lc"))
      return argv[2];
  }
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out.push_back(' ');
    out += shell_quote(a);
  }
  return out;
}

namespace {
// Whether lexical normalization leaves `p` as it is (but for a trailing '/'): no "." or ".."
// component, and no empty one (a doubled '/') after the leading '/'.
bool already_normal(std::string_view p) {
  std::size_t at = !p.empty() && p.front() == '/' ? 1 : 0;
  while (at < p.size()) {
    const std::size_t end = std::min(p.find('/', at), p.size());
    const std::string_view part = p.substr(at, end - at);
    if (part.empty() || part == "." || part == "..") return false;
    at = end + 1;  // past the end when the last component has no '/' after it
  }
  return true;
}
}  // namespace

std::string resolve_path(std::string_view cwd, std::string_view path) {
  if (path.empty()) return {};
  if (path.front() == '/' || cwd.empty()) return std::string(path);
  std::string joined;
  if (already_normal(cwd) && already_normal(path)) {
    // The common case (a plain relative path under a plain cwd) without std::filesystem's
    // component lists: the same text lexically_normal gives.
    joined.reserve(cwd.size() + 1 + path.size());
    joined.append(cwd);
    if (joined.back() != '/') joined.push_back('/');
    joined.append(path);
  } else {
    joined = (fs::path(std::string(cwd)) / fs::path(std::string(path))).lexically_normal().string();
  }
  while (joined.size() > 1 && joined.back() == '/') joined.pop_back();
  return joined;
}

std::string path_from_file_url(std::string_view s) {
  constexpr std::string_view scheme = "file://";
  if (s.size() < scheme.size() || s.substr(0, scheme.size()) != scheme) return std::string(s);
  std::string_view rest = s.substr(scheme.size());
  // file:///p and file://localhost/p name this machine; another host is not a local path.
  if (rest.substr(0, 9) == "localhost") rest.remove_prefix(9);
  if (rest.empty() || rest.front() != '/') return std::string(s);
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(rest.size());
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() && hex(rest[i + 1]) >= 0 && hex(rest[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(rest[i + 1]) * 16 + hex(rest[i + 2])));
      i += 2;
    } else if (rest[i] == '?' || rest[i] == '#') {
      break;
    } else {
      out.push_back(rest[i]);
    }
  }
  return out;
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}
bool is_regular_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}
bool path_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

std::vector<std::string> list_files(const std::string& root, std::string_view suffix,
                                    std::vector<Warning>& warnings, bool recursive) {
  std::vector<std::string> out;
  std::error_code ec;
  auto ends_with = [&](const std::string& name) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (!recursive) {
    fs::directory_iterator it(root, ec), end;
    if (ec) {
      warnings.push_back({root, "Cannot list " + root + ": " + ec.message() + ". Check its permissions."});
      return out;
    }
    for (; it != end; it.increment(ec)) {
      std::error_code fec;
      if (it->is_regular_file(fec) && ends_with(it->path().filename().string()))
        out.push_back(it->path().string());
    }
  } else {
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    if (ec) {
      warnings.push_back({root, "Cannot list " + root + ": " + ec.message() + ". Check its permissions."});
      return out;
    }
    for (; it != end; it.increment(ec)) {
      if (ec) {
        warnings.push_back({root, "Listing " + root + " stopped early: " + ec.message() + "."});
        break;
      }
      std::error_code fec;
      if (it->is_regular_file(fec) && ends_with(it->path().filename().string()))
        out.push_back(it->path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

nlohmann::json Command::to_json() && {
  // Member by member: an initializer list would copy every string twice. The keys go in the
  // object's own (sorted) order, each at its end: no search for its place (a report has one
  // such object per command).
  nlohmann::json j = nlohmann::json::object();
  auto& o = j.get_ref<nlohmann::json::object_t&>();
  if (argv) o.emplace_hint(o.end(), "argv", std::move(*argv));
  o.emplace_hint(o.end(), "command", std::move(command));
  o.emplace_hint(o.end(), "cwd", std::move(cwd));
  o.emplace_hint(o.end(), "exit_code", exit_code ? nlohmann::json(*exit_code) : nlohmann::json(nullptr));
  o.emplace_hint(o.end(), "status", std::move(status));
  o.emplace_hint(o.end(), "tool", std::move(tool));
  return j;
}

void Activity::change(std::string path, const std::string& tool, const std::string& action,
                      std::optional<std::int64_t> at, std::string from) {
  if (path.empty()) return;
  std::string key;
  key.reserve(path.size() + tool.size() + action.size() + 2);
  key.append(path).append(1, '\0').append(tool).append(1, '\0').append(action);
  if (!change_keys_.insert(std::move(key)).second) return;
  changes_.push_back({std::move(path), tool, action, std::move(from)});
  change_times_.push_back(at);
}

namespace {
nlohmann::json time_or_null(std::optional<std::int64_t> ms) {
  return ms ? nlohmann::json(format_iso8601_ms(*ms)) : nlohmann::json(nullptr);
}
}  // namespace

void Activity::write(nlohmann::json& out, Times times) {
  out["files_read"] = files_read_.take_json();
  nlohmann::json changes = nlohmann::json::array();
  auto& change_list = changes.get_ref<nlohmann::json::array_t&>();
  change_list.reserve(changes_.size());
  for (auto& c : changes_) {
    nlohmann::json j = nlohmann::json::object();
    auto& o = j.get_ref<nlohmann::json::object_t&>();  // keys in sorted order, as in Command
    o.emplace_hint(o.end(), "action", std::move(c.action));
    if (!c.from.empty()) o.emplace_hint(o.end(), "from", std::move(c.from));
    o.emplace_hint(o.end(), "path", std::move(c.path));
    o.emplace_hint(o.end(), "tool", std::move(c.tool));
    change_list.push_back(std::move(j));
  }
  changes_.clear();
  out["files_changed"] = std::move(changes);
  change_keys_.clear();
  nlohmann::json commands = nlohmann::json::array();
  nlohmann::json command_times = nlohmann::json::array();
  commands.get_ref<nlohmann::json::array_t&>().reserve(commands_.size());
  for (auto& c : commands_) {
    if (times == Times::with) command_times.push_back(time_or_null(c.at));
    commands.push_back(std::move(c).to_json());
  }
  commands_.clear();
  out["commands"] = std::move(commands);
  out["urls"] = urls_.take_json();
  out["web_searches"] = searches_.take_json();
  if (times == Times::with) {
    nlohmann::json change_times = nlohmann::json::array();
    for (const auto& at : change_times_) change_times.push_back(time_or_null(at));
    out["action_times"] = {{"commands", std::move(command_times)},
                           {"files_changed", std::move(change_times)}};
  }
  change_times_.clear();
}

void sanitize_strings(nlohmann::json& j) {
  if (j.is_string()) {
    auto& s = j.get_ref<std::string&>();
    if (!jsonl::valid_utf8(s)) s = jsonl::sanitize_utf8(s);
  } else if (j.is_array() || j.is_object()) {
    for (auto& v : j) sanitize_strings(v);
  }
}

Finished finished(nlohmann::json&& session, Form form) {
  sanitize_strings(session);
  Finished f;
  const auto text_of = [&](const char* key) -> std::optional<std::string> {
    const auto it = session.find(key);
    if (it == session.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  f.started_at = text_of("started_at");
  f.ended_at = text_of("ended_at");
  f.session_id = text_of("session_id").value_or("");
  if (form == Form::object) {
    f.session = std::move(session);
  } else {
    // Strings were made valid UTF-8 above; replace, never throw, anyway.
    f.text = session.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    session = nullptr;  // freed on this thread, now: the next session reuses its memory
  }
  return f;
}

void finish_sessions(std::vector<Finished>&& sessions, Window w, Form form, ParseResult& into) {
  const auto ms = [](const std::optional<std::string>& t) { return t ? parse_iso8601_ms(*t) : std::nullopt; };
  if (w.since_ms != 0 || w.until_ms != 0) {
    std::vector<Finished> kept;
    for (auto& s : sessions) {
      auto start = ms(s.started_at);
      auto stop = ms(s.ended_at);
      if (!start) start = stop;
      if (!stop) stop = start;
      // Sessions without any time cannot be placed; keep them rather than hide activity.
      bool keep = true;
      if (start && stop) {
        if (w.since_ms != 0 && *stop < w.since_ms) keep = false;
        if (w.until_ms != 0 && *start > w.until_ms) keep = false;
      }
      if (keep) kept.push_back(std::move(s));
    }
    sessions = std::move(kept);
  }
  std::stable_sort(sessions.begin(), sessions.end(), [](const Finished& a, const Finished& b) {
    // A session without a start sorts last ("\x7f" is above every time stamp's characters).
    const std::string_view sa = a.started_at ? std::string_view(*a.started_at) : "\x7f";
    const std::string_view sb = b.started_at ? std::string_view(*b.started_at) : "\x7f";
    return sa != sb ? sa < sb : a.session_id < b.session_id;
  });
  for (auto& s : sessions) {
    if (form == Form::object)
      into.sessions.push_back(std::move(s.session));
    else
      into.texts.push_back(std::move(s.text));
  }
}

unsigned worker_count(const std::vector<std::string>& files) {
  if (const char* env = std::getenv("PARALLEX_TRANSCRIPT_THREADS")) {
    int n = std::atoi(env);
    if (n >= 1) return static_cast<unsigned>(std::min(n, 64));
  }
  if (files.size() < 2) return 1;
  std::uint64_t bytes = 0;
  for (const auto& f : files) {
    std::error_code ec;
    auto size = fs::file_size(f, ec);
    if (!ec) bytes += size;
  }
  if (bytes < (std::uint64_t{8} << 20)) return 1;
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::min<std::size_t>({cores, 8, files.size()}));
}

double round_cost(double v) {
  return std::round(v * 1e10) / 1e10;
}

}  // namespace parallex::transcripts
