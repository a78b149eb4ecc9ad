#pragma once
// A user's world of its own for the escape tests that run the real
// `parallex` executable (front_door_test.cpp, git_routes_test.cpp,
// limits_test.cpp): a home, Parallex's state, a git repository to work in,
// under the user's home (the seal's /tmp is its own), and `parallex ARGS`
// run there.
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "scratch.hpp"
#include "test_paths.hpp"

namespace px::test {

namespace fs = std::filesystem;
using nlohmann::json;

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const fs::path& p, const std::string& text, fs::perms mode = fs::perms::none) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
  if (mode != fs::perms::none) fs::permissions(p, mode);
}

inline int sh(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

struct Ran {
  int status = -1;
  std::string out, err;
};

class RunFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* home = std::getenv("HOME");
    const fs::path base = fs::path(home && *home ? home : "/tmp") / ".cache/parallex-escape-tests";
    fs::create_directories(base);
    std::string templ = (base / "px-door-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    root_ = templ;
    home_ = root_ / "home";
    repo_ = root_ / "repo";
    fs::create_directories(home_);
    fs::create_directories(root_ / "runtime");
    fs::permissions(root_ / "runtime", fs::perms::owner_all);
    write_text(repo_ / "README", "hello\n");
    ASSERT_EQ(git(repo_, "init -q") + git(repo_, "add README") + git(repo_, "commit -qm init"), 0);
  }
  void TearDown() override { px::test::remove_unless_failed(root_, HasFailure()); }

  int git(const fs::path& dir, const std::string& args) {
    return sh(
        "git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main "
        "-c protocol.file.allow=always -C " +
        quote(dir.string()) + " " + args + " >/dev/null 2>&1");
  }

  // `parallex ARGS` in `dir` (default: the repository), with its state here.
  Ran px(const std::string& args, const std::string& env = "", const fs::path& dir = {}) {
    // Files of its own per call: a test may run parallex from two threads.
    static std::atomic<int> calls{0};
    const std::string n = std::to_string(calls++);
    const fs::path out = root_ / ("stdout." + n), err = root_ / ("stderr." + n);
    const std::string cmd =
        "cd " + quote((dir.empty() ? repo_ : dir).string()) + " && env HOME=" + quote(home_.string()) +
        " PARALLEX_HOME=" + quote((root_ / "data").string()) +
        " XDG_RUNTIME_DIR=" + quote((root_ / "runtime").string()) + " PATH=/usr/bin:/bin " + env + " " +
        PARALLEX_EXE + " " + args + " </dev/null >" + quote(out.string()) + " 2>" + quote(err.string());
    Ran r;
    r.status = sh(cmd);
    r.out = read_text(out);
    r.err = read_text(err);
    return r;
  }

  // The ad-hoc run started last, by its record's start time (milliseconds):
  // two runs in one second have ids that sort by their random part.
  fs::path last_run() const {
    fs::path newest;
    std::string newest_start;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root_ / "data/runs", ec)) {
      const json r = json::parse(read_text(e.path() / "run.json"), nullptr, false);
      const std::string start = r.is_object() ? r.value("started_at", "") : "";
      if (newest.empty() || start > newest_start) {
        newest = e.path();
        newest_start = start;
      }
    }
    return newest;
  }
  json last_record() const { return json::parse(read_text(last_run() / "run.json"), nullptr, false); }
  // The first run `parallex runs --json` lists, once it lists one (null after 2 s).
  json first_live_run() {
    for (int i = 0; i < 100; ++i) {
      const json runs = json::parse(px("runs --json").out, nullptr, false);
      if (runs.is_object() && runs.contains("runs") && !runs["runs"].empty()) return runs["runs"][0];
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return nullptr;
  }

  std::set<std::string> listing(const fs::path& dir) const {
    std::set<std::string> out;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      out.insert(it->path().lexically_relative(dir).string());
    return out;
  }

  fs::path root_, home_, repo_;
};

// The front door's tests (front_door_test.cpp, limits_test.cpp): one fixture
// class, as googletest requires of one test suite across files.
class EscapeFrontDoor : public RunFolderTest {};

}  // namespace px::test
