// Times a transcript parser: transcripts_parse_bench --harness claude-code|codex|opencode PATH...
// Prints one JSON line: bytes read, wall seconds, MB/s, sessions and commands found.
// --dump FILE also writes the sessions and warnings there, one JSON a line (after the timing), so
// that a change to a parser can be checked to give byte-identical output on the bench's sets.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "parallex_transcripts/claude_code.hpp"
#include "parallex_transcripts/codex.hpp"
#include "parallex_transcripts/opencode.hpp"

namespace tx = parallex::transcripts;

namespace {

std::uint64_t input_bytes(const std::vector<std::string>& paths) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& p : paths) {
    if (std::filesystem::is_regular_file(p, ec)) {
      total += std::filesystem::file_size(p, ec);
      continue;
    }
    for (auto it = std::filesystem::recursive_directory_iterator(p, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec)) total += it->file_size(ec);
    }
  }
  return total;
}

// CPU seconds (user + system) of this process: on a shared machine the wall time also
// counts the time spent waiting for a core.
double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto tv = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return tv(ru.ru_utime) + tv(ru.ru_stime);
}

}  // namespace

int main(int argc, char** argv) {
  std::string harness, dump;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--harness" && i + 1 < argc)
      harness = argv[++i];
    else if (a == "--dump" && i + 1 < argc)
      dump = argv[++i];
    else
      paths.push_back(a);
  }
  if (harness.empty() || paths.empty()) {
    std::cerr
        << "usage: transcripts_parse_bench --harness claude-code|codex|opencode [--dump FILE] PATH...\n";
    return 2;
  }
  std::uint64_t bytes = input_bytes(paths);
  double c0 = cpu_seconds();
  auto t0 = std::chrono::steady_clock::now();
  tx::ParseResult r;
  if (harness == "claude-code")
    r = tx::claude_code::parse(paths);
  else if (harness == "codex")
    r = tx::codex::parse(paths);
  else if (harness == "opencode")
    r = tx::opencode::parse(paths);
  else {
    std::cerr << "unknown harness " << harness << "\n";
    return 2;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu = cpu_seconds() - c0;
  std::size_t commands = 0;
  for (const auto& s : r.sessions) commands += s["commands"].size();
  std::printf(
      "{\"bytes\":%llu,\"seconds\":%.4f,\"cpu_seconds\":%.4f,\"mb_per_s\":%.1f,\"cpu_mb_per_s\":%.1f,"
      "\"sessions\":%zu,\"commands\":%zu,\"warnings\":%zu}\n",
      static_cast<unsigned long long>(bytes), secs, cpu, static_cast<double>(bytes) / 1e6 / secs,
      static_cast<double>(bytes) / 1e6 / cpu, r.sessions.size(), commands, r.warnings.size());
  if (!dump.empty()) {
    std::ofstream out(dump, std::ios::binary);
    for (const auto& s : r.sessions) out << s.dump() << '\n';
    for (const auto& w : r.warnings)
      out << nlohmann::json{{"path", w.path}, {"message", w.message}}.dump() << '\n';
    if (!out) {
      std::cerr << "cannot write " << dump << "\n";
      return 1;
    }
  }
  return 0;
}
