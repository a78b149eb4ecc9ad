#pragma once
// Sealed runs through the real executable for the broker's end-to-end tests
// (run_test.cpp): `parallex-test-trust run ...` with a private PARALLEX_HOME
// and runtime dir, loopback servers named through PARALLEX_TEST_RESOLVE, and
// the tests' CA trusted for upstreams (PARALLEX_TEST_UPSTREAM_CA).
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spawn.hpp"

namespace px::broker::test {

// Running programs: the tests' shared helpers (tests/support/spawn.hpp).
using ::px::test::Background;
using ::px::test::have;
using ::px::test::Outcome;
using ::px::test::slurp;
using ::px::test::spawn_and_wait;

// A folder for one test: home/ (PARALLEX_HOME), userhome/ ($HOME), runtime/,
// work/ (the run folder), secrets/ (0700, never granted), logs/; removed at
// the end unless the test failed.
class RunFolder {
 public:
  RunFolder();
  ~RunFolder();
  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path work() const { return root_ / "work"; }
  std::filesystem::path home() const { return root_ / "home"; }
  std::filesystem::path user_home() const { return root_ / "userhome"; }
  std::filesystem::path secrets() const { return root_ / "secrets"; }
  // Where the test keeps its profile files: outside any git working tree, as
  // a user's ~/.config/parallex/profiles is (the build folder lies in the
  // clone, and parallex refuses credentials from an untracked file there).
  const std::filesystem::path& profiles() const { return profiles_; }
  // The environment every parallex call of the test gets.
  std::vector<std::string> env(const std::string& resolve) const;
  // parallex-test-trust ARGS (run, agent new, ...).
  Outcome parallex(const std::vector<std::string>& args, const std::string& resolve = {},
                   const std::vector<std::string>& extra = {},
                   std::chrono::seconds timeout = std::chrono::seconds(120),
                   const std::string& input = {}) const;
  // The newest run's folder under home/ (its run.json, proxy.jsonl, requests.jsonl).
  std::filesystem::path latest_run() const;
  void keep() { keep_ = true; }

 private:
  std::filesystem::path root_;
  std::filesystem::path profiles_;
  bool keep_ = false;
};

std::vector<nlohmann::json> json_lines(const std::filesystem::path& p);

}  // namespace px::broker::test
