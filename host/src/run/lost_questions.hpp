#pragma once
// The questions of ask mode still open when a run's supervisor died (SIGKILL,
// a crash): the run's events say each was asked (network.asked) and never
// answered (no network.answered). The supervisor's proxy died with it, so the
// held connections were closed, unanswered; closing the lost run says so in
// its record (network_live, outcome "lost") and in its events, so that
// nothing pending disappears without a word.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "run/record_parts.hpp"

namespace px::run {

// The questions in RUN_DIR/events.jsonl asked and never closed, in the order
// they were asked, each with outcome "lost" and `answered_at` = `ended_at`.
// Also the ask-mode time they were asked with, when the events say it (0 if not).
struct LostQuestions {
  std::vector<AskedQuestion> questions;
  std::uint64_t ask_seconds = 0;
};
LostQuestions lost_questions(const std::filesystem::path& run_dir, const std::string& ended_at);

// Closes them in the run's events: a network.answered "lost" each, at `ended_at`.
void close_lost_questions(const std::filesystem::path& run_dir, const std::string& run_id,
                          const std::string& agent, const LostQuestions& lost, const std::string& ended_at);

}  // namespace px::run
