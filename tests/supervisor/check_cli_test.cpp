// `parallex check` names the kill switch's tracking mechanism and what it
// cannot catch: the real executable against the real probe of this machine.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "supervisor/cgroup.hpp"
#include "supervisor/run_control.hpp"

namespace {

std::string run(const std::string& cmd) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(cmd.c_str(), "r"), ::pclose);
  if (!p) return out;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p.get())) > 0;) out.append(buf.data(), n);
  return out;
}

}  // namespace

TEST(CheckCommand, NamesTheTrackingMechanism) {
  const auto probe = px::supervisor::probe_tracking();
  auto j = nlohmann::json::parse(run(std::string(PARALLEX_EXE) + " check --json"), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_TRUE(j.contains("kill_switch")) << j.dump(2);
  EXPECT_EQ(j["kill_switch"]["mechanism"], px::supervisor::to_string(probe.mechanism));
  EXPECT_FALSE(j["kill_switch"]["cannot_catch"].get<std::string>().empty());

  const std::string text = run(std::string(PARALLEX_EXE) + " check");
  EXPECT_NE(text.find("Kill switch (process tracking): " + probe.description), std::string::npos) << text;
}

// The seal's first process is born in the run's cgroup (clone3
// CLONE_INTO_CGROUP) or, where the kernel cannot, enters it before anything
// runs: either way what the command sees is the run's cgroup.
TEST(SealedRun, IsInItsCgroupFromTheStart) {
  if (!px::supervisor::probe_cgroup().usable) GTEST_SKIP() << px::supervisor::probe_cgroup().why_not;
  for (const std::string env : {"", "PARALLEX_NO_CLONE_INTO_CGROUP=1 "}) {
    const std::string out = run(std::string("cd ") + PARALLEX_BINARY_DIR + " && env " + env + PARALLEX_EXE +
                                " run -- cat /proc/self/cgroup 2>&1");
    EXPECT_NE(out.find("/parallex/"), std::string::npos) << env << out;
  }
}
