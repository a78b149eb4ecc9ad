// Reading runs' events from their record folders: a file read as it grows
// (a line half written waits for its newline), the three files of a run
// merged by time with each file's order kept, and a record made before
// events.jsonl existed.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/run_events.hpp"
#include "run/events.hpp"
#include "run/record.hpp"
#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

fs::path scratch_dir(const std::string& name) {
  std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / (name + "-XXXXXX")).string();
  EXPECT_TRUE(::mkdtemp(tmpl.data()));
  return tmpl;
}

void append(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::app | std::ios::binary) << text;
}

std::vector<std::string> types_of(const std::vector<ordered_json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e["type"]);
  return out;
}

std::string event_text(const std::string& time, const std::string& type) {
  return ordered_json{{"v", 1}, {"time", time}, {"run", "r1"}, {"type", type}}.dump() + "\n";
}
std::string proxy_text(const std::string& time, const std::string& host, const std::string& verdict) {
  return json{{"time", time},       {"method", "DNS"},
              {"host", host},       {"port", 53},
              {"verdict", verdict}, {"reason", verdict == "allowed" ? "allowed" : "blocked-by-allowlist"}}
             .dump() +
         "\n";
}

TEST(GrowingFile, AHalfWrittenLineWaitsForItsNewline) {
  const fs::path dir = scratch_dir("events-growing");
  px::report::GrowingFile f(dir / "log.jsonl");
  EXPECT_TRUE(f.read_new().empty()) << "a file not made yet has no lines";
  append(dir / "log.jsonl", "{\"a\":1}\n{\"b\":");
  EXPECT_EQ(f.read_new(), std::vector<std::string>{"{\"a\":1}"});
  EXPECT_TRUE(f.read_new().empty());
  append(dir / "log.jsonl", "2}\n\n{\"c\":3}\n");
  EXPECT_EQ(f.read_new(), (std::vector<std::string>{"{\"b\":2}", "{\"c\":3}"}));
  // From the end: what was there is not read again, what comes is.
  px::report::GrowingFile late(dir / "log.jsonl");
  late.skip_to_end();
  append(dir / "log.jsonl", "{\"d\":4}\n");
  EXPECT_EQ(late.read_new(), std::vector<std::string>{"{\"d\":4}"});
  // A file made after skip_to_end() is new: all of it is read.
  px::report::GrowingFile later(dir / "new.jsonl");
  later.skip_to_end();
  append(dir / "new.jsonl", "{\"e\":5}\n");
  EXPECT_EQ(later.read_new(), std::vector<std::string>{"{\"e\":5}"});
  fs::remove_all(dir);
}

TEST(RunEvents, TheRunsFilesMergeByTimeEachFilesOrderKept) {
  const fs::path dir = scratch_dir("events-run");
  append(dir / "events.jsonl", event_text("2026-12-06T11:40:00.000Z", "run.start"));
  append(dir / "proxy.jsonl", proxy_text("2026-12-06T11:40:01.000Z", "ok.test", "allowed"));
  // A clock that stepped back inside one file: that file's order stands.
  append(dir / "proxy.jsonl", proxy_text("2026-12-06T11:40:00.500Z", "evil.test", "denied"));
  px::report::RunEvents run({"r1", dir, ""}, true);
  auto first = run.poll();
  EXPECT_EQ(types_of(first), (std::vector<std::string>{"run.start", "network.allowed", "network.refused"}));
  EXPECT_FALSE(run.ended());
  append(dir / "proxy.jsonl", "not json\n");
  append(dir / "events.jsonl", event_text("2026-12-06T11:40:03.000Z", "run.end"));
  append(dir / "proxy.jsonl", proxy_text("2026-12-06T11:40:02.000Z", "ok.test", "allowed"));
  auto second = run.poll();
  EXPECT_EQ(types_of(second), (std::vector<std::string>{"network.allowed", "run.end"}));
  EXPECT_TRUE(run.ended());
  EXPECT_EQ(run.skipped(), 1u);
  // Read whole, the same events in the same order.
  auto whole = px::report::read_run_events({"r1", dir, ""});
  first.insert(first.end(), second.begin(), second.end());
  EXPECT_EQ(whole, first);
  fs::remove_all(dir);
}

TEST(RunEvents, ARecordWithoutEventsGivesItsStartAndEndOnceEnded) {
  const fs::path dir = scratch_dir("events-old");
  px::run::RunRecord r;
  r.id = "20261206-114000-ab12";
  r.started_at = "2026-12-06T11:40:00.000Z";
  r.status = px::run::RunStatus::running;
  ASSERT_TRUE(px::run::write_record(dir, r));
  append(dir / "proxy.jsonl", proxy_text("2026-12-06T11:40:01.000Z", "ok.test", "allowed"));
  px::report::RunEvents run({r.id, dir, ""}, true);
  EXPECT_EQ(types_of(run.poll()), std::vector<std::string>{"network.allowed"});
  r.ended_at = "2026-12-06T11:40:02.000Z";
  r.status = px::run::RunStatus::exited;
  r.exit_code = 0;
  r.exit_status = 0;
  ASSERT_TRUE(px::run::write_record(dir, r));
  auto rest = run.poll();
  EXPECT_EQ(types_of(rest), (std::vector<std::string>{"run.start", "run.end"}));
  EXPECT_TRUE(run.ended());
  EXPECT_EQ(types_of(px::report::read_run_events({r.id, dir, ""})),
            (std::vector<std::string>{"run.start", "network.allowed", "run.end"}));
  fs::remove_all(dir);
}

TEST(MergeByTime, EqualTimesKeepTheOrderOfTheSequences) {
  auto e = [](const std::string& time, const std::string& type) {
    return ordered_json{{"time", time}, {"type", type}};
  };
  auto merged =
      px::report::merge_by_time({{e("2026-01-01T00:00:02.000Z", "a2"), e("2026-01-01T00:00:01.000Z", "a1")},
                                 {e("2026-01-01T00:00:01.000Z", "b1"), e("2026-01-01T00:00:02.000Z", "b2")}});
  EXPECT_EQ(types_of(merged), (std::vector<std::string>{"b1", "a2", "a1", "b2"}));
}

TEST(RunSources, EachIdOnceFromTheFirstFolderThatHoldsIt) {
  const fs::path root = scratch_dir("events-sources");
  for (const char* d : {"new/r1", "new/r2", "old/r1", "old/r3", "new/.hidden", "new/empty"})
    fs::create_directories(root / d);
  for (const char* d : {"new/r1", "new/r2", "old/r1", "old/r3", "new/.hidden"})
    append(root / d / "proxy.jsonl", "");
  const auto sources = px::report::list_run_sources({{root / "new", "a"}, {root / "old", "b"}});
  ASSERT_EQ(sources.size(), 3u);
  EXPECT_EQ(sources[0].id, "r1");
  EXPECT_EQ(sources[0].agent, "a");
  EXPECT_EQ(sources[2].id, "r3");
  EXPECT_EQ(sources[2].agent, "b");
  fs::remove_all(root);
}

}  // namespace
