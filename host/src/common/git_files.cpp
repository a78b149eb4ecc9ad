#include "common/git_files.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/ascii.hpp"

namespace px {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// A value: quotes removed, escapes read, a comment outside quotes dropped.
std::string read_value(std::string_view raw) {
  std::string out;
  bool quoted = false;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '"') {
      quoted = !quoted;
    } else if (c == '\\' && i + 1 < raw.size()) {
      const char n = raw[++i];
      out += n == 'n' ? '\n' : n == 't' ? '\t' : n;
    } else if ((c == '#' || c == ';') && !quoted) {
      break;
    } else {
      out += c;
    }
  }
  return std::string(trim(out));
}

// Sections whose every key is data (no program, no path git runs).
const std::set<std::string> kDataSections = {
    "branch", "user",   "pull",   "push", "gc",     "pack",   "index",   "extensions", "fetch", "maintenance",
    "color",  "column", "status", "log",  "rerere", "advice", "feature", "checkout",   "clone"};
// core.* keys that are plain settings.
const std::set<std::string> kCoreKeys = {"repositoryformatversion",
                                         "filemode",
                                         "bare",
                                         "logallrefupdates",
                                         "ignorecase",
                                         "precomposeunicode",
                                         "symlinks",
                                         "worktree",
                                         "autocrlf",
                                         "eol",
                                         "safecrlf",
                                         "quotepath",
                                         "sparsecheckout",
                                         "sparsecheckoutcone",
                                         "splitindex",
                                         "untrackedcache",
                                         "checkstat",
                                         "trustctime",
                                         "preloadindex",
                                         "compression",
                                         "loosecompression",
                                         "bigfilethreshold",
                                         "abbrev",
                                         "warnambiguousrefs",
                                         "protecthfs",
                                         "protectntfs",
                                         "commitgraph",
                                         "multipackindex",
                                         "excludesfile",
                                         "fscache"};
const std::set<std::string> kRemoteKeys = {"url",
                                           "pushurl",
                                           "fetch",
                                           "push",
                                           "tagopt",
                                           "prune",
                                           "prunetags",
                                           "mirror",
                                           "promisor",
                                           "partialclonefilter",
                                           "skipdefaultupdate",
                                           "skipfetchall"};
const std::set<std::string> kSubmoduleKeys = {"url",     "active", "branch",
                                              "shallow", "ignore", "fetchrecursesubmodules"};
// Keys of those sections that are not plain data.
const std::set<std::string> kNotData = {"user.signingkey"};

bool program_url(std::string_view url) {
  const std::string u = ascii_lower(trim(url));
  return u.rfind("ext::", 0) == 0 || u.rfind("fd::", 0) == 0;
}

}  // namespace

std::vector<GitConfigEntry> parse_git_config(std::string_view text, bool& ok) {
  std::vector<GitConfigEntry> out;
  ok = true;
  std::string section;
  int number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(pos, end - pos));
    pos = end + 1;
    const int at = ++number;
    // Continuation lines: a value ending in a backslash goes on.
    while (!line.empty() && line.back() == '\\' && pos < text.size()) {
      line.pop_back();
      std::size_t next = text.find('\n', pos);
      if (next == std::string_view::npos) next = text.size();
      line += text.substr(pos, next - pos);
      pos = next + 1;
      ++number;
    }
    std::string_view l = trim(line);
    if (l.empty() || l.front() == '#' || l.front() == ';') continue;
    if (l.front() == '[') {
      const std::size_t close = l.find(']');
      if (close == std::string_view::npos) {
        ok = false;
        continue;
      }
      std::string_view head = trim(l.substr(1, close - 1));
      const std::size_t space = head.find_first_of(" \t");
      if (space != std::string_view::npos) {
        // [section "subsection"]: the subsection keeps its case.
        std::string_view sub = trim(head.substr(space));
        if (sub.size() < 2 || sub.front() != '"' || sub.back() != '"') ok = false;
        std::string subsection;
        for (std::size_t i = 1; i + 1 < sub.size(); ++i) {
          if (sub[i] == '\\' && i + 2 < sub.size()) ++i;
          subsection += sub[i];
        }
        section = ascii_lower(head.substr(0, space)) + "." + subsection;
      } else {
        // [section] or the old [section.subsection] (lowercased whole).
        section = ascii_lower(head);
      }
      l = trim(l.substr(close + 1));
      if (l.empty() || l.front() == '#' || l.front() == ';') continue;
    }
    if (section.empty()) {
      ok = false;
      continue;
    }
    const std::size_t eq = l.find('=');
    const std::string name = ascii_lower(trim(l.substr(0, eq)));
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
        })) {
      ok = false;
      continue;
    }
    out.push_back(
        {section + "." + name, eq == std::string_view::npos ? "true" : read_value(l.substr(eq + 1)), at});
  }
  return out;
}

