#pragma once
// The MCP server loop: newline-delimited JSON-RPC 2.0 over a transport (stdio
// for `parallex mcp`, string streams in tests). One request is served at a
// time; while a tool waits for the client (an elicitation), pings are answered,
// other requests wait their turn, and a cancellation or a disconnect ends the
// wait. Every message written passes through px::redact().
#include <chrono>
#include <deque>
#include <iosfwd>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "mcp/jsonrpc.hpp"
#include "mcp/run_identity.hpp"

namespace px::mcp {

inline constexpr const char* kLatestProtocol = "2025-06-18";
// Revisions this server speaks, newest first.
inline constexpr const char* kSupportedProtocols[] = {"2025-06-18", "2025-03-26", "2024-11-05"};
// The client's revision when supported, else our latest.
std::string negotiate_protocol(const Json& requested);

class Transport {
 public:
  virtual ~Transport() = default;
  // One line without its newline; nullopt at end of input.
  virtual std::optional<std::string> read_line() = 0;
  // False once the peer is gone.
  virtual bool write_line(const std::string& line) = 0;
};

class StreamTransport : public Transport {
 public:
  StreamTransport(std::istream& in, std::ostream& out) : in_(in), out_(out) {}
  std::optional<std::string> read_line() override;
  bool write_line(const std::string& line) override;

 private:
  std::istream& in_;
  std::ostream& out_;
};

// Raw fds (stdin/stdout): no stdio buffering between us and the client.
class FdTransport : public Transport {
 public:
  FdTransport(int in, int out) : in_(in), out_(out) {}
  std::optional<std::string> read_line() override;
  bool write_line(const std::string& line) override;

 private:
  int in_;
  int out_;
  std::string buffer_;
  bool eof_ = false;
  bool skipping_ = false;  // dropping the rest of a line too long to buffer
};

// What a tool may ask of the client.
class ClientLink {
 public:
  virtual ~ClientLink() = default;
  virtual bool supports_elicitation() const = 0;
  // Sends a request to the client and waits for its result. Errors: the
  // client's error response, a cancellation of the current call, a disconnect.
  virtual Result<Json> request(const std::string& method, Json params) = 0;
};

struct ServerOptions {
  std::string version = "0.0.0";
  RunIdentity run;
  std::chrono::seconds browser_timeout{30};
  std::size_t max_line = 4u << 20;  // a longer message is refused, not buffered
};

class Server : public ClientLink {
 public:
  Server(Transport& transport, ServerOptions options);
  // Serves until the client closes its end. Returns 0.
  int serve();

  bool supports_elicitation() const override { return elicitation_; }
  Result<Json> request(const std::string& method, Json params) override;
  const ServerOptions& options() const { return options_; }
  const std::string& protocol() const { return protocol_; }

 private:
  void dispatch(const std::string& line);
  void handle_request(const Incoming& in);
  void handle_notification(const Incoming& in);
  Json call_tool(const Json& params, const Json& id, bool& send_reply);
  void send(Json message);

  Transport& transport_;
  ServerOptions options_;
  bool initialized_ = false;
  bool elicitation_ = false;
  bool closed_ = false;
  std::string protocol_ = kLatestProtocol;
  std::deque<Incoming> deferred_;
  std::optional<Json> current_call_;  // id of the request being served
  bool current_cancelled_ = false;
  std::uint64_t next_id_ = 1;
};

}  // namespace px::mcp
