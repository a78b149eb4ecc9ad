#pragma once
// One terminated connection: TLS with the run's leaf towards the client, TLS
// verified against the system store towards the server, and HTTP/1.1 in
// between, read request by request (keep-alive, pipelining, Content-Length,
// chunked, 100-continue; a WebSocket upgrade becomes a tunnel once its
// request was checked). Lives on the proxy's io thread.
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "broker/broker.hpp"
#include "broker/credentials.hpp"
#include "broker/prefixed_socket.hpp"
#include "broker/relay_stream.hpp"
#include "broker/request_log.hpp"
#include "broker/request_rules.hpp"
#include "broker/response_head.hpp"
#include "broker/run_ca.hpp"
#include "broker/tls_contexts.hpp"
#include "proxy/request_parser.hpp"

namespace px::broker {

class Relay;

struct BrokerContext {
  CredentialSet credentials;
  std::map<std::string, HostRequestRules, std::less<>> rules;  // terminated hosts that have rules
  std::vector<std::string> terminated;                         // hosts whose TLS is terminated
  // Model servers on this machine the broker sits in front of: port -> TLS or plain HTTP.
  std::map<std::uint16_t, bool> local_servers;
  std::unique_ptr<RunCa> ca;
  std::unique_ptr<boost::asio::ssl::context> client_facing;
  std::unique_ptr<boost::asio::ssl::context> upstream;
  std::unique_ptr<RequestLog> log;
  TrustFiles trust;
  RelayLimits limits;
  std::vector<std::weak_ptr<Relay>> live;  // (io thread)

  void note_request(const std::string& host, bool refused);
  void note_exfiltration(const Exfiltration& e);
  void note_failure(const std::string& host, std::string_view reason);
  BrokerReport report() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, BrokerReport::Host> hosts_;
  std::map<std::tuple<std::string, std::string, std::string>, std::uint64_t> attempts_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> failures_;
};

// What a relayed connection goes to: its host (the name TLS and the log use)
// and port, the name its credentials are bound to (the host, or
// "localhost:PORT" for a model server on this machine), whether it speaks TLS,
// and whether it is this machine (whose requests may name it as localhost,
// 127.0.0.1 or [::1], and, plain, through the proxy in absolute form).
struct RelayTarget {
  std::string host;
  std::uint16_t port = 0;
  std::string binding;
  bool tls = true;
  bool local = false;
};

class Relay : public std::enable_shared_from_this<Relay> {
 public:
  Relay(std::shared_ptr<BrokerContext> context, boost::asio::ip::tcp::socket client, std::string early,
        boost::asio::ip::tcp::socket upstream, RelayTarget target,
        std::function<void(const RelayEnd&)> on_end);
  void start();
  void abort(std::string_view how);

 private:
  using Clock = std::chrono::steady_clock;
  using error_code = boost::system::error_code;
  enum class Phase { handshake, serving, tunnel, finishing, closed };
  enum class ClientWait { none, head, body, tunnel };

  // One request and its response.
  struct Exchange {
    std::uint64_t id = 0;
    RequestRecord record;
    Clock::time_point started;
    std::string local;  // a refusal sent instead of an upstream response
    bool upgrade = false;
    bool close_after = false;
    bool response_started = false;
  };

  void tick();
  void on_handshake(bool client_side, const error_code& ec);
  void refuse_failed_client();
  void after_handshakes();

  // Client -> upstream.
  void read_client(ClientWait why);
  void on_client_read(const error_code& ec, std::size_t n);
  void read_request();
  void handle_request();
  void forward_request_body();
  void request_body_exfiltration(int tag);
  // The exchange whose request body is being forwarded, if not answered yet.
  Exchange* body_exchange();
  void refuse(Exchange ex, int status, std::string_view reason, const std::string& message,
              std::string_view verdict = "denied");

  // Upstream -> client.
  void pump_responses();
  void read_upstream();
  void on_upstream_read(const error_code& ec, std::size_t n);
  void handle_response_head();
  void forward_response_body();
  void response_done();
  void send_local();
  void write_client(std::string data, void (Relay::*then)());

  void start_tunnel();
  void tunnel(bool up);

  void log_exchange(Exchange& ex, std::string_view verdict, std::string_view reason);
  void log_connection(std::string_view reason, const std::string& detail);
  void finish();
  void shutdown_client();
  void close(std::string_view how);
  bool ending() const { return phase_ == Phase::finishing || phase_ == Phase::closed; }

  // A request's Host header (or absolute-form target) names this connection's server.
  bool names_this_server(std::string_view authority) const;

  std::shared_ptr<BrokerContext> ctx_;
  RelayStream<PrefixedSocket> client_;
  RelayStream<boost::asio::ip::tcp::socket> up_;
  std::string host_;
  std::uint16_t port_;
  std::string binding_;
  bool local_ = false;
  std::function<void(const RelayEnd&)> on_end_;
  boost::asio::steady_timer timer_;
  Phase phase_ = Phase::handshake;
  Clock::time_point started_, last_activity_, head_started_, finish_deadline_;
  bool head_timing_ = false;
  bool connection_logged_ = false;

  // Handshakes.
  SniCheck sni_;
  int handshakes_left_ = 2;
  error_code client_hs_, upstream_hs_;
  std::string upstream_failure_reason_;  // set: every request is answered 502 with it
  std::string upstream_failure_detail_;

  // Client side.
  std::vector<char> client_buf_;
  std::string in_;  // client plaintext not yet handled
  ClientWait client_wait_ = ClientWait::none;
  bool client_reading_ = false;
  bool client_eof_ = false;
  bool shutdown_after_read_ = false;
  bool awaiting_upgrade_ = false;
  bool waiting_for_room_ = false;
  proxy::Request request_;
  proxy::Target body_;  // body framing of the request being forwarded
  std::uint64_t body_left_ = 0;
  std::unique_ptr<proxy::ChunkedTracker> body_chunks_;
  StreamScanner scanner_template_, body_scanner_, raw_scanner_;
  std::string out_up_;

  // Upstream side.
  std::vector<char> up_buf_;
  std::string up_in_;
  bool responding_ = false;
  std::deque<Exchange> pending_;
  std::uint64_t last_id_ = 0, body_owner_ = 0;
  BodyKind response_body_ = BodyKind::none;
  std::uint64_t response_left_ = 0;
  std::unique_ptr<proxy::ChunkedTracker> response_chunks_;
  StreamReplacer response_template_, replacer_;
  bool replacing_ = false;
  bool upstream_truncated_ = false;
  std::string out_down_;
  std::uint64_t bytes_up_ = 0, bytes_down_ = 0, requests_ = 0;
  std::string_view end_reason_ = "allowed";
};

}  // namespace px::broker
