// `parallex check` names the kill switch's tracking mechanism and what it
// cannot catch: the real executable against the real probe of this machine.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "common/temp_dir.hpp"
#include "killswitch/cgroup.hpp"
#include "killswitch/run_control.hpp"
#include "spawn.hpp"
#include "test_paths.hpp"
#include "unprivileged_user.hpp"

namespace {

using px::test::shell_output;

}  // namespace

TEST(CheckCommand, NamesTheTrackingMechanism) {
  const auto probe = px::killswitch::probe_tracking();
  auto j = nlohmann::json::parse(shell_output(std::string(PARALLEX_EXE) + " check --json"), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_TRUE(j.contains("kill_switch")) << j.dump(2);
  EXPECT_EQ(j["kill_switch"]["mechanism"], px::killswitch::to_string(probe.mechanism));
  EXPECT_FALSE(j["kill_switch"]["cannot_catch"].get<std::string>().empty());

  const std::string text = shell_output(std::string(PARALLEX_EXE) + " check");
  EXPECT_NE(text.find("Kill switch (process tracking): " + probe.description), std::string::npos) << text;
}

// The cgroup row of `check` agrees with the kill switch: where this user
// may not make the run's cgroup (a user whose cgroup is not delegated) the
// row is not "enforced" beside a process-tree fallback. As root, then again
// as pxtest.
TEST(CheckCommand, TheCgroupRowAgreesWithTheKillSwitch) {
  auto j = nlohmann::json::parse(shell_output(std::string(PARALLEX_EXE) + " check --json"), nullptr, false);
  ASSERT_TRUE(j.is_object());
  const nlohmann::json* row = nullptr;
  for (const auto& g : j["guarantees"])
    if (g["id"] == "cgroup2") row = &g;
  ASSERT_NE(row, nullptr) << j.dump(2);
  EXPECT_EQ((*row)["enforced"].get<bool>(), j["kill_switch"]["mechanism"] == "cgroup")
      << "uid " << ::getuid() << ": " << row->dump() << " beside " << j["kill_switch"].dump();
  if (::getuid() != 0 || std::getenv("PX_CHECK_AS_USER")) return;
  const auto user = px::test::unprivileged_user();
  ASSERT_TRUE(user) << "the unprivileged user could not be had";
  const auto pass =
      px::test::rerun_self_as(*user, "CheckCommand.TheCgroupRowAgreesWithTheKillSwitch", "PX_CHECK_AS_USER");
  EXPECT_TRUE(pass.passed()) << pass.output;
}

// The seal's first process is born in the run's cgroup (clone3
// CLONE_INTO_CGROUP) or, where the kernel cannot, enters it before anything
// runs: either way what the command sees is the run's cgroup.
TEST(SealedRun, IsInItsCgroupFromTheStart) {
  if (!px::killswitch::probe_cgroup().usable) GTEST_SKIP() << px::killswitch::probe_cgroup().why_not;
  // Its records go to a state folder of the test's own, not the user's.
  const px::TempDir state = px::TempDir::make("px-cgroup-test").value();
  for (const std::string env : {"", "PARALLEX_NO_CLONE_INTO_CGROUP=1 "}) {
    const std::string out = shell_output(std::string("cd ") + PARALLEX_BINARY_DIR +
                                         " && env PARALLEX_HOME=" + state.path().string() + " " + env +
                                         PARALLEX_EXE + " run -- cat /proc/self/cgroup 2>&1");
    EXPECT_NE(out.find("/parallex/"), std::string::npos) << env << out;
  }
}

// What the seal refused is printed at the end of the run and kept in its
// record, with where it came from and what was not collected.
TEST(SealedRun, PrintsAndRecordsWhatTheSealRefused) {
  char templ[] = "/tmp/px-refusals-XXXXXX";
  ASSERT_NE(::mkdtemp(templ), nullptr);
  const std::string home = templ;
  const std::string out =
      shell_output("cd " + std::string(PARALLEX_BINARY_DIR) + " && PARALLEX_HOME=" + home + " " +
                   PARALLEX_EXE + " run -- /usr/bin/unshare -U /bin/true 2>&1");
  EXPECT_NE(out.find("the seal refused 1 request: unshare CLONE_NEWUSER (unshare)"), std::string::npos)
      << out;
  const std::string records = shell_output("cat " + home + "/runs/*/run.json");
  auto record = nlohmann::json::parse(records, nullptr, false);
  ASSERT_FALSE(record.is_discarded()) << records;
  const auto& refusals = record["seal_refusals"];
  ASSERT_TRUE(refusals.is_object()) << record.dump(2);
  EXPECT_EQ(refusals["collected_from"][0], "seccomp (user notification)");
  ASSERT_EQ(refusals["refused"].size(), 1u) << refusals.dump(2);
  EXPECT_EQ(refusals["refused"][0]["source"], "seccomp");
  EXPECT_EQ(refusals["refused"][0]["call"], "unshare CLONE_NEWUSER");
  EXPECT_EQ(refusals["refused"][0]["process"], "unshare");
  EXPECT_EQ(refusals["refused"][0]["count"], 1);
  // Landlock's are collected or the record says why not.
  const bool landlock_collected = refusals["collected_from"].size() == 2;
  EXPECT_TRUE(landlock_collected || refusals["not_collected"].dump().find("Landlock") != std::string::npos)
      << refusals.dump(2);
  shell_output("rm -rf " + home);
}

TEST(CheckCommand, SaysWhatARunRecordsOfRefusals) {
  auto j = nlohmann::json::parse(shell_output(std::string(PARALLEX_EXE) + " check --json"), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_TRUE(j.contains("refusals_recorded")) << j.dump(2);
  std::set<std::string> ids;
  for (const auto& r : j["refusals_recorded"]) {
    ids.insert(r["id"].get<std::string>());
    EXPECT_FALSE(r["detail"].get<std::string>().empty());
  }
  EXPECT_EQ(ids, (std::set<std::string>{"seccomp.record", "landlock.audit"}));
  // Recording is not part of the seal's strength.
  for (const auto& g : j["guarantees"]) EXPECT_EQ(ids.count(g["id"].get<std::string>()), 0u) << g.dump();
}

// `check --sealed`: a real sealed run per way out; each is denied, the exit
// status says so, and what seccomp refused is recorded by the supervisor.
TEST(CheckCommand, SealedEveryWayOutHoldsAndSeccompRefusalsAreRecorded) {
  const std::string cmd =
      "cd /tmp && " + std::string(PARALLEX_EXE) + " check --sealed --json; echo \"exit=$?\"";
  const std::string out = shell_output(cmd);
  const auto exit_at = out.rfind("exit=");
  ASSERT_NE(exit_at, std::string::npos) << out;
  if (out.find("could not be set up") != std::string::npos)
    GTEST_SKIP() << "this kernel cannot seal: " << out;
  auto j = nlohmann::json::parse(out.substr(0, exit_at), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(out.substr(exit_at), "exit=0\n");
  EXPECT_EQ(j["open"], 0) << j.dump(2);
  ASSERT_GE(j["ways_out"].size(), 14u) << j.dump(2);
  std::map<std::string, std::string> recorded;
  for (const auto& w : j["ways_out"]) {
    EXPECT_TRUE(w["held"].get<bool>()) << w.dump();
    recorded[w["way_out"].get<std::string>()] = w["recorded"].get<std::string>();
  }
  // ptrace passes seccomp (Landlock scopes it to the run's own processes), so
  // its refusal is Landlock's, recorded only from the kernel audit log.
  EXPECT_EQ(recorded["inject a keystroke (TIOCSTI)"], "ioctl TIOCSTI");
  EXPECT_EQ(recorded["inject a keystroke (TIOCSTI | 1<<32)"], "ioctl TIOCSTI");
  EXPECT_EQ(recorded["open a raw packet socket (AF_PACKET)"], "socket AF_PACKET");
}
