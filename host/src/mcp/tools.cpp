#include "mcp/tools.hpp"

#include "common/json_io.hpp"
#include "common/redact.hpp"

namespace px::mcp {

const std::vector<Tool>& all_tools() {
  static const std::vector<Tool> tools = [] {
    std::vector<Tool> t;
    add_agent_tools(t);
    add_browser_tools(t);
    add_network_tools(t);
    return t;
  }();
  return tools;
}

const Tool* find_tool(const std::string& name) {
  for (const auto& t : all_tools())
    if (t.name == name) return &t;
  return nullptr;
}

Json describe(const Tool& tool) {
  return Json{{"name", tool.name},
              {"title", tool.title},
              {"description", tool.description},
              {"inputSchema", tool.input_schema},
              {"outputSchema", tool.output_schema},
              {"annotations",
               {{"title", tool.title},
                {"readOnlyHint", tool.read_only},
                {"destructiveHint", tool.destructive},
                {"idempotentHint", tool.read_only},
                {"openWorldHint", tool.open_world}}}};
}

Json to_call_result(const ToolResult& r) {
  if (r.is_error)
    return Json{{"content", Json::array({{{"type", "text"}, {"text", r.message}}})}, {"isError", true}};
  // Redacted string by string before it is serialised: in the JSON text a
  // newline is "\n", and a secret right after it no longer starts a word.
  Json structured = r.structured;
  redact_json(structured);
  // Clients that ignore structuredContent read the same JSON as text.
  std::string text = to_json_text(structured, 2);
  if (!r.message.empty()) text = px::redact(r.message) + "\n\n" + text;
  return Json{{"content", Json::array({{{"type", "text"}, {"text", text}}})},
              {"structuredContent", structured},
              {"isError", false}};
}

ToolResult tool_error(const std::string& message) {
  ToolResult r;
  r.is_error = true;
  r.message = message;
  return r;
}

ToolResult tool_error(const Error& error) {
  return tool_error(error.message);
}

std::optional<std::string> outside_scope(const RunIdentity& run, const std::string& agent) {
  if (!run.inside_run) return std::nullopt;
  if (run.agent.empty())
    return "This server runs inside an ad-hoc Parallex run (" + run.run_id +
           "), which is no agent's: it answers about no agent from here. Ask from a terminal outside the "
           "run.";
  if (agent != run.agent)
    return "This server runs inside agent " + run.agent + "'s run (" + run.run_id +
           "), so it answers only about " + run.agent + ", not about \"" + agent + "\".";
  return std::nullopt;
}

Json object_schema(Json properties, std::vector<std::string> required, bool closed) {
  Json s{{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) s["required"] = required;
  if (closed) s["additionalProperties"] = false;
  return s;
}

Json agent_name_schema() {
  return Json{{"type", "string"},
              {"minLength", 1},
              {"maxLength", 64},
              {"description", "The agent's name, as list_workspaces shows it."}};
}

}  // namespace px::mcp
