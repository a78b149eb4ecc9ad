#pragma once
// Lenient reads of a record's JSON: a key that is missing, or holds a value
// of another type, reads as empty (records written by older versions lack
// keys; nothing in a record is worth refusing the whole of it for). For
// run.json and its parts (record.cpp, record_parts.cpp) only.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace px::run::json_read {

inline std::string str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

inline std::optional<int> int_or_null(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int>();
}

inline std::uint64_t count_of(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

inline std::vector<std::string> strings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (auto it = j.find(key); it != j.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

// Each object of the array at `key`, read by `read`; anything else is passed over.
template <class T, class Read>
std::vector<T> objects(const nlohmann::json& j, const char* key, Read read) {
  std::vector<T> out;
  if (auto it = j.find(key); it != j.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_object()) out.push_back(read(v));
  return out;
}

template <class T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace px::run::json_read
