#include "mcp/jsonrpc.hpp"

#include "common/json_io.hpp"
#include "common/redact.hpp"

namespace px::mcp {

Json make_result(const Json& id, Json result) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

Json make_error(const Json& id, int code, const std::string& message, Json data) {
  Json error{{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = std::move(data);
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

Json make_request(const Json& id, const std::string& method, Json params) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

namespace {

bool valid_id(const Json& id) {
  return id.is_string() || id.is_number_integer() || id.is_number_unsigned();
}

Incoming invalid(const Json& id, int code, const std::string& why) {
  Incoming in;
  in.error_reply = make_error(id, code, why);
  return in;
}

}  // namespace

Incoming parse_message(const std::string& line) {
  if (json_nests_deeper_than(line, kMaxJsonDepth))
    return invalid(nullptr, rpc::kInvalidRequest,
                   "Invalid request: arrays and objects nest deeper than " + std::to_string(kMaxJsonDepth) +
                       " levels; no MCP message needs that.");
  Json msg = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (msg.is_discarded())
    return invalid(nullptr, rpc::kParseError, "Parse error: the message is not valid JSON.");
  if (msg.is_array())
    return invalid(nullptr, rpc::kInvalidRequest,
                   "Invalid request: batches are not supported (MCP 2025-06-18); send one message per line.");
  if (!msg.is_object())
    return invalid(nullptr, rpc::kInvalidRequest, "Invalid request: a message is a JSON object.");
  const Json id = msg.contains("id") ? msg["id"] : Json();
  const Json reply_id = valid_id(id) ? id : Json();
  if (!msg.contains("jsonrpc") || msg["jsonrpc"] != "2.0")
    return invalid(reply_id, rpc::kInvalidRequest, "Invalid request: \"jsonrpc\" must be \"2.0\".");

  Incoming in;
  if (msg.contains("method")) {
    if (!msg["method"].is_string())
      return invalid(reply_id, rpc::kInvalidRequest, "Invalid request: \"method\" must be a string.");
    in.method = msg["method"].get<std::string>();
    if (msg.contains("params")) {
      in.params = msg["params"];
      if (!in.params.is_object() && !in.params.is_array())
        return invalid(reply_id, rpc::kInvalidRequest, "Invalid request: \"params\" must be an object.");
    }
    if (!msg.contains("id")) {
      in.kind = Incoming::Kind::notification;
      return in;
    }
    if (!valid_id(id))
      return invalid(nullptr, rpc::kInvalidRequest,
                     "Invalid request: \"id\" must be a string or an integer.");
    in.kind = Incoming::Kind::request;
    in.id = id;
    return in;
  }
  if (msg.contains("result") || msg.contains("error")) {
    in.kind = Incoming::Kind::response;
    in.id = id;
    if (msg.contains("result")) in.result = msg["result"];
    if (msg.contains("error")) in.error = msg["error"];
    return in;
  }
  return invalid(reply_id, rpc::kInvalidRequest, "Invalid request: no \"method\", \"result\" or \"error\".");
}

void redact_json(Json& value) {
  if (value.is_string()) {
    value = px::redact(value.get_ref<const std::string&>());
  } else if (value.is_array()) {
    for (auto& v : value) redact_json(v);
  } else if (value.is_object()) {
    Json out = Json::object();
    for (auto& [k, v] : value.items()) {
      Json copy = std::move(v);
      redact_json(copy);
      out[px::redact(k)] = std::move(copy);
    }
    value = std::move(out);
  }
}

}  // namespace px::mcp
