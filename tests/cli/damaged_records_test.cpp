// Damaged run records meet the commands that read records: `runs`, `runs
// --json`, `report`, `report --json`. A run.json that is a folder, a FIFO, a
// symbolic link, empty, cut short, garbage, holding a NUL byte, nested
// 200,000 deep or missing its id: no command crashes or hangs (each is
// bounded by a time-out), each names the damaged file and skips it, `report`
// picks the newest readable run rather than the damaged one, and nothing is
// written over. A valid record left without an end is closed as lost keeping
// everything it held.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_support.hpp"
#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;
using namespace px::cli_test;
using nlohmann::json;

const std::string kGoodId = "20260101-100000-a0a0";
const std::string kBadId = "20991231-235959-dead";  // newer than the good one: a report would pick it

std::string good_record(const std::string& id, const std::string& start) {
  return json{{"schema", 2},
              {"id", id},
              {"command", "true"},
              {"argv", {"true"}},
              {"run_folder", "/tmp"},
              {"started_at", start},
              {"ended_at", start},
              {"status", "exited"},
              {"exit_code", 0},
              {"exit_status", 0},
              {"policy", json::object()}}
      .dump(2);
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Damage {
  const char* name;
  std::function<void(const fs::path& file)> make;
};

const Damage kDamages[] = {
    {"folder", [](const fs::path& f) { fs::create_directories(f); }},
    {"fifo", [](const fs::path& f) { ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0); }},
    {"symlink", [](const fs::path& f) { fs::create_symlink("/etc/passwd", f); }},
    {"empty", [](const fs::path& f) { write(f, ""); }},
    {"garbage", [](const fs::path& f) { write(f, "hello {\x1b[31m not json"); }},
    {"truncated",
     [](const fs::path& f) {
       const std::string whole = good_record(kBadId, "2099-12-31T23:59:59.000Z");
       write(f, whole.substr(0, whole.size() / 2));
     }},
    {"nul",
     [](const fs::path& f) {
       std::string whole = good_record(kBadId, "2099-12-31T23:59:59.000Z");
       whole.insert(whole.find("true") + 2, 1, '\0');
       write(f, whole);
     }},
    {"deep",
     [](const fs::path& f) {
       const std::string head =
           "{\"schema\":2,\"id\":\"" + kBadId +
           "\",\"started_at\":\"2099-12-31T23:59:59.000Z\",\"status\":\"running\",\"notices\":";
       write(f, head + std::string(200000, '[') + std::string(200000, ']') + "}");
     }},
    {"no-id", [](const fs::path& f) { write(f, "{}"); }},
};

class DamagedRecords : public ::testing::TestWithParam<Damage> {};

TEST_P(DamagedRecords, AreNamedSkippedAndLeftAsTheyWere) {
  Folder home;
  const fs::path runs = home.path / "runs";
  write(runs / kGoodId / "run.json", good_record(kGoodId, "2026-01-01T10:00:00.000Z"));
  const fs::path bad = runs / kBadId / "run.json";
  fs::create_directories(bad.parent_path());
  GetParam().make(bad);
  const auto type_before = fs::symlink_status(bad).type();
  const std::string bytes_before = fs::is_regular_file(fs::symlink_status(bad)) ? slurp(bad) : "";

  for (const char* args : {"runs", "runs --json", "report", "report --json"}) {
    SCOPED_TRACE(std::string(GetParam().name) + ": parallex " + args);
    const Ran r = sh("timeout 20 " + std::string(PARALLEX_EXE) + " " + args,
                     {{"PARALLEX_HOME", home.path.string()}, {"XDG_RUNTIME_DIR", home.path.string()}});
    ASSERT_NE(r.status, 124) << "hung";
    EXPECT_LT(r.status, 64) << "crashed or failed inside: " << r.err;
    // Named, with its path; its control bytes never reach the terminal raw.
    EXPECT_NE(r.err.find(bad.string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("damaged"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    if (std::string(args).rfind("report", 0) == 0) {
      EXPECT_EQ(r.status, 0) << r.err;
      EXPECT_NE(r.out.find(kGoodId), std::string::npos) << "the readable run is the latest: " << r.out;
    }
    if (std::string(args) == "report --json") {
      const json rep = json::parse(r.out, nullptr, false);
      ASSERT_TRUE(rep.is_object()) << r.out;
      ASSERT_EQ(rep["runs"].size(), 1u);
      EXPECT_EQ(rep["runs"][0]["id"], kGoodId);
    }
    EXPECT_EQ(fs::symlink_status(bad).type(), type_before) << "the damaged record was replaced";
    if (!bytes_before.empty()) {
      EXPECT_EQ(slurp(bad), bytes_before) << "the damaged record was written over";
    }
  }
  // The report of that very run says why there is none.
  const Ran one = sh("timeout 20 " + std::string(PARALLEX_EXE) + " report --run " + kBadId,
                     {{"PARALLEX_HOME", home.path.string()}, {"XDG_RUNTIME_DIR", home.path.string()}});
  EXPECT_EQ(one.status, 3) << one.err;
  EXPECT_NE(one.err.find(bad.string()), std::string::npos) << one.err;
}

INSTANTIATE_TEST_SUITE_P(Kinds, DamagedRecords, ::testing::ValuesIn(kDamages), [](const auto& p) {
  std::string n = p.param.name;
  for (auto& c : n)
    if (c == '-') c = '_';
  return n;
});

// A record its supervisor never finished (it died): `runs` closes it as lost,
// keeping its status' history, command, start, and what this Parallex does
// not know of; its end is never before its start.
TEST(LostRecords, AreClosedKeepingEverythingTheyHeld) {
  Folder home;
  const fs::path dir = home.path / "runs" / kBadId;
  json rec = json::parse(good_record(kBadId, "2099-12-31T23:59:59.000Z"));
  rec.erase("ended_at");
  rec["status"] = "running";
  rec["supervisor"] = {{"pid", 0}, {"start_ticks", 0}};
  rec["command"] = "make test";
  rec["notices"] = json::array({{{"kind", "seal"}, {"text", "a notice"}}, json::array({1, 2})});
  rec["from_a_newer_parallex"] = {{"kept", true}};
  write(dir / "run.json", rec.dump(2));

  const Ran r = sh("timeout 20 " + std::string(PARALLEX_EXE) + " runs",
                   {{"PARALLEX_HOME", home.path.string()}, {"XDG_RUNTIME_DIR", home.path.string()}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("closed it as lost"), std::string::npos) << r.err;
  const json after = json::parse(slurp(dir / "run.json"), nullptr, false);
  ASSERT_TRUE(after.is_object());
  EXPECT_EQ(after["status"], "lost");
  EXPECT_EQ(after["end_known"], false);
  EXPECT_EQ(after["command"], "make test");
  EXPECT_EQ(after["started_at"], rec["started_at"]);
  EXPECT_GE(after["ended_at"].get<std::string>(), rec["started_at"].get<std::string>());
  EXPECT_EQ(after["from_a_newer_parallex"], rec["from_a_newer_parallex"]);
  ASSERT_EQ(after["notices"].size(), 3u) << after["notices"].dump();
  EXPECT_EQ(after["notices"][1], json::array({1, 2}));
}

}  // namespace
