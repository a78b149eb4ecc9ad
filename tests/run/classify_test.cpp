// How a run ended, from what the supervisor knows at its end: every way a
// run can end is a row here, with the exit status the user then gets.
#include "run/classify.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

namespace px::run {
namespace {

struct Row {
  const char* what;
  RunOutcome outcome;
  RunStatus status;
  int exit_status;  // from the status, the exit code and the signal the record keeps
};

RunOutcome launched(int exit_code, int signal = 0) {
  RunOutcome o;
  o.launched = true;
  o.exit_code = exit_code;
  o.signal = signal;
  return o;
}
template <class F>
RunOutcome with(RunOutcome o, F change) {
  change(o);
  return o;
}

const std::vector<Row>& rows() {
  static const std::vector<Row> table{
      {"the command exited 0", launched(0), RunStatus::exited, 0},
      {"the command exited 3", launched(3), RunStatus::exited, 3},
      {"the command died of SIGSEGV", launched(128 + SIGSEGV, SIGSEGV), RunStatus::signaled, 128 + SIGSEGV},
      {"the command died of a SIGKILL not the kill switch's", launched(137, SIGKILL), RunStatus::signaled,
       137},
      {"`parallex kill`: the kill switch's SIGKILL",
       with(launched(137, SIGKILL), [](auto& o) { o.killed = true; }), RunStatus::killed, 137},
      {"killed as the command exited by itself", with(launched(0), [](auto& o) { o.killed = true; }),
       RunStatus::killed, 0},
      {"SIGTERM to parallex: the run ended through the kill switch",
       with(launched(137, SIGKILL),
            [](auto& o) {
              o.stop_signal = SIGTERM;
              o.killed = true;
            }),
       RunStatus::interrupted, 128 + SIGTERM},
      {"SIGHUP to parallex as the command exited", with(launched(0), [](auto& o) { o.stop_signal = SIGHUP; }),
       RunStatus::interrupted, 128 + SIGHUP},
      {"the launch found no command (exit 127)", with(launched(127), [](auto& o) { o.launch_said = true; }),
       RunStatus::not_found, 127},
      {"the launch could not run the command (exit 126)",
       with(launched(126), [](auto& o) { o.launch_said = true; }), RunStatus::not_executable, 126},
      {"the command itself exited 127", launched(127), RunStatus::exited, 127},
      {"the command itself exited 126", launched(126), RunStatus::exited, 126},
      {"the launch said something and the command exited 1",
       with(launched(1), [](auto& o) { o.launch_said = true; }), RunStatus::exited, 1},
      {"a set-up step failed", with(RunOutcome{}, [](auto& o) { o.step_failed = true; }),
       RunStatus::setup_failed, 125},
      {"the seal failed at launch", with(RunOutcome{}, [](auto& o) { o.step_failed = true; }),
       RunStatus::setup_failed, 125},
      {"the run ended before its command started, no error", RunOutcome{}, RunStatus::setup_failed, 125},
      {"SIGINT to parallex during set-up",
       with(RunOutcome{},
            [](auto& o) {
              o.stop_signal = SIGINT;
              o.step_failed = true;
            }),
       RunStatus::interrupted, 128 + SIGINT},
      {"the run stage found no command",
       with(RunOutcome{}, [](auto& o) { o.command_problem = RunStatus::not_found; }), RunStatus::not_found,
       127},
      {"the run stage found the command unreadable",
       with(RunOutcome{}, [](auto& o) { o.command_problem = RunStatus::not_executable; }),
       RunStatus::not_executable, 126},
      {"no command, and a stop signal during set-up",
       with(RunOutcome{},
            [](auto& o) {
              o.command_problem = RunStatus::not_found;
              o.stop_signal = SIGTERM;
            }),
       RunStatus::not_found, 127},
      {"no command, and a step of parallex failed first",
       with(RunOutcome{},
            [](auto& o) {
              o.command_problem = RunStatus::not_found;
              o.step_failed = true;
            }),
       RunStatus::setup_failed, 125},
  };
  return table;
}

class Classify : public ::testing::TestWithParam<Row> {};

TEST_P(Classify, DecidesTheStatusAndSoTheExitStatus) {
  const Row& row = GetParam();
  const RunStatus status = classify(row.outcome);
  EXPECT_EQ(std::string(to_string(status)), to_string(row.status)) << row.what;
  // The record keeps the command's signal, or the stop signal when the run was interrupted.
  const int signal = status == RunStatus::interrupted ? row.outcome.stop_signal : row.outcome.signal;
  EXPECT_EQ(exit_status(status, row.outcome.exit_code, signal), row.exit_status) << row.what;
}

INSTANTIATE_TEST_SUITE_P(EveryWayARunEnds, Classify, ::testing::ValuesIn(rows()),
                         [](const auto& param_info) { return "row" + std::to_string(param_info.index); });

}  // namespace
}  // namespace px::run