std::vector<std::string> unsafe_git_config(std::string_view text) {
  std::vector<std::string> out;
  bool ok = true;
  const auto entries = parse_git_config(text, ok);
  if (!ok) out.push_back("a line git's config syntax does not allow");
  for (const auto& e : entries) {
    const std::size_t first = e.key.find('.');
    const std::size_t last = e.key.rfind('.');
    const std::string section = e.key.substr(0, first);
    const std::string name = e.key.substr(last + 1);
    const bool has_sub = first != last;
    bool safe = false;
    if (section == "core") {
      safe = !has_sub && kCoreKeys.count(name);
    } else if (section == "remote") {
      safe = has_sub && kRemoteKeys.count(name) &&
             !((name == "url" || name == "pushurl") && program_url(e.value));
    } else if (section == "submodule") {
      safe = has_sub && kSubmoduleKeys.count(name) && !(name == "url" && program_url(e.value));
    } else if (section == "lfs") {
      safe = name == "repositoryformatversion" || name == "url";
    } else {
      safe = kDataSections.count(section) && !kNotData.count(section + "." + name) &&
             name.find("hook") == std::string::npos && name.find("command") == std::string::npos &&
             name.find("program") == std::string::npos;
    }
    if (!safe) out.push_back(e.key + " (line " + std::to_string(e.line) + ")");
  }
  return out;
}

std::vector<std::string> unsafe_git_attributes(std::string_view text) {
  // git's built-in diff drivers: patterns for hunk headers, no program.
  static const std::set<std::string> kBuiltinDiff = {
      "ada",      "bash",   "bibtex", "cpp",  "csharp", "css",      "dts",    "elixir", "fortran",
      "fountain", "golang", "html",   "java", "kotlin", "markdown", "matlab", "objc",   "pascal",
      "perl",     "php",    "python", "ruby", "rust",   "scheme",   "tex"};
  std::vector<std::string> out;
  int number = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++number;
    if (line.empty() || line.front() == '#') continue;
    std::size_t at = line.find_first_of(" \t");
    while (at != std::string_view::npos && at < line.size()) {
      const std::size_t start = line.find_first_not_of(" \t", at);
      if (start == std::string_view::npos) break;
      const std::size_t stop = std::min(line.find_first_of(" \t", start), line.size());
      const std::string_view attr = line.substr(start, stop - start);
      at = stop;
      const std::size_t eq = attr.find('=');
      if (eq == std::string_view::npos) continue;  // set, unset or unspecified: no driver named
      const std::string name = ascii_lower(attr.substr(0, eq));
      const std::string value = ascii_lower(attr.substr(eq + 1));
      const bool driver =
          name == "filter" || name == "merge" || (name == "diff" && !kBuiltinDiff.count(value));
      if (driver && !(name == "merge" && (value == "text" || value == "binary" || value == "union"))) {
        out.push_back(std::string(attr) + " (line " + std::to_string(number) + ")");
      }
    }
    if (end == text.size()) break;
  }
  return out;
}

std::string resolve_submodule_url(std::string_view url, std::string_view remote_url) {
  if (url.rfind("./", 0) != 0 && url.rfind("../", 0) != 0) return std::string(url);
  std::string base(remote_url);
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  std::string_view rest = url;
  while (true) {
    if (rest.rfind("./", 0) == 0) {
      rest.remove_prefix(2);
    } else if (rest.rfind("../", 0) == 0) {
      rest.remove_prefix(3);
      // Up one component: after the last '/', or after the ':' of "host:path".
      const std::size_t slash = base.rfind('/');
      const std::size_t colon = base.find(':');
      const bool scp = colon != std::string::npos && base.find("://") == std::string::npos &&
                       (slash == std::string::npos || slash < colon);
      if (scp) {
        base.resize(colon + 1);
      } else if (slash != std::string::npos && slash > 0 && base[slash - 1] != '/') {
        base.resize(slash);
      } else {
        base.clear();
      }
    } else {
      break;
    }
  }
  if (base.empty()) return std::string(rest);
  return base.back() == ':' ? base + std::string(rest) : base + "/" + std::string(rest);
}

}  // namespace px
