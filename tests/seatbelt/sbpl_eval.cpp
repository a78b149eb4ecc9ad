#include "sbpl_eval.hpp"

#include <regex>

namespace px::sbpl {

namespace {

class Parser {
 public:
  Parser(std::string_view text, std::string* error) : s_(text), error_(error) {}

  std::optional<std::vector<Node>> all() {
    std::vector<Node> out;
    for (;;) {
      skip();
      if (i_ >= s_.size()) return out;
      if (s_[i_] == ')') return fail("unexpected ')'");
      auto n = node();
      if (!n) return std::nullopt;
      out.push_back(std::move(*n));
    }
  }

 private:
  std::nullopt_t fail(const std::string& what) {
    if (error_) *error_ = "line " + std::to_string(line_) + ": " + what;
    return std::nullopt;
  }

  void skip() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\n')
        ++line_, ++i_;
      else if (c == ' ' || c == '\t' || c == '\r')
        ++i_;
      else if (c == ';') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else
        break;
    }
  }

  std::optional<std::string> quoted() {  // at the opening quote
    std::string out;
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\n') ++line_;
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      out += s_[i_++];
    }
    if (i_ >= s_.size()) {
      fail("a string is not closed");
      return std::nullopt;
    }
    ++i_;
    return out;
  }

  std::optional<Node> node() {
    skip();
    if (i_ >= s_.size()) return fail("unexpected end of profile");
    Node n;
    n.line = line_;
    const char c = s_[i_];
    if (c == '(') {
      ++i_;
      n.kind = Node::Kind::list;
      for (;;) {
        skip();
        if (i_ >= s_.size())
          return fail("a list opened on line " + std::to_string(n.line) + " is not closed");
        if (s_[i_] == ')') {
          ++i_;
          return n;
        }
        auto child = node();
        if (!child) return std::nullopt;
        n.items.push_back(std::move(*child));
      }
    }
    if (c == '"') {
      auto q = quoted();
      if (!q) return std::nullopt;
      n.kind = Node::Kind::string;
      n.text = *q;
      return n;
    }
    if (c == '#' && i_ + 1 < s_.size() && s_[i_ + 1] == '"') {
      // #"regex": the body is raw; \" keeps a quote in it.
      ++i_;
      ++i_;
      std::string body;
      while (i_ < s_.size() && s_[i_] != '"') {
        if (s_[i_] == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '"') ++i_;
        body += s_[i_++];
      }
      if (i_ >= s_.size()) return fail("a regex is not closed");
      ++i_;
      n.kind = Node::Kind::regex;
      n.text = body;
      return n;
    }
    if (c == ')') return fail("unexpected ')'");
    std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] != '(' && s_[i_] != ')' && s_[i_] != ' ' && s_[i_] != '\n' &&
           s_[i_] != '\t' && s_[i_] != '\r' && s_[i_] != ';' && s_[i_] != '"')
      ++i_;
    n.kind = Node::Kind::symbol;
    n.text = std::string(s_.substr(start, i_ - start));
    return n;
  }

  std::string_view s_;
  std::string* error_;
  std::size_t i_ = 0;
  int line_ = 1;
};

bool op_matches(const std::string& rule_op, const std::string& op) {
  if (rule_op == "default") return true;
  if (!rule_op.empty() && rule_op.back() == '*')
    return op.rfind(rule_op.substr(0, rule_op.size() - 1), 0) == 0;
  return rule_op == op;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// "localhost:8080", "*:*": the only forms Seatbelt accepts in an ip filter.
bool address_matches(const std::string& spec, const Address& a) {
  const auto colon = spec.rfind(':');
  if (colon == std::string::npos) return false;
  const std::string host = spec.substr(0, colon), port = spec.substr(colon + 1);
  const bool host_ok = host == "*" || (host == "localhost" && is_loopback(a.host));
  const bool port_ok = port == "*" || port == std::to_string(a.port);
  return host_ok && port_ok;
}

}  // namespace

const char* to_string(Decision d) {
  switch (d) {
    case Decision::allow:
      return "allow";
    case Decision::deny:
      return "deny";
    case Decision::unknown:
      return "unknown";
  }
  return "unknown";
}

