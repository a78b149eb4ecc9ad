#pragma once
// JSON-RPC 2.0 as MCP uses it: one message per line on stdio, requests,
// notifications and responses, and the standard error codes. Batches were
// dropped from MCP in 2025-06-18, so an array is an invalid request.
#include <nlohmann/json.hpp>
#include <string>

namespace px::mcp {

using Json = nlohmann::json;

namespace rpc {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
}  // namespace rpc

Json make_result(const Json& id, Json result);
Json make_error(const Json& id, int code, const std::string& message, Json data = nullptr);
Json make_request(const Json& id, const std::string& method, Json params);

struct Incoming {
  enum class Kind { request, notification, response, invalid };
  Kind kind = Kind::invalid;
  Json id;             // requests and responses
  std::string method;  // requests and notifications
  Json params;         // object, or null when absent
  Json result;         // responses
  Json error;          // error responses
  Json error_reply;    // for `invalid`: the error response to send (null when none is due)
};

// Parses one line; malformed JSON and messages that are not JSON-RPC 2.0 come
// back as `invalid` with the error reply to send.
Incoming parse_message(const std::string& line);

// Every string in `value` (keys included) through px::redact(); done per
// string so that a secret shape can never match across JSON punctuation.
void redact_json(Json& value);

}  // namespace px::mcp
