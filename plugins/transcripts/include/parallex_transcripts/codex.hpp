#pragma once
// Codex CLI rollout JSONL (sessions/ and archived_sessions/ under CODEX_HOME).
#include <string>
#include <vector>

#include "parallex_transcripts/result.hpp"

namespace parallex::transcripts::codex {

// paths: files or directories; sessions come back sorted by started_at, then session_id.
ParseResult parse(const std::vector<std::string>& paths, Window w = {}, Form form = Form::object);

// Where this harness keeps its transcripts under a home directory.
std::vector<std::string> roots(const std::string& home);

}  // namespace parallex::transcripts::codex