std::optional<std::vector<Node>> parse(std::string_view text, std::string* error) {
  return Parser(text, error).all();
}

std::string to_text(const Node& n) {
  switch (n.kind) {
    case Node::Kind::symbol:
      return n.text;
    case Node::Kind::string:
      return "\"" + n.text + "\"";
    case Node::Kind::regex:
      return "#\"" + n.text + "\"";
    case Node::Kind::list: {
      std::string out = "(";
      for (std::size_t i = 0; i < n.items.size(); ++i) out += (i ? " " : "") + to_text(n.items[i]);
      return out + ")";
    }
  }
  return {};
}

bool Profile::check_params(const Node& n, std::string* error) const {
  if (n.kind != Node::Kind::list) return true;
  if (!n.items.empty() && n.items[0].kind == Node::Kind::symbol && n.items[0].text == "param") {
    if (n.items.size() != 2 || n.items[1].kind != Node::Kind::string) {
      if (error) *error = "line " + std::to_string(n.line) + ": (param) takes one string";
      return false;
    }
    if (!params_.count(n.items[1].text)) {
      if (error)
        *error = "line " + std::to_string(n.line) + ": parameter " + n.items[1].text + " is not bound";
      return false;
    }
    return true;
  }
  for (const auto& child : n.items)
    if (!check_params(child, error)) return false;
  return true;
}

std::optional<Profile> Profile::load(std::string_view text,
                                     const std::vector<std::pair<std::string, std::string>>& params,
                                     std::string* error) {
  auto forms = parse(text, error);
  if (!forms) return std::nullopt;
  Profile p;
  for (const auto& [k, v] : params) p.params_[k] = v;
  bool first_rule = true;
  for (const auto& f : *forms) {
    if (f.kind != Node::Kind::list || f.items.empty() || f.items[0].kind != Node::Kind::symbol) {
      if (error)
        *error = "line " + std::to_string(f.line) + ": expected a (rule ...) form, got " + to_text(f);
      return std::nullopt;
    }
    const std::string& head = f.items[0].text;
    if (head == "version") {
      if (f.items.size() != 2 || f.items[1].text != "1") {
        if (error) *error = "line " + std::to_string(f.line) + ": only (version 1) is known";
        return std::nullopt;
      }
      continue;
    }
    if (head != "allow" && head != "deny") {
      if (error) *error = "line " + std::to_string(f.line) + ": the form (" + head + " ...) is not supported";
      return std::nullopt;
    }
    if (!p.check_params(f, error)) return std::nullopt;
    Rule r;
    r.allow = head == "allow";
    r.line = f.line;
    r.text = to_text(f);
    for (std::size_t i = 1; i < f.items.size(); ++i) {
      const Node& item = f.items[i];
      if (item.kind == Node::Kind::symbol) {
        if (!r.filters.empty()) {
          if (error)
            *error = "line " + std::to_string(item.line) + ": operation " + item.text + " after a filter";
          return std::nullopt;
        }
        r.operations.push_back(item.text);
      } else if (item.kind == Node::Kind::list) {
        r.filters.push_back(item);
      } else {
        if (error)
          *error = "line " + std::to_string(item.line) + ": unexpected " + to_text(item) + " in a rule";
        return std::nullopt;
      }
    }
    if (r.operations.empty()) {
      if (error) *error = "line " + std::to_string(f.line) + ": a rule names no operation";
      return std::nullopt;
    }
    if (first_rule) {
      p.deny_default_first_ =
          !r.allow && r.operations == std::vector<std::string>{"default"} && r.filters.empty();
      first_rule = false;
    }
    p.rules_.push_back(std::move(r));
  }
  return p;
}

std::optional<std::string> Profile::value(const Node& arg, std::string* error) const {
  if (arg.kind == Node::Kind::string) return arg.text;
  if (arg.kind == Node::Kind::list && arg.items.size() == 2 && arg.items[0].text == "param") {
    auto it = params_.find(arg.items[1].text);
    if (it != params_.end()) return it->second;
  }
  if (error) *error = "cannot evaluate " + to_text(arg);
  return std::nullopt;
}

