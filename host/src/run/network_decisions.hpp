#pragma once
// Deciding with the user while a run goes on (docs/ask.md), as
// `parallex approve|deny|allow --json` print it and `parallex ui` serves it
// (/api/questions, /api/runs/{id}/allow|deny): one function for both, over
// killswitch/network_client.hpp, with "always" written to the agent's rules.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace px::run {

// {"questions": [{question, host, port, rule_reason, asked_at, seconds_left, process?, run, agent}]}
// of the live runs `run` names (empty: every run).
Result<nlohmann::json> open_questions_json(const std::string& run = {});

// The answer as `approve|deny N --json` prints it (the supervisor's reply,
// "run", and "agent_rule" when "always" wrote the agent's rules). `said`: a
// sentence when the run took the answer but the agent's rules could not be written.
// `scope`: once, run or always (always: only with `allow`).
Result<nlohmann::json> answer_question_json(const std::string& run, std::uint64_t id, bool allow,
                                            const std::string& scope, const std::string& by,
                                            std::vector<std::string>& said);

// `allow|deny --run RUN HOST --json`'s row for one host: the change as
// recorded; `run_id` is set to the run's whole id.
Result<nlohmann::json> change_run_rule_json(std::string& run_id, const std::string& run, bool allow,
                                            const std::string& rule, const std::string& by);

}  // namespace px::run
