#pragma once
// A small SBPL evaluator for tests: parses the S-expressions the Seatbelt writer
// emits, binds -D parameters, and decides an operation the way Seatbelt does:
// the last rule whose operation and filter match wins; a rule without a filter
// matches every use of its operation; with no matching rule, (deny default).
//
// It is deliberately strict: a referenced parameter that is not bound, a form
// it does not know (import, debug) or an unbalanced list is a load error, and a
// filter it cannot evaluate (vnode-type, extension) that could decide a query
// makes the answer `unknown` rather than a guess.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace px::sbpl {

struct Node {
  enum class Kind { list, symbol, string, regex };
  Kind kind = Kind::symbol;
  std::string text;         // symbol, string or regex body
  std::vector<Node> items;  // list
  int line = 0;
};

// Parses every top-level form; on error returns nullopt and sets `error`.
std::optional<std::vector<Node>> parse(std::string_view text, std::string* error);

struct Address {
  std::string host;  // "localhost", "127.0.0.1", "::1", or any other host
  int port = 0;
};

struct Query {
  std::string operation;            // file-read-data, file-write-create, network-outbound, mach-lookup...
  std::optional<std::string> path;  // file operations
  std::optional<Address> remote;    // network-outbound
  std::optional<Address> local;     // network-bind, network-inbound
  std::optional<std::string> name;  // mach-lookup (global-name), sysctl-read (sysctl-name)

  static Query file(std::string op, std::string p) { return {std::move(op), std::move(p), {}, {}, {}}; }
  static Query connect(std::string host, int port) {
    return {"network-outbound", {}, Address{std::move(host), port}, {}, {}};
  }
  static Query bind(std::string host, int port) {
    return {"network-bind", {}, {}, Address{std::move(host), port}, {}};
  }
  static Query named(std::string op, std::string n) { return {std::move(op), {}, {}, {}, std::move(n)}; }
};

enum class Decision { allow, deny, unknown };
const char* to_string(Decision d);

struct Outcome {
  Decision decision = Decision::deny;
  int line = 0;      // line of the deciding rule (0: nothing matched)
  std::string rule;  // the deciding rule, parameters shown as (param "NAME")
};

class Profile {
 public:
  // Loads `text` with the -D bindings; returns nullopt and sets `error` on a
  // problem sandbox-exec would also refuse (syntax, unbound parameter).
  static std::optional<Profile> load(std::string_view text,
                                     const std::vector<std::pair<std::string, std::string>>& params,
                                     std::string* error);

  Outcome evaluate(const Query& query) const;

  // Convenience for tests.
  Decision decide(const Query& query) const { return evaluate(query).decision; }
  bool allows(const Query& query) const { return decide(query) == Decision::allow; }

  std::size_t rule_count() const { return rules_.size(); }
  bool has_deny_default_first() const { return deny_default_first_; }

 private:
  struct Rule {
    bool allow = false;
    std::vector<std::string> operations;
    std::vector<Node> filters;  // any of them (OR)
    int line = 0;
    std::string text;
  };
  enum class Tri { no, yes, unknown };
  Tri match(const Node& filter, const Query& q) const;
  std::optional<std::string> value(const Node& arg, std::string* error) const;
  bool check_params(const Node& node, std::string* error) const;

  std::vector<Rule> rules_;
  std::map<std::string, std::string> params_;
  bool deny_default_first_ = false;
};

// Writes a node back as SBPL text (for messages).
std::string to_text(const Node& node);

}  // namespace px::sbpl
