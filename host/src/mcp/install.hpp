#pragma once
// `parallex mcp install claude|codex|opencode`: puts this executable's MCP
// server into the client's own configuration, where and how that client
// keeps it, with the executable's absolute path (a relative path works only
// from the folder it was added in). Claude Code and Codex are asked through
// their own `mcp add` commands; opencode's JSON config is edited in place,
// keeping everything else in it. Running it again changes nothing.
#include <filesystem>
#include <string>

#include "common/error.hpp"

namespace px::mcp {

struct Installed {
  std::string client;    // claude | codex | opencode
  std::string config;    // the file the client keeps it in
  std::string entry;     // what it holds now, as the client shows it
  bool changed = false;  // false: it was there already, as it is
};

// `client`: claude, codex or opencode; `parallex`: the absolute path of the
// executable the client should start (`PARALLEX mcp`).
Result<Installed> install(const std::string& client, const std::filesystem::path& parallex);

}  // namespace px::mcp
