#include "mcp/server.hpp"

#include <unistd.h>

#include <cerrno>
#include <istream>
#include <ostream>

#include "common/json_io.hpp"
#include "common/redact.hpp"
#include "mcp/schema.hpp"
#include "mcp/tools.hpp"

namespace px::mcp {

std::string negotiate_protocol(const Json& requested) {
  if (requested.is_string())
    for (const char* v : kSupportedProtocols)
      if (requested == v) return v;
  return kLatestProtocol;
}

std::optional<std::string> StreamTransport::read_line() {
  std::string line;
  if (!std::getline(in_, line)) return std::nullopt;
  return line;
}

bool StreamTransport::write_line(const std::string& line) {
  out_ << line << '\n';
  out_.flush();
  return static_cast<bool>(out_);
}

namespace {
constexpr std::size_t kMaxBuffered = 8u << 20;
}  // namespace

std::optional<std::string> FdTransport::read_line() {
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (std::exchange(skipping_, false)) continue;  // the end of a line already refused
      return line;
    }
    if (eof_) {
      if (buffer_.empty() || skipping_) return std::nullopt;
      return std::exchange(buffer_, {});
    }
    // A line that never ends is not buffered without bound: its first piece
    // is handed on (and refused as too long), the rest dropped up to its end,
    // so the client gets one answer for it.
    if (buffer_.size() > kMaxBuffered) {
      if (skipping_) {
        buffer_.clear();
      } else {
        skipping_ = true;
        return std::exchange(buffer_, {});
      }
    }
    char buf[65536];
    const ssize_t n = ::read(in_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;
      continue;
    }
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

bool FdTransport::write_line(const std::string& line_in) {
  std::string line = line_in + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(out_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // EPIPE: the client is gone
    done += static_cast<std::size_t>(n);
  }
  return true;
}

Server::Server(Transport& transport, ServerOptions options)
    : transport_(transport), options_(std::move(options)) {}

void Server::send(Json message) {
  if (closed_) return;
  // The id is the client's own and goes back unchanged; all else is redacted.
  Json id = message.contains("id") ? message["id"] : Json();
  redact_json(message);
  if (message.contains("id")) message["id"] = id;
  if (!transport_.write_line(to_json_text(message))) closed_ = true;
}

int Server::serve() {
  while (!closed_) {
    if (!deferred_.empty()) {
      Incoming in = std::move(deferred_.front());
      deferred_.pop_front();
      handle_request(in);
      continue;
    }
    auto line = transport_.read_line();
    if (!line) break;
    dispatch(*line);
  }
  return 0;
}

void Server::dispatch(const std::string& raw) {
  std::string line = raw;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.find_first_not_of(" \t") == std::string::npos) return;
  if (line.size() > options_.max_line) {
    send(make_error(
        nullptr, rpc::kInvalidRequest,
        "Invalid request: the message is larger than " + std::to_string(options_.max_line) + " bytes."));
    return;
  }
  Incoming in = parse_message(line);
  switch (in.kind) {
    case Incoming::Kind::invalid:
      if (!in.error_reply.is_null()) send(in.error_reply);
      return;
    case Incoming::Kind::notification:
      handle_notification(in);
      return;
    case Incoming::Kind::response:
      return;  // an answer to no request of ours (or one that timed out): dropped
    case Incoming::Kind::request:
      handle_request(in);
      return;
  }
}

void Server::handle_notification(const Incoming& in) {
  if (in.method == "notifications/initialized") {
    initialized_ = true;
  } else if (in.method == "notifications/cancelled") {
    const Json id = in.params.is_object() ? in.params.value("requestId", Json()) : Json();
    if (current_call_ && id == *current_call_) current_cancelled_ = true;
    for (auto it = deferred_.begin(); it != deferred_.end();)
      it = it->id == id ? deferred_.erase(it) : std::next(it);
  }
  // Other notifications (progress, roots changed...) need nothing from us.
}

