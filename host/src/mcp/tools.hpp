#pragma once
// The MCP tools: each has an input schema (checked before it runs), an output
// schema its structured result follows, and a run function. A tool's failure
// is a result with isError, never a JSON-RPC error and never a crash.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "mcp/jsonrpc.hpp"
#include "mcp/server.hpp"

namespace px::mcp {

struct ToolResult {
  Json structured;      // follows the tool's output schema (unset for errors)
  std::string message;  // an error's message, or a sentence before the JSON
  bool is_error = false;
};

struct ToolContext {
  const ServerOptions& options;
  ClientLink& client;
  const RunIdentity& run() const { return options.run; }
};

struct Tool {
  std::string name;
  std::string title;
  std::string description;
  Json input_schema;
  Json output_schema;
  bool read_only = true;
  bool destructive = false;
  bool open_world = false;
  std::function<ToolResult(ToolContext&, const Json&)> run;
};

const std::vector<Tool>& all_tools();
const Tool* find_tool(const std::string& name);
// The tools/list entry of a tool.
Json describe(const Tool& tool);
// The tools/call result of a tool's answer.
Json to_call_result(const ToolResult& result);

ToolResult tool_error(const std::string& message);
ToolResult tool_error(const Error& error);

// Inside an agent's run the server answers only about that agent: the reason
// for refusing `agent`, or nullopt.
std::optional<std::string> outside_scope(const RunIdentity& run, const std::string& agent);

// Defined in tools_agents.cpp and tools_browser.cpp.
void add_agent_tools(std::vector<Tool>& tools);
void add_browser_tools(std::vector<Tool>& tools);
void add_network_tools(std::vector<Tool>& tools);

// Schema helpers.
Json object_schema(Json properties, std::vector<std::string> required = {}, bool closed = true);
Json agent_name_schema();

}  // namespace px::mcp
