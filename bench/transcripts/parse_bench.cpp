// Times a transcript parser: transcripts_parse_bench --harness claude-code|codex|opencode PATH...
// Prints one JSON line: bytes read, wall seconds, MB/s, sessions and commands found.
// --harness floor: what every parser must do and nothing more, on the same threads: read each
// .jsonl file with the parsers' reader and validate each line with their simdjson parser (the
// report counts a line broken anywhere as malformed, so no parser can validate less). Its time
// is the floor the parsers' time is compared with.
// --dump FILE also writes the sessions and warnings there, one JSON a line (after the timing), so
// that a change to a parser can be checked to give byte-identical output on the bench's sets.
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "common/json_dom.hpp"
#include "common/line_reader.hpp"
#include "common/util.hpp"
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

// Reads and validates every line of every .jsonl file under `paths`; returns the lines that are
// a JSON object (the parsers' only test before they read fields).
std::size_t validate_only(const std::vector<std::string>& paths) {
  std::vector<tx::Warning> warnings;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    auto found = tx::list_files(p, ".jsonl", warnings);
    files.insert(files.end(), found.begin(), found.end());
  }
  struct Reading {
    tx::LineReader reader;
    tx::jsonl::Parser json;
  };
  std::atomic<std::size_t> objects{0};
  tx::parallel_for_with<Reading>(files.size(), tx::worker_count(files), [&](Reading& r, std::size_t i) {
    std::string error;
    if (!r.reader.open(files[i], error)) return;
    std::string_view line;
    std::size_t n = 0;
    while (r.reader.next(line, error) == tx::LineReader::Status::line)
      n += r.json.parse(line, /*padded=*/true).is_object();
    objects += n;
  });
  return objects;
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
    std::cerr << "usage: transcripts_parse_bench --harness claude-code|codex|opencode|floor [--dump FILE] "
                 "PATH...\n";
    return 2;
  }
  std::uint64_t bytes = input_bytes(paths);
  double c0 = cpu_seconds();
  auto t0 = std::chrono::steady_clock::now();
  tx::ParseResult r;
  if (harness == "floor") {
    const std::size_t objects = validate_only(paths);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - c0;
    std::printf("{\"bytes\":%llu,\"seconds\":%.4f,\"cpu_seconds\":%.4f,\"objects\":%zu}\n",
                static_cast<unsigned long long>(bytes), secs, cpu, objects);
    return 0;
  }
  // Each session as the text a plugin hands to the host: what the plugins run.
  if (harness == "claude-code")
    r = tx::claude_code::parse(paths, {}, tx::Form::text);
  else if (harness == "codex")
    r = tx::codex::parse(paths, {}, tx::Form::text);
  else if (harness == "opencode")
    r = tx::opencode::parse(paths, {}, tx::Form::text);
  else {
    std::cerr << "unknown harness " << harness << "\n";
    return 2;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double cpu = cpu_seconds() - c0;
  std::size_t commands = 0;  // counted after the timing
  simdjson::dom::parser counter;
  for (const auto& s : r.texts) {
    simdjson::dom::array list;
    if (!counter.parse(s)["commands"].get(list)) commands += list.size();
  }
  std::printf(
      "{\"bytes\":%llu,\"seconds\":%.4f,\"cpu_seconds\":%.4f,\"mb_per_s\":%.1f,\"cpu_mb_per_s\":%.1f,"
      "\"sessions\":%zu,\"commands\":%zu,\"warnings\":%zu}\n",
      static_cast<unsigned long long>(bytes), secs, cpu, static_cast<double>(bytes) / 1e6 / secs,
      static_cast<double>(bytes) / 1e6 / cpu, r.texts.size(), commands, r.warnings.size());
  if (!dump.empty()) {
    std::ofstream out(dump, std::ios::binary);
    for (const auto& s : r.texts) out << s << '\n';
    for (const auto& w : r.warnings)
      out << nlohmann::json{{"path", w.path}, {"message", w.message}}.dump() << '\n';
    if (!out) {
      std::cerr << "cannot write " << dump << "\n";
      return 1;
    }
  }
  return 0;
}
