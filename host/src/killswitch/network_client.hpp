#pragma once
// The client side of a running run's network rule, for `parallex approve`,
// `deny` and `allow --run` (and the MCP server outside runs): ask mode's open
// questions, their answers, and live rule changes, sent over each run's
// control socket (killswitch/control_socket.hpp). Refused from inside a run,
// so a run cannot answer its own question.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "killswitch/registry.hpp"

namespace px::killswitch {

struct OpenQuestion {
  RunEntry run;
  nlohmann::json question;  // question, host, port, rule_reason, asked_at, process?, seconds_left
};

// The open questions of the live runs `run` names (a run id, its start, or an
// agent; empty: every run), oldest first per run.
Result<std::vector<OpenQuestion>> open_questions(const fs::path& runtime_dir, const std::string& run = {});

struct Answered {
  RunEntry run;
  nlohmann::json reply;  // the supervisor's: question, allow, for, agent
};

// Answers question `id` of the run `run` names, or, with `run` empty, of the
// one run that has an open question `id` (two runs with one: an error listing
// them). `scope`: once, run or always.
Result<Answered> answer_question(const fs::path& runtime_dir, const std::string& run, std::uint64_t id,
                                 bool allow, const std::string& scope, const std::string& by);

// Allows or denies `rule` ("HOST", "HOST:PORT", "*.HOST") in the running
// run `run` names, at once. Returns the run and the change as recorded.
Result<Answered> change_run_rule(const fs::path& runtime_dir, const std::string& run, bool allow,
                                 const std::string& rule, const std::string& by);

}  // namespace px::killswitch
