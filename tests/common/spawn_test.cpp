// common/spawn: every helper program the host starts goes through it, so
// each rule it keeps is tried here with real programs (sh, sleep, cat).
#include "common/spawn.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "common/temp_dir.hpp"

namespace px {
namespace {

using namespace std::chrono_literals;

SpawnSpec sh(const std::string& script) {
  return {.argv = {"sh", "-c", script}};
}

TEST(Spawn, KeepsStdoutAndStderrApartOrMerged) {
  auto apart = spawn_capture(sh("echo out; echo err >&2; exit 3"));
  ASSERT_TRUE(apart) << apart.error().message;
  EXPECT_EQ(apart.value().out, "out\n");
  EXPECT_EQ(apart.value().err, "err\n");
  EXPECT_EQ(apart.value().exit_status, 3);
  EXPECT_FALSE(apart.value().timed_out);
  EXPECT_FALSE(apart.value().too_big);

  auto merged = spawn_capture(sh("echo out; echo err >&2"), {.merge_stderr = true});
  ASSERT_TRUE(merged);
  EXPECT_EQ(merged.value().out, "out\nerr\n");
  EXPECT_EQ(merged.value().err, "");
}

TEST(Spawn, StdinIsTheGivenFileAndNeverTheTerminal) {
  auto dir = TempDir::make("px-spawn-");
  ASSERT_TRUE(dir);
  const auto input = dir.value().path() / "in";
  std::ofstream(input) << "from the file\n";
  SpawnSpec cat{.argv = {"cat"}, .stdin_file = input};
  auto got = spawn_capture(cat);
  ASSERT_TRUE(got);
  EXPECT_EQ(got.value().out, "from the file\n");
  // By default /dev/null: a helper that reads stdin ends at once.
  auto nothing = spawn_capture({.argv = {"cat"}}, {.timeout = 10s});
  ASSERT_TRUE(nothing);
  EXPECT_EQ(nothing.value().out, "");
  EXPECT_FALSE(nothing.value().timed_out);
}

TEST(Spawn, ATimeoutKillsTheWholeGroupWhenItHasOne) {
  auto dir = TempDir::make("px-spawn-");
  ASSERT_TRUE(dir);
  const auto pid_file = dir.value().path() / "grandchild";
  // The grandchild keeps the pipe open: without the group kill, the capture
  // would wait for it (and a secret helper's child would outlive the run's start).
  SpawnSpec spec = sh("sleep 30 & echo $! > '" + pid_file.string() + "'; wait");
  spec.own_process_group = true;
  const auto started = std::chrono::steady_clock::now();
  auto got = spawn_capture(spec, {.timeout = 300ms});
  ASSERT_TRUE(got);
  EXPECT_TRUE(got.value().timed_out);
  EXPECT_EQ(got.value().exit_status, 128 + SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_GT(grandchild, 0);
  // Killed: gone, or a zombie its new parent has not reaped yet (state Z).
  const auto running = [&] {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string pid, comm, state;
    if (!(stat >> pid >> comm >> state)) return false;
    return state != "Z" && state != "X";
  };
  for (int i = 0; i < 100 && running(); ++i) ::usleep(10000);
  EXPECT_FALSE(running()) << "the grandchild " << grandchild << " outlived the timeout";
}

// A browser leaves helpers behind that hold no pipe of ours: with
// end_group_after they go once it has ended; without it they are left alone
// (a secret command may start an agent meant to stay).
TEST(Spawn, WhatIsLeftOfTheGroupGoesWhenAskedOnceTheProgramEnded) {
  auto dir = TempDir::make("px-spawn-");
  ASSERT_TRUE(dir);
  for (const bool end_group : {true, false}) {
    const auto pid_file = dir.value().path() / (end_group ? "ended" : "left");
    SpawnSpec spec = sh("sleep 30 >/dev/null 2>&1 & echo $! > '" + pid_file.string() + "'; echo done");
    spec.own_process_group = true;
    auto got = spawn_capture(spec, {.timeout = 20s, .end_group_after = end_group});
    ASSERT_TRUE(got);
    EXPECT_EQ(got.value().out, "done\n");
    EXPECT_EQ(got.value().exit_status, 0);
    EXPECT_GT(got.value().pid, 0);
    pid_t helper = 0;
    std::ifstream(pid_file) >> helper;
    ASSERT_GT(helper, 0);
    const auto running = [&] {
      std::ifstream stat("/proc/" + std::to_string(helper) + "/stat");
      std::string pid, comm, state;
      if (!(stat >> pid >> comm >> state)) return false;
      return state != "Z" && state != "X";
    };
    for (int i = 0; i < 100 && end_group && running(); ++i) ::usleep(10000);
    EXPECT_EQ(running(), !end_group) << "the helper " << helper
                                     << (end_group ? " outlived" : " did not outlive") << " the program";
    if (!end_group) ::kill(helper, SIGKILL);
  }
}

TEST(Spawn, OutputPastTheLimitEndsTheProgramAndKeepsWhatCameBefore) {
  auto got = spawn_capture(sh("while :; do echo 0123456789; done"), {.timeout = 20s, .max_bytes = 1000});
  ASSERT_TRUE(got);
  EXPECT_TRUE(got.value().too_big);
  EXPECT_FALSE(got.value().timed_out);
  EXPECT_EQ(got.value().out.size(), 1000u);
  EXPECT_EQ(got.value().out.substr(0, 11), "0123456789\n");
}

TEST(Spawn, SigpipeIsAtItsDefaultInTheHelper) {
  // The host may ignore SIGPIPE (a closed socket must not kill it); an
  // ignored signal stays ignored across exec, so a helper would inherit it.
  struct sigaction ignore {};
  struct sigaction before {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &before);
  // The shell's own mask of ignored signals, from /proc (hex).
  auto got =
      spawn_capture(sh("while read -r k v; do [ \"$k\" = SigIgn: ] && echo \"$v\"; done </proc/$$/status"));
  ::sigaction(SIGPIPE, &before, nullptr);
  ASSERT_TRUE(got);
  ASSERT_FALSE(got.value().out.empty());
  const unsigned long long ignored = std::stoull(got.value().out, nullptr, 16);
  EXPECT_EQ(ignored & (1ULL << (SIGPIPE - 1)), 0u) << "SigIgn " << got.value().out;
}

TEST(Spawn, AProgramThatIsNotThereIsAnErrorNamingIt) {
  auto got = spawn_capture({.argv = {"px-no-such-helper-program"}});
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message.find("px-no-such-helper-program"), std::string::npos) << got.error().message;
  auto empty = spawn_process({});
  ASSERT_FALSE(empty);
}

TEST(Spawn, TheEnvironmentIsTheGivenOneWhenGiven) {
  auto got = spawn_capture({.argv = {"/bin/sh", "-c", "echo \"[$PX_SPAWN_TEST][$HOME]\""},
                            .env = std::vector<std::string>{"PX_SPAWN_TEST=given"}});
  ASSERT_TRUE(got);
  EXPECT_EQ(got.value().out, "[given][]\n");
}

}  // namespace
}  // namespace px
