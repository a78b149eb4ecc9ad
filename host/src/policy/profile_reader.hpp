#pragma once
// Reading a policy YAML document (a profile, the broker's sections of
// agent.yaml) with messages that name the file, the line and the key.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "policy/profile.hpp"

namespace px::policy {

// Turns YAML structure problems into messages naming file, line and key.
class ProfileReader {
 public:
  explicit ProfileReader(std::string file) : file_(std::move(file)) {}

  std::optional<Error> error;

  int line(const YAML::Node& node) const { return node.Mark().line + 1; }

  void fail(const YAML::Node& node, const std::string& key, const std::string& what) {
    if (error) return;
    error = Error::invalid(file_ + ":" + std::to_string(line(node)) + ": " + key + ": " + what);
  }

  // Checks that `map` only has keys from `allowed`.
  bool keys(const YAML::Node& map, const std::string& where, const std::set<std::string>& allowed) {
    if (!map.IsMap()) {
      fail(map, where, "expected a mapping of keys");
      return false;
    }
    for (const auto& kv : map) {
      const std::string key = kv.first.as<std::string>();
      if (!allowed.count(key)) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(kv.first, where.empty() ? key : where + "." + key, "unknown key; expected one of: " + list);
        return false;
      }
    }
    return true;
  }

  std::optional<std::string> scalar(const YAML::Node& node, const std::string& key) {
    if (!node.IsScalar()) {
      fail(node, key, "expected a single value");
      return std::nullopt;
    }
    return node.Scalar();
  }

  std::optional<bool> boolean(const YAML::Node& node, const std::string& key) {
    bool value = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
      fail(node, key, "expected true or false");
      return std::nullopt;
    }
    return value;
  }

  // A list whose items are "value" or {<field>: value, reason: text}.
  std::vector<ProfileEntry> entries(const YAML::Node& node, const std::string& key, const char* field) {
    std::vector<ProfileEntry> out;
    if (!node || node.IsNull()) return out;
    if (!node.IsSequence()) {
      fail(node, key, "expected a list");
      return out;
    }
    for (const auto& item : node) {
      ProfileEntry e;
      e.line = line(item);
      if (item.IsScalar()) {
        e.value = item.Scalar();
      } else if (item.IsMap()) {
        if (!keys(item, key, {field, "reason"})) return out;
        if (!item[field]) {
          fail(item, key, std::string("an entry needs '") + field + "'");
          return out;
        }
        auto v = scalar(item[field], key + "." + field);
        if (!v) return out;
        e.value = *v;
        if (item["reason"]) {
          auto r = scalar(item["reason"], key + ".reason");
          if (!r) return out;
          e.reason = *r;
        }
      } else {
        fail(item, key, std::string("expected a ") + field + " or {" + field + ": ..., reason: ...}");
        return out;
      }
      out.push_back(std::move(e));
    }
    return out;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

}  // namespace px::policy
