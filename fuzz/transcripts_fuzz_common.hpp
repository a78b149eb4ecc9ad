#pragma once
// Shared by the transcript fuzz targets: the parsers read files, so each input is written
// to a scratch directory (tmpfs when available) that lives as long as the process.
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "parallex_transcripts/result.hpp"

namespace px_fuzz {

inline const std::string& scratch_dir() {
  // Leaked on purpose: the exit handler that removes the directory runs after statics die.
  static const std::string* dir = [] {
    std::string base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    std::string tmpl = base + "/px-fuzz-transcripts-XXXXXX";
    if (!mkdtemp(tmpl.data())) std::abort();
    auto* made = new std::string(tmpl);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return made;
  }();
  return *dir;
}

inline void write_file(const std::string& path, std::string_view data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (!data.empty()) std::fwrite(data.data(), 1, data.size(), f);
  std::fclose(f);
}

// Properties every result must have whatever the input: sessions dump as valid JSON.
inline void check(const parallex::transcripts::ParseResult& r) {
  for (const auto& s : r.sessions) {
    std::string text = s.dump();  // throws (and so crashes the fuzzer) on invalid UTF-8
    if (!s.is_object() || !s.contains("session_id")) std::abort();
  }
}

}  // namespace px_fuzz
