#pragma once
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "test_paths.hpp"

namespace px_test {

inline std::string fixtures_dir() {
  return std::string(PARALLEX_SOURCE_DIR) + "/tests/fixtures/transcripts";
}

inline nlohmann::json load_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// A parser's session with the time of each action (its `action_times`, one per entry of
// `commands` and `files_changed`) put into the entries as `at`, so that a test can state an
// action with its time in one object. The session's own entries hold only the contract's fields.
inline nlohmann::json times_in_entries(nlohmann::json session) {
  const nlohmann::json times = session.value("action_times", nlohmann::json::object());
  for (const char* list : {"commands", "files_changed"}) {
    const nlohmann::json at = times.value(list, nlohmann::json::array());
    auto& entries = session[list];
    for (std::size_t i = 0; i < entries.size(); ++i) entries[i]["at"] = i < at.size() ? at[i] : nullptr;
  }
  session.erase("action_times");
  return session;
}

// A fresh directory under the system temp dir, removed at scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("px-transcripts-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add,
                                 ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path() const { return path_.string(); }
  std::string file(const std::string& rel, const std::string& content) const {
    auto p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace px_test