void Server::handle_request(const Incoming& in) {
  const Json& id = in.id;
  const Json params = in.params.is_null() ? Json::object() : in.params;
  if (!params.is_object()) {
    send(make_error(id, rpc::kInvalidParams, "Invalid params: \"params\" must be an object."));
    return;
  }
  try {
    if (in.method == "initialize") {
      if (!params.contains("protocolVersion") || !params["protocolVersion"].is_string()) {
        send(make_error(id, rpc::kInvalidParams,
                        "Invalid params: initialize needs a \"protocolVersion\" string."));
        return;
      }
      protocol_ = negotiate_protocol(params["protocolVersion"]);
      const Json caps = params.value("capabilities", Json::object());
      elicitation_ = caps.is_object() && caps.contains("elicitation") && caps["elicitation"].is_object();
      send(make_result(
          id,
          Json{{"protocolVersion", protocol_},
               {"capabilities", {{"tools", {{"listChanged", false}}}}},
               {"serverInfo", {{"name", "parallex"}, {"title", "Parallex"}, {"version", options_.version}}},
               {"instructions",
                "Parallex runs AI coding agents sealed, each with an identity of its own. These tools list "
                "agents and workspaces, say who this session runs as, snapshot an agent's home, read its "
                "reports (secrets redacted), rewind it (after asking the user) and open a clean browser."}}));
      return;
    }
    if (in.method == "ping") {
      send(make_result(id, Json::object()));
      return;
    }
    if (in.method == "tools/list") {
      Json list = Json::array();
      for (const auto& t : all_tools()) list.push_back(describe(t));
      send(make_result(id, Json{{"tools", list}}));
      return;
    }
    if (in.method == "tools/call") {
      bool reply = true;
      Json result = call_tool(params, id, reply);
      if (reply) send(std::move(result));
      return;
    }
    send(make_error(id, rpc::kMethodNotFound, "Method not found: " + in.method + "."));
  } catch (const std::exception& e) {
    send(make_error(id, rpc::kInternalError, std::string("Internal error: ") + e.what()));
  }
}

Json Server::call_tool(const Json& params, const Json& id, bool& send_reply) {
  if (!params.contains("name") || !params["name"].is_string())
    return make_error(id, rpc::kInvalidParams, "Invalid params: tools/call needs the tool's \"name\".");
  const std::string name = params["name"].get<std::string>();
  const Tool* tool = find_tool(name);
  if (!tool)
    return make_error(id, rpc::kInvalidParams, "Unknown tool: " + name + "; tools/list lists the tools.");
  Json args = params.contains("arguments") ? params["arguments"] : Json::object();
  if (args.is_null()) args = Json::object();
  if (auto why = check_schema(tool->input_schema, args))
    return make_error(id, rpc::kInvalidParams, "Invalid arguments for " + name + ": " + *why,
                      Json{{"tool", name}});

  current_call_ = id;
  current_cancelled_ = false;
  ToolContext ctx{options_, *this};
  ToolResult result;
  try {
    result = tool->run(ctx, args);
  } catch (const std::exception& e) {
    result = tool_error("The tool " + name + " failed: " + e.what());
  }
  // A cancelled request gets no answer (MCP cancellation).
  send_reply = !current_cancelled_;
  current_call_.reset();
  current_cancelled_ = false;
  return make_result(id, to_call_result(result));
}

Result<Json> Server::request(const std::string& method, Json params) {
  const Json id = "parallex-" + std::to_string(next_id_++);
  send(make_request(id, method, std::move(params)));
  if (closed_) return Error::io("send " + method + " to the client (it has disconnected)", EPIPE);
  while (!closed_) {
    if (current_cancelled_)
      return Error::conflict("The client cancelled the call while it was asked: " + method + ".");
    auto line = transport_.read_line();
    if (!line) {
      closed_ = true;
      break;
    }
    if (line->find_first_not_of(" \t\r") == std::string::npos) continue;
    Incoming in = parse_message(*line);
    switch (in.kind) {
      case Incoming::Kind::response:
        if (in.id != id) continue;
        if (!in.error.is_null()) {
          const std::string msg =
              in.error.is_object() ? in.error.value("message", std::string("no message")) : "";
          return Error::unsupported("The client refused " + method + ": " + msg);
        }
        return in.result;
      case Incoming::Kind::notification:
        handle_notification(in);
        continue;
      case Incoming::Kind::request:
        if (in.method == "ping")
          handle_request(in);
        else
          deferred_.push_back(std::move(in));  // served once this call is answered
        continue;
      case Incoming::Kind::invalid:
        if (!in.error_reply.is_null()) send(in.error_reply);
        continue;
    }
  }
  return Error::io("wait for the client's answer to " + method + " (it has disconnected)", EPIPE);
}

}  // namespace px::mcp
