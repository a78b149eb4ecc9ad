#pragma once
// A small JSON Schema checker for the tools' input schemas: the subset they
// use (type, properties, required, additionalProperties: false, enum,
// minLength/maxLength, minimum/maximum, pattern). Arguments are checked before
// a tool runs, so a tool never sees a value of the wrong type.
#include <optional>
#include <string>

#include "mcp/jsonrpc.hpp"

namespace px::mcp {

// The first problem found, as a sentence naming the argument, or nullopt.
std::optional<std::string> check_schema(const Json& schema, const Json& value, const std::string& where = "");

}  // namespace px::mcp