Profile::Tri Profile::match(const Node& f, const Query& q) const {
  if (f.kind != Node::Kind::list || f.items.empty()) return Tri::unknown;
  const std::string& kind = f.items[0].text;
  auto combine_all = [&](bool any) {
    bool unknown = false;
    for (std::size_t i = 1; i < f.items.size(); ++i) {
      const Tri t = match(f.items[i], q);
      if (any && t == Tri::yes) return Tri::yes;
      if (!any && t == Tri::no) return Tri::no;
      unknown = unknown || t == Tri::unknown;
    }
    if (unknown) return Tri::unknown;
    return any ? Tri::no : Tri::yes;
  };
  if (kind == "require-all") return combine_all(false);
  if (kind == "require-any") return combine_all(true);
  if (kind == "require-not") {
    if (f.items.size() != 2) return Tri::unknown;
    const Tri t = match(f.items[1], q);
    return t == Tri::unknown ? t : (t == Tri::yes ? Tri::no : Tri::yes);
  }
  if (kind == "literal" || kind == "path" || kind == "subpath" || kind == "prefix" || kind == "regex") {
    if (!q.path) return Tri::no;
    if (f.items.size() != 2) return Tri::unknown;
    const std::string& path = *q.path;
    if (kind == "regex") {
      if (f.items[1].kind != Node::Kind::regex) return Tri::unknown;
      try {
        return std::regex_search(path, std::regex(f.items[1].text, std::regex::extended)) ? Tri::yes
                                                                                          : Tri::no;
      } catch (const std::regex_error&) {
        return Tri::unknown;
      }
    }
    auto v = value(f.items[1], nullptr);
    if (!v) return Tri::unknown;
    if (kind == "literal" || kind == "path") return path == *v ? Tri::yes : Tri::no;
    if (kind == "prefix") return path.rfind(*v, 0) == 0 ? Tri::yes : Tri::no;
    // subpath: the path itself or anything below it, on component boundaries.
    if (path == *v) return Tri::yes;
    const std::string dir = !v->empty() && v->back() == '/' ? *v : *v + "/";
    return path.rfind(dir, 0) == 0 ? Tri::yes : Tri::no;
  }
  if (kind == "remote" || kind == "local") {
    const auto& addr = kind == "remote" ? q.remote : q.local;
    if (!addr) return Tri::no;
    if (f.items.size() != 3 || f.items[1].text != "ip") return Tri::unknown;
    auto v = value(f.items[2], nullptr);
    if (!v) return Tri::unknown;
    return address_matches(*v, *addr) ? Tri::yes : Tri::no;
  }
  if (kind == "global-name" || kind == "local-name" || kind == "sysctl-name") {
    if (!q.name) return Tri::no;
    auto v = f.items.size() == 2 ? value(f.items[1], nullptr) : std::nullopt;
    if (!v) return Tri::unknown;
    return *q.name == *v ? Tri::yes : Tri::no;
  }
  if (kind == "sysctl-name-prefix") {
    if (!q.name) return Tri::no;
    auto v = f.items.size() == 2 ? value(f.items[1], nullptr) : std::nullopt;
    if (!v) return Tri::unknown;
    return q.name->rfind(*v, 0) == 0 ? Tri::yes : Tri::no;
  }
  return Tri::unknown;  // vnode-type, extension, target, ...: not modelled
}

Outcome Profile::evaluate(const Query& q) const {
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    const Rule& r = *it;
    bool op = false;
    for (const auto& o : r.operations) op = op || op_matches(o, q.operation);
    if (!op) continue;
    Tri t = r.filters.empty() ? Tri::yes : Tri::no;
    for (const auto& f : r.filters) {
      const Tri m = match(f, q);
      if (m == Tri::yes) {
        t = Tri::yes;
        break;
      }
      if (m == Tri::unknown) t = Tri::unknown;
    }
    if (t == Tri::no) continue;
    if (t == Tri::unknown) return {Decision::unknown, r.line, r.text};
    return {r.allow ? Decision::allow : Decision::deny, r.line, r.text};
  }
  return {Decision::deny, 0, "(no rule matched: deny)"};
}

}  // namespace px::sbpl
