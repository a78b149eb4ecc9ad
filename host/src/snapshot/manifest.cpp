#include "snapshot/manifest.hpp"

#include <charconv>
#include <nlohmann/json.hpp>

#include "common/json_io.hpp"

namespace px::snapshot {

bool path_less(std::string_view a, std::string_view b) {
  std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] == b[i]) continue;
    // '/' sorts before every other byte so "a/b" < "a!"; a dir's subtree is contiguous.
    auto ca = a[i] == '/' ? 0 : static_cast<unsigned char>(a[i]) + 1;
    auto cb = b[i] == '/' ? 0 : static_cast<unsigned char>(b[i]) + 1;
    return ca < cb;
  }
  return a.size() < b.size();
}

std::string escape_bytes(std::string_view raw) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size());
  for (char ch : raw) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f || c == '%' || c == '"' || c == '\\') {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

std::string display_name(std::string_view raw) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size());
  auto esc = [&](unsigned char c) {
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  };
  for (std::size_t i = 0; i < raw.size();) {
    auto c = static_cast<unsigned char>(raw[i]);
    if (c < 0x20 || c == 0x7f || c == '\\') {
      esc(c);
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += raw[i++];
      continue;
    }
    std::size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    bool valid = len != 0 && i + len <= raw.size();
    for (std::size_t k = 1; valid && k < len; ++k)
      valid = (static_cast<unsigned char>(raw[i + k]) & 0xc0) == 0x80;
    if (!valid) {
      esc(c);
      ++i;
      continue;
    }
    out.append(raw.substr(i, len));
    i += len;
  }
  return out;
}

namespace {
int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

template <class T>
bool parse_num(std::string_view s, T& out, int base = 10) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}
}  // namespace

Result<std::string> unescape_bytes(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] != '%') {
      out += escaped[i];
      continue;
    }
    if (i + 2 >= escaped.size()) {
      return Error::invalid("A snapshot manifest holds a cut-off escape; the store may be damaged.");
    }
    int hi = hexval(escaped[i + 1]), lo = hexval(escaped[i + 2]);
    if (hi < 0 || lo < 0)
      return Error::invalid("A snapshot manifest holds a bad escape; the store may be damaged.");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// Line: type mode uid gid size mtime_ns flags hash path target  (tab-separated;
// "-" for an empty hash or target). Mode is octal.
std::string serialize_tree(const std::vector<Entry>& entries) {
  std::string out = "parallex-tree 1\n";
  out.reserve(entries.size() * 120);
  char buf[160];
  for (const auto& e : entries) {
    int n =
        std::snprintf(buf, sizeof buf, "%c\t%o\t%u\t%u\t%llu\t%lld\t%u\t", e.type, e.mode, e.uid, e.gid,
                      static_cast<unsigned long long>(e.size), static_cast<long long>(e.mtime_ns), e.flags);
    out.append(buf, static_cast<std::size_t>(n));
    out += e.hash.empty() ? "-" : e.hash;
    out += '\t';
    out += escape_bytes(e.path);
    out += '\t';
    out += e.target.empty() ? "-" : escape_bytes(e.target);
    out += '\n';
  }
  return out;
}

Result<std::vector<Entry>> parse_tree(std::string_view text) {
  auto bad = [](std::size_t line) {
    return Error::invalid(
        "Snapshot manifest line " + std::to_string(line) +
        " cannot be read; the store may be damaged (run `parallex snapshot list` to see others).");
  };
  std::vector<Entry> entries;
  std::size_t pos = text.find('\n');
  if (pos == std::string_view::npos || text.substr(0, pos) != "parallex-tree 1") return bad(1);
  ++pos;
  std::size_t line = 1;
  std::string_view fields[10];
  while (pos < text.size()) {
    ++line;
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) return bad(line);
    std::string_view l = text.substr(pos, end - pos);
    pos = end + 1;
    std::size_t nf = 0, start = 0;
    for (std::size_t i = 0; i <= l.size() && nf < 10; ++i) {
      if (i == l.size() || l[i] == '\t') {
        fields[nf++] = l.substr(start, i - start);
        start = i + 1;
      }
    }
    if (nf != 10 || fields[0].size() != 1) return bad(line);
    Entry e;
    e.type = fields[0][0];
    unsigned long long size = 0;
    long long mtime = 0;
    if (!parse_num(fields[1], e.mode, 8) || !parse_num(fields[2], e.uid) || !parse_num(fields[3], e.gid) ||
        !parse_num(fields[4], size) || !parse_num(fields[5], mtime) || !parse_num(fields[6], e.flags)) {
      return bad(line);
    }
    e.size = size;
    e.mtime_ns = mtime;
    if (fields[7] != "-") e.hash = std::string(fields[7]);
    auto p = unescape_bytes(fields[8]);
    if (!p || p.value().empty()) return bad(line);
    e.path = std::move(p).value();
    if (fields[9] != "-") {
      auto t = unescape_bytes(fields[9]);
      if (!t) return bad(line);
      e.target = std::move(t).value();
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

std::string serialize_info(const SnapshotInfo& info) {
  nlohmann::json j;
  j["format"] = 1;
  j["id"] = info.id;
  j["time_ns"] = info.time_ns;
  j["label"] = info.label;
  j["kind"] = info.kind;
  j["source"] = escape_bytes(info.source);
  j["tree"] = info.tree;
  j["files"] = info.files;
  j["entries"] = info.entries;
  j["bytes"] = info.bytes;
  j["new_bytes"] = info.new_bytes;
  j["incomplete"] = info.incomplete;
  j["warnings"] = info.warnings;
  auto& ex = j["excludes"] = nlohmann::json::array();
  for (const auto& e : info.excludes) ex.push_back(escape_bytes(e));
  return to_json_text(j, 1) + "\n";
}

Result<SnapshotInfo> parse_info(std::string_view text) {
  try {
    auto j = nlohmann::json::parse(text);
    if (j.value("format", 0) != 1)
      return Error::unsupported("This snapshot was written by a newer parallex.");
    SnapshotInfo info;
    info.id = j.at("id").get<std::string>();
    info.time_ns = j.at("time_ns").get<std::int64_t>();
    info.label = j.value("label", "");
    info.kind = j.value("kind", "manual");
    auto src = unescape_bytes(j.value("source", ""));
    if (!src) return src.error();
    info.source = std::move(src).value();
    info.tree = j.at("tree").get<std::string>();
    info.files = j.value("files", std::uint64_t{0});
    info.entries = j.value("entries", std::uint64_t{0});
    info.bytes = j.value("bytes", std::uint64_t{0});
    info.new_bytes = j.value("new_bytes", std::uint64_t{0});
    info.incomplete = j.value("incomplete", false);
    info.warnings = j.value("warnings", std::vector<std::string>{});
    for (const auto& e : j.value("excludes", std::vector<std::string>{})) {
      auto raw = unescape_bytes(e);
      if (!raw) return raw.error();
      info.excludes.push_back(std::move(raw).value());
    }
    return info;
  } catch (const std::exception& e) {
    return Error::invalid(std::string("Snapshot record cannot be read: ") + e.what());
  }
}

}  // namespace px::snapshot
