// The floor under the transcript parsers: simdjson 3 alone (DOM, which the parsers use, and
// On-Demand) on the same lines, each validating a line and reading the fields every parser
// reads first (the record's type and its payload's type), and nothing else.
//   transcripts_json_floor DIR...   (run.sh runs it on its sets)
// Prints one table row per way: seconds of the fastest of three passes, one core, files
// already in memory (no reading, no threads: the JSON alone).
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Lines {
  std::vector<std::string> files;  // each with simdjson's padding after its end
  std::size_t bytes = 0;
  template <class F>
  void each(F&& f) const {
    for (const auto& file : files) {
      const std::string_view all(file.data(), file.size() - simdjson::SIMDJSON_PADDING);
      for (std::size_t at = 0; at < all.size();) {
        const std::size_t nl = std::min(all.find('\n', at), all.size());
        f(all.substr(at, nl - at));
        at = nl + 1;
      }
    }
  }
};

Lines load(int argc, char** argv) {
  Lines l;
  for (int i = 1; i < argc; ++i)
    for (const auto& e : std::filesystem::recursive_directory_iterator(argv[i])) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      l.bytes += text.str().size();
      l.files.push_back(text.str() + std::string(simdjson::SIMDJSON_PADDING, ' '));
    }
  return l;
}

template <class F>
void time(const char* name, const Lines& lines, F&& read_line) {
  double best = 1e300;
  std::size_t found = 0;
  for (int pass = 0; pass < 3; ++pass) {
    found = 0;
    const auto start = std::chrono::steady_clock::now();
    lines.each([&](std::string_view line) { found += read_line(line); });
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("| %s | %.3f | %.0f | %zu |\n", name, best, static_cast<double>(lines.bytes) / 1e6 / best,
              found);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: transcripts_json_floor DIR...\n");
    return 2;
  }
  const Lines lines = load(argc, argv);
  std::printf("%.0f MB; simdjson %s, kernel %s\n\n", static_cast<double>(lines.bytes) / 1e6,
              SIMDJSON_STRINGIFY(SIMDJSON_VERSION), simdjson::get_active_implementation()->name().c_str());
  std::printf("| simdjson | seconds | MB/s | fields found |\n|---|---:|---:|---:|\n");

  simdjson::dom::parser dom;
  time("simdjson DOM (validates all, copies strings)", lines, [&](std::string_view line) -> std::size_t {
    simdjson::dom::element e;
    if (dom.parse(line.data(), line.size(), false).get(e)) return 0;
    std::string_view s;
    return std::size_t{!e["type"].get(s)} + !e["payload"]["type"].get(s);
  });

  simdjson::ondemand::parser ondemand;
  time("simdjson On-Demand (validates what it reads)", lines, [&](std::string_view line) -> std::size_t {
    simdjson::ondemand::document d;
    simdjson::ondemand::object o;
    // The padding is there: each file is followed by SIMDJSON_PADDING spaces.
    if (ondemand.iterate(line.data(), line.size(), line.size() + simdjson::SIMDJSON_PADDING).get(d) ||
        d.get_object().get(o))
      return 0;
    std::size_t n = 0;
    // One forward pass, as On-Demand requires: the fields in the order they come.
    for (auto field : o) {
      std::string_view key, s;
      if (field.unescaped_key().get(key)) return 0;
      if (key == "type") {
        n += !field.value().get_string().get(s);
      } else if (key == "payload") {
        simdjson::ondemand::object p;
        if (field.value().get_object().get(p)) continue;
        for (auto inner : p) {
          if (inner.unescaped_key().get(key)) return 0;
          if (key == "type") n += !inner.value().get_string().get(s);
        }
      }
    }
    return n;
  });
  return 0;
}
