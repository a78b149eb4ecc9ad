#include "mcp/schema.hpp"

#include <regex>

#include "common/shown.hpp"

namespace px::mcp {
namespace {

bool has_type(const Json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "integer") return v.is_number_integer() || v.is_number_unsigned();
  if (type == "number") return v.is_number();
  if (type == "null") return v.is_null();
  return false;
}

std::string name_of(const std::string& where) {
  return where.empty() ? "the arguments" : "\"" + where + "\"";
}

// Every string of the arguments, names and values, through the one NUL
// check (common/shown.hpp): a path or a name holding one would be cut short
// where it reaches the kernel or git.
std::optional<std::string> nul_in(const Json& value, const std::string& where) {
  if (value.is_string()) {
    if (auto nul = refuse_nul(value.get_ref<const std::string&>(), "the argument " + name_of(where)); !nul)
      return nul.error().message;
  } else if (value.is_object()) {
    for (const auto& [key, v] : value.items()) {
      const std::string path = where.empty() ? key : where + "." + key;
      if (auto nul = refuse_nul(key, "an argument's name"); !nul) return nul.error().message;
      if (auto why = nul_in(v, path)) return why;
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      if (auto why = nul_in(value[i], where + "[" + std::to_string(i) + "]")) return why;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_schema(const Json& schema, const Json& value, const std::string& where) {
  if (!schema.is_object()) return std::nullopt;
  if (where.empty())
    if (auto why = nul_in(value, where)) return why;
  if (auto t = schema.find("type"); t != schema.end() && t->is_string()) {
    if (!has_type(value, t->get<std::string>()))
      return name_of(where) + " must be of type " + t->get<std::string>() + ", not " + value.type_name() +
             ".";
  }
  if (auto e = schema.find("enum"); e != schema.end() && e->is_array()) {
    bool found = false;
    for (const auto& option : *e) found = found || option == value;
    if (!found) return name_of(where) + " must be one of " + e->dump() + ".";
  }
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    if (auto m = schema.find("minLength"); m != schema.end() && s.size() < m->get<std::size_t>())
      return name_of(where) + " must have at least " + std::to_string(m->get<std::size_t>()) + " characters.";
    if (auto m = schema.find("maxLength"); m != schema.end() && s.size() > m->get<std::size_t>())
      return name_of(where) + " must have at most " + std::to_string(m->get<std::size_t>()) + " characters.";
    if (auto p = schema.find("pattern"); p != schema.end() && p->is_string()) {
      if (!std::regex_search(s, std::regex(p->get<std::string>(), std::regex::ECMAScript)))
        return name_of(where) + " must match the pattern " + p->get<std::string>() + ".";
    }
  }
  if (value.is_number()) {
    const double d = value.get<double>();
    if (auto m = schema.find("minimum"); m != schema.end() && d < m->get<double>())
      return name_of(where) + " must be at least " + m->dump() + ".";
    if (auto m = schema.find("maximum"); m != schema.end() && d > m->get<double>())
      return name_of(where) + " must be at most " + m->dump() + ".";
  }
  if (value.is_object()) {
    const Json props = schema.value("properties", Json::object());
    if (auto r = schema.find("required"); r != schema.end() && r->is_array()) {
      for (const auto& key : *r)
        if (key.is_string() && !value.contains(key.get<std::string>()))
          return "The argument \"" + (where.empty() ? "" : where + ".") + key.get<std::string>() +
                 "\" is required.";
    }
    const bool closed = schema.value("additionalProperties", true) == false;
    for (const auto& [key, v] : value.items()) {
      const std::string path = where.empty() ? key : where + "." + key;
      if (auto p = props.find(key); p != props.end()) {
        if (auto why = check_schema(*p, v, path)) return why;
      } else if (closed) {
        return "Unknown argument \"" + path + "\"; the tool takes " +
               (props.empty() ? std::string("no arguments") : [&] {
                 std::string names;
                 for (const auto& [k, unused] : props.items()) names += (names.empty() ? "" : ", ") + k;
                 return names;
               }()) + ".";
      }
    }
  }
  if (value.is_array()) {
    if (auto items = schema.find("items"); items != schema.end()) {
      for (std::size_t i = 0; i < value.size(); ++i)
        if (auto why = check_schema(*items, value[i], where + "[" + std::to_string(i) + "]")) return why;
    }
  }
  return std::nullopt;
}

}  // namespace px::mcp
