#pragma once
// Claude Code JSONL (projects/ under its config dir, subagent files included).
#include <string>
#include <vector>

#include "parallex_transcripts/result.hpp"

namespace parallex::transcripts::claude_code {

// paths: files or directories; sessions come back sorted by started_at, then session_id.
ParseResult parse(const std::vector<std::string>& paths, Window w = {}, Form form = Form::object);

// Where this harness keeps its transcripts under a home directory.
std::vector<std::string> roots(const std::string& home);

}  // namespace parallex::transcripts::claude_code
