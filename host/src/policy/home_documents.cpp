#include "policy/home_documents.hpp"

#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include <set>
#include <sstream>

#include "common/json_io.hpp"

namespace px::policy::home {

namespace {

json from_toml(const toml::node& node) {
  if (const auto* table = node.as_table()) {
    json out = json::object();
    for (const auto& [key, value] : *table) out[std::string(key.str())] = from_toml(value);
    return out;
  }
  if (const auto* array = node.as_array()) {
    json out = json::array();
    for (const auto& value : *array) out.push_back(from_toml(value));
    return out;
  }
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* b = node.as_boolean()) return b->get();
  // Dates and times: compared as text.
  std::ostringstream text;
  if (const auto* d = node.as_date()) text << d->get();
  if (const auto* t = node.as_time()) text << t->get();
  if (const auto* dt = node.as_date_time()) text << dt->get();
  return text.str();
}

void walk(const json* before, const json* after, std::vector<std::string>& key, const HomeFile& file,
          std::vector<KeyChange>& out) {
  if (before && after && *before == *after) return;
  const bool objects = (!before || before->is_object()) && (!after || after->is_object());
  const bool below = rules_below(file, key);
  // Objects on both sides are compared key by key; a subtree added or removed
  // whole only when a rule lies below it (its keys may be of either kind).
  if (objects && ((before && after) || below) && !(before == nullptr && after == nullptr)) {
    std::set<std::string> keys;
    if (before)
      for (const auto& [k, v] : before->items()) keys.insert(k);
    if (after)
      for (const auto& [k, v] : after->items()) keys.insert(k);
    const std::size_t changes_before = out.size();
    for (const auto& k : keys) {
      const json* b = before && before->contains(k) ? &(*before)[k] : nullptr;
      const json* a = after && after->contains(k) ? &(*after)[k] : nullptr;
      key.push_back(k);
      walk(b, a, key, file, out);
      key.pop_back();
    }
    // An empty object that appeared or went ({} for {}): itself the change.
    if (out.size() != changes_before || key.empty()) return;
  }
  KeyChange c;
  c.key = key;
  if (before) c.before = *before;
  if (after) c.after = *after;
  const KeyVerdict verdict = kind_of_key(file, key);
  c.kind = verdict.kind;
  if (verdict.rule) c.reason = verdict.rule->reason;
  if (!verdict.rule && below) {
    c.kind = HomeKind::settings;
    c.reason = "it replaces keys that run commands";
  }
  out.push_back(std::move(c));
}

std::string shortened(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 160) text = text.substr(0, 157) + "...";
  return text;
}

}  // namespace

Result<json> read_document(const std::string& text, HomeFormat format) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return json::object();
  if (format == HomeFormat::toml) {
    toml::parse_result parsed = toml::parse(text);
    if (!parsed) {
      const auto& e = parsed.error();
      return Error::invalid("not TOML (line " + std::to_string(e.source().begin.line) + ": " +
                            std::string(e.description()) + ")");
    }
    return from_toml(parsed.table());
  }
  // What a run wrote (the harness's file in a home it could write): comparing
  // or printing a value recurses, so nesting past kMaxJsonDepth is refused
  // before the parse (a run wrote 300,000 levels and crashed `parallex run`'s
  // end step, before its last sweep of the run folder).
  json doc = parse_json_input(text, JsonComments::ignored);
  if (doc.is_discarded())
    return Error::invalid(json_nests_deeper_than(text, kMaxJsonDepth, JsonComments::ignored)
                              ? "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"
                              : "not JSON");
  if (!doc.is_object()) return Error::invalid("not a JSON object");
  return doc;
}

std::vector<KeyChange> diff_documents(const json& before, const json& after, const HomeFile& file) {
  std::vector<KeyChange> out;
  std::vector<std::string> key;
  walk(&before, &after, key, file, out);
  return out;
}

void apply_changes(json& doc, const std::vector<KeyChange>& changes) {
  for (const auto& c : changes) {
    if (c.key.empty()) {
      doc = c.after ? *c.after : json::object();
      continue;
    }
    json* at = &doc;
    bool reachable = true;
    for (std::size_t i = 0; i + 1 < c.key.size(); ++i) {
      if (!at->is_object()) {
        if (!c.after) {
          reachable = false;
          break;
        }
        *at = json::object();
      }
      if (!at->contains(c.key[i])) {
        if (!c.after) {
          reachable = false;
          break;
        }
        (*at)[c.key[i]] = json::object();
      }
      at = &(*at)[c.key[i]];
    }
    if (!reachable) continue;
    if (c.after) {
      if (!at->is_object()) *at = json::object();
      (*at)[c.key.back()] = *c.after;
    } else if (at->is_object()) {
      at->erase(c.key.back());
    }
  }
}

std::vector<std::string> describe_changes(const std::vector<KeyChange>& changes) {
  std::vector<std::string> lines;
  for (const auto& c : changes) {
    const std::string key = c.key.empty() ? "(the whole file)" : describe_key(c.key);
    std::string line;
    if (!c.before)
      line = "+ " + key + " = " + shortened(*c.after);
    else if (!c.after)
      line = "- " + key + " (was " + shortened(*c.before) + ")";
    else
      line = "~ " + key + " = " + shortened(*c.after) + " (was " + shortened(*c.before) + ")";
    if (!c.reason.empty()) line += "   # " + c.reason;
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string render_json(const json& doc) {
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

nlohmann::json to_json(const KeyChange& c) {
  nlohmann::json j{{"key", c.key}, {"kind", to_string(c.kind)}};
  if (c.before) j["before"] = *c.before;
  if (c.after) j["after"] = *c.after;
  if (!c.reason.empty()) j["reason"] = c.reason;
  return j;
}

KeyChange key_change_from_json(const nlohmann::json& j) {
  KeyChange c;
  if (j.contains("key") && j["key"].is_array())
    for (const auto& k : j["key"])
      if (k.is_string()) c.key.push_back(k.get<std::string>());
  if (j.contains("before")) c.before = j["before"];
  if (j.contains("after")) c.after = j["after"];
  c.kind = j.value("kind", "settings") == "data" ? HomeKind::data : HomeKind::settings;
  c.reason = j.value("reason", "");
  return c;
}

}  // namespace px::policy::home
