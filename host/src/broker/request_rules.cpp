#include "broker/request_rules.hpp"

#include <algorithm>
#include <array>

#include "common/ascii.hpp"

namespace px::broker {
namespace {

// Methods a rule may name. CONNECT and TRACE never reach a terminated host's
// rules (the relay refuses them), so naming them is a mistake.
constexpr std::array<std::string_view, 14> kMethods = {"GET",    "HEAD",    "POST",     "PUT",       "PATCH",
                                                       "DELETE", "OPTIONS", "PROPFIND", "PROPPATCH", "MKCOL",
                                                       "COPY",   "MOVE",    "LOCK",     "UNLOCK"};

constexpr std::size_t kMaxPattern = 1024;

bool is_unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

// pchar without '%' (RFC 3986): what a pattern's literal parts may hold.
bool is_pattern_char(unsigned char c) {
  return is_unreserved(c) ||
         std::string_view("!$&'()+,=:@").find(static_cast<char>(c)) != std::string_view::npos;
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string shown(std::string_view s) {
  std::string out = "\"";
  for (const char c : s.substr(0, 200)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  return out + "\"";
}

std::string known_methods() {
  std::string out;
  for (const auto m : kMethods) {
    if (!out.empty()) out += ", ";
    out += m;
  }
  return out;
}

Error rule_error(std::string_view action, std::string_view spec, const std::string& what) {
  return Error::invalid("request rule " + shown(std::string(action) + " " + std::string(spec)) + ": " + what);
}

Result<std::vector<std::string>> parse_methods(std::string_view action, std::string_view spec,
                                               std::string_view list) {
  std::vector<std::string> methods;
  if (list == "*") return methods;
  while (true) {
    const std::size_t comma = list.find(',');
    const std::string_view m = trim(list.substr(0, comma));
    if (m.empty()) return rule_error(action, spec, "an empty method in the list; write e.g. GET,HEAD");
    if (m == "*") return rule_error(action, spec, "'*' stands alone; it cannot be part of a list");
    std::string up(m);
    for (char& c : up) c = ascii_upper(c);
    if (std::find(kMethods.begin(), kMethods.end(), up) == kMethods.end()) {
      return rule_error(
          action, spec,
          shown(m) + " is not an HTTP method a rule can name; use * or some of " + known_methods());
    }
    if (up != m) return rule_error(action, spec, "methods are upper case: write " + up);
    if (std::find(methods.begin(), methods.end(), up) == methods.end()) methods.push_back(up);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return methods;
}

Result<std::vector<std::string>> parse_pattern(std::string_view action, std::string_view spec,
                                               std::string_view pattern) {
  if (pattern.size() > kMaxPattern)
    return rule_error(action, spec, "the path pattern is longer than 1024 bytes");
  if (pattern.front() != '/') {
    return rule_error(action, spec,
                      "a path pattern starts with '/' (e.g. /o/r.git/**), got " + shown(pattern));
  }
  for (const char c : pattern) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '?' || c == '#') {
      return rule_error(action, spec, "rules match the path only; remove the query (" + shown(pattern) + ")");
    }
    if (c == '%') return rule_error(action, spec, "write the path decoded, without percent-escapes");
    if (c != '/' && c != '*' && !is_pattern_char(u)) {
      return rule_error(action, spec,
                        "the path pattern holds a character a URL path cannot: " + shown(pattern));
    }
  }
  std::vector<std::string> segments;
  std::string_view rest = pattern.substr(1);
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view seg = rest.substr(0, slash);
    const bool last = slash == std::string_view::npos;
    if (seg.empty() && !last)
      return rule_error(action, spec, "an empty path segment ('//') in " + shown(pattern));
    if (seg == "." || seg == "..") {
      return rule_error(action, spec, "'.' and '..' segments are not allowed in " + shown(pattern));
    }
    if (seg.find("**") != std::string_view::npos && seg != "**") {
      return rule_error(action, spec, "'**' must be a whole segment (/a/**/b), got " + shown(pattern));
    }
    segments.emplace_back(seg);
    if (last) break;
    rest.remove_prefix(slash + 1);
  }
  return segments;
}

// '*' within one segment; iterative with one backtrack point (linear in practice).
bool segment_matches(std::string_view pat, std::string_view text, bool ci) {
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  const auto eq = [ci](char a, char b) { return ci ? ascii_lower(a) == ascii_lower(b) : a == b; };
  while (t < text.size()) {
    if (p < pat.size() && pat[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pat.size() && eq(pat[p], text[t])) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  path.remove_prefix(1);
  while (true) {
    const std::size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

}  // namespace

std::string RequestRule::text() const {
  std::string m;
  for (const auto& x : methods) m += (m.empty() ? "" : ",") + x;
  if (m.empty()) m = "*";
  return std::string(action == RuleAction::allow ? "allow " : "deny ") + m + " " + pattern;
}

Result<RequestRule> parse_request_rule(std::string_view action, std::string_view spec, std::string reason,
                                       std::string origin) {
  RequestRule rule;
  if (action == "allow") {
    rule.action = RuleAction::allow;
  } else if (action == "deny") {
    rule.action = RuleAction::deny;
  } else {
    return rule_error(action, spec, "the action is " + shown(action) + "; write allow or deny");
  }
  const std::string_view s = trim(spec);
  if (s.empty()) return rule_error(action, spec, "no method; write e.g. \"GET /**\" or \"* /o/r.git/**\"");
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) return rule_error(action, spec, "control or non-ASCII characters in the rule");
  }
  const std::size_t sp = s.find_first_of(" \t");
  const std::string_view methods = s.substr(0, sp);
  const std::string_view pattern = sp == std::string_view::npos ? std::string_view() : trim(s.substr(sp));
  if (pattern.find_first_of(" \t") != std::string_view::npos) {
    return rule_error(action, spec, "a rule is METHODS PATTERN; the pattern has a space in it");
  }
  PX_TRY_ASSIGN(rule.methods, parse_methods(action, spec, methods));
  if (!pattern.empty()) rule.pattern = std::string(pattern);
  PX_TRY_ASSIGN(rule.segments, parse_pattern(action, spec, rule.pattern));
  for (const char c : reason) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
      return rule_error(action, spec, "the reason must be one line of text");
    }
  }
  if (reason.size() > 512) return rule_error(action, spec, "the reason is longer than 512 bytes");
  rule.reason = std::move(reason);
  rule.origin = std::move(origin);
  return rule;
}

Result<RequestRule> parse_request_rule_line(std::string_view line, std::string reason, std::string origin) {
  const std::string_view s = trim(line);
  const std::size_t sp = s.find_first_of(" \t");
  if (sp == std::string_view::npos) {
    return Error::invalid("request rule " + shown(s) +
                          ": write ACTION METHODS [PATTERN], e.g. \"allow GET /**\"");
  }
  return parse_request_rule(s.substr(0, sp), s.substr(sp + 1), std::move(reason), std::move(origin));
}

std::optional<std::string> canonical_path(std::string_view target) {
  if (target.empty() || target.front() != '/') return std::nullopt;
  target = target.substr(0, target.find('?'));
  std::string out;
  out.reserve(target.size());
  for (std::size_t i = 0; i < target.size(); ++i) {
    const char c = target[i];
    if (c == '\\' || c == ';' || c == '#') return std::nullopt;
    if (c != '%') {
      out += c;
      continue;
    }
    if (i + 2 >= target.size()) return std::nullopt;
    const int hi = hex(target[i + 1]);
    const int lo = hex(target[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    const auto byte = static_cast<unsigned char>(hi * 16 + lo);
    if (byte == '/' || byte == '\\' || byte == ';' || byte == 0) return std::nullopt;
    if (is_unreserved(byte)) {
      out += static_cast<char>(byte);
    } else {
      out += '%';
      out += ascii_upper(target[i + 1]);
      out += ascii_upper(target[i + 2]);
    }
    i += 2;
  }
  const auto segments = split_path(out);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const auto seg = segments[i];
    if (seg == "." || seg == "..") return std::nullopt;
    if (seg.empty() && i + 1 != segments.size()) return std::nullopt;  // "//"
  }
  return out;
}

bool path_matches(const std::vector<std::string>& pattern, std::string_view path, bool ci) {
  const auto text = split_path(path);
  // reach[j]: the first i pattern segments can match the first j path segments.
  std::vector<char> reach(text.size() + 1, 0);
  reach[0] = 1;
  for (const auto& seg : pattern) {
    std::vector<char> next(text.size() + 1, 0);
    if (seg == "**") {
      char any = 0;
      for (std::size_t j = 0; j <= text.size(); ++j) {
        any = static_cast<char>(any | reach[j]);
        next[j] = any;
      }
    } else {
      for (std::size_t j = 0; j < text.size(); ++j) {
        if (reach[j] && segment_matches(seg, text[j], ci)) next[j + 1] = 1;
      }
    }
    reach.swap(next);
  }
  return reach[text.size()] != 0;
}

RuleDecision decide(const std::vector<RequestRule>& rules, std::string_view method,
                    std::string_view canonical) {
  RuleDecision d;
  if (rules.empty()) return d;
  // A deny rule also catches the path without its trailing '/'.
  std::string_view trimmed = canonical;
  if (trimmed.size() > 1 && trimmed.back() == '/') trimmed.remove_suffix(1);
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const RequestRule& r = rules[i];
    if (!r.methods.empty() && std::find(r.methods.begin(), r.methods.end(), method) == r.methods.end())
      continue;
    const bool deny = r.action == RuleAction::deny;
    const bool hit =
        deny ? path_matches(r.segments, canonical, true) || path_matches(r.segments, trimmed, true)
             : path_matches(r.segments, canonical, false);
    if (!hit) continue;
    d.allowed = !deny;
    d.index = static_cast<int>(i);
    d.rule = &r;
    return d;
  }
  d.allowed = false;
  return d;
}

}  // namespace px::broker
