#include "policy/home_files.hpp"

#include "common/paths.hpp"

namespace px::policy {

const char* to_string(HomeKind kind) {
  switch (kind) {
    case HomeKind::settings:
      return "settings";
    case HomeKind::scratch:
      return "scratch";
    case HomeKind::data:
      break;
  }
  return "data";
}

const char* to_string(HomeFormat format) {
  switch (format) {
    case HomeFormat::json:
      return "json";
    case HomeFormat::toml:
      return "toml";
    case HomeFormat::whole:
      break;
  }
  return "whole";
}

bool HomeFile::guarded() const {
  if (kind != HomeKind::data) return true;
  for (const auto& k : keys)
    if (k.kind == HomeKind::settings) return true;
  return false;
}

std::vector<std::string> split_key_pattern(std::string_view pattern, const fs::path& run_folder) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= pattern.size()) {
    const std::size_t dot = pattern.find('.', start);
    const std::string_view part = pattern.substr(start, dot == std::string_view::npos ? dot : dot - start);
    out.push_back(part == "{run_folder}" ? run_folder.string() : std::string(part));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return out;
}

std::vector<HomeFile> resolve_home_files(const DeclaredHomeFiles& declared, const fs::path& home,
                                         const fs::path& run_folder) {
  std::vector<HomeFile> out;
  for (const auto& f : declared.files) {
    HomeFile h;
    h.path = normal_absolute(expand_home(f.path, home));
    h.directory = f.directory;
    h.kind = f.kind;
    h.format = f.format;
    h.reason = f.reason;
    h.origin = Origin::plugin(declared.plugin);
    for (const auto& k : f.keys)
      h.keys.push_back({split_key_pattern(k.pattern, run_folder), k.kind, k.reason, k.pattern});
    out.push_back(std::move(h));
  }
  return out;
}

const HomeFile* home_file_for(const std::vector<HomeFile>& files, const fs::path& path) {
  const HomeFile* best = nullptr;
  std::size_t best_depth = 0;
  for (const auto& f : files) {
    if (!is_within(path, f.path)) continue;
    const auto d = static_cast<std::size_t>(std::distance(f.path.begin(), f.path.end()));
    if (!best || d > best_depth) {
      best = &f;
      best_depth = d;
    }
  }
  return best;
}

namespace {

bool segment_matches(const std::string& pattern, const std::string& key) {
  return pattern == "*" || pattern == key;
}

}  // namespace

KeyVerdict kind_of_key(const HomeFile& file, const std::vector<std::string>& key) {
  for (const auto& rule : file.keys) {
    if (rule.pattern.size() > key.size()) continue;
    bool match = true;
    for (std::size_t i = 0; match && i < rule.pattern.size(); ++i)
      match = segment_matches(rule.pattern[i], key[i]);
    if (match) return {rule.kind, &rule};
  }
  return {file.kind, nullptr};
}

bool rules_below(const HomeFile& file, const std::vector<std::string>& prefix) {
  for (const auto& rule : file.keys) {
    if (rule.pattern.size() <= prefix.size()) continue;
    bool match = true;
    for (std::size_t i = 0; match && i < prefix.size(); ++i)
      match = segment_matches(rule.pattern[i], prefix[i]);
    if (match) return true;
  }
  return false;
}

std::string describe_key(const std::vector<std::string>& key) {
  std::string out;
  for (const auto& k : key) {
    const bool plain = !k.empty() && k.find_first_of(".[]\"/ ") == std::string::npos;
    if (plain)
      out += (out.empty() ? "" : ".") + k;
    else
      out += "[\"" + k + "\"]";
  }
  return out;
}

}  // namespace px::policy
