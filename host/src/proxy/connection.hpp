#pragma once
// One client connection, from its first byte to the last byte of its tunnel.
// Lives on the server's io thread only. Read it in the order a connection
// lives, one file a step:
//
//   intake        how the client reached the proxy; each makes one Destination
//                 (destination.hpp): host, port, how it was named, the bytes
//                 already read, whether the broker may take it.
//     intake_explicit.cpp   a client of the proxy: CONNECT or a plain HTTP
//                           request head, with the run's password (407);
//     intake_captured.cpp   a connection made inside the run to a synthetic
//                           address (or a mirrored loopback port): the name is
//                           where it was made to, its first bytes checked on
//                           80 and 443 (TLS server name, HTTP Host);
//     intake_published.cpp  a connection from this machine to a port
//                           published from the run.
//   decision      upstream.cpp: decide(), the rule (decide_destination) and
//                 the broker's refusals (broker_handoff.cpp), the same for all.
//   upstream      upstream.cpp: resolve, refuse local answers unless Local
//                 servers allows the port, connect to exactly the addresses
//                 checked; then hand_over() picks what carries the bytes:
//   pump          pump.cpp (tunnel_sni.cpp checks a tunnel's ClientHello
//                 against its name first; plain_http.cpp frames one request),
//   or broker     broker_handoff.cpp: the broker's relay for a terminated host.
//   the end       connection.cpp: refusals (an HTTP answer or a reset), the
//                 linger after an answer, the log line, the deadlines.
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/unique_fd.hpp"
#include "proxy/decision_log.hpp"
#include "proxy/destination.hpp"
#include "proxy/request_parser.hpp"
#include "proxy/terminator.hpp"

namespace px::proxy {

class ServerCore;
using Clock = std::chrono::steady_clock;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Who the client is, known at accept: it decides how a refusal reaches it
  // (a proxy client reads an HTTP answer; a captured or published connection
  // has no HTTP to speak and is reset).
  enum class Kind { proxy, captured, published };
  Connection(ServerCore& server, boost::asio::ip::tcp::socket client, Kind kind = Kind::proxy);
  // A client of the proxy: its request head comes first (intake_explicit.cpp).
  void start();
  // A captured connection to `target` (a name from the run's synthetic
  // addresses, or localhost:PORT for a mirrored port; intake_captured.cpp).
  void start_captured(HostPort target);
  // A connection to a port published from the run: `inside` is a socket made
  // inside the run, connecting to the server there (intake_published.cpp).
  void start_published(std::uint16_t inside_port, UniqueFd inside);
  // Called by the server's sweep: header, connect and idle timeouts.
  void check_deadline(Clock::time_point now);
  // Ends the connection at once, logging how (cut, stopped).
  void abort(std::string_view how);
  // Ask mode: the question this connection waits on was answered (or ended
  // unanswered: `allow` false, `why` not-answered or stopped). `outcome` is
  // the question's (QuestionEnd::outcome), written to its log line.
  void answered(bool allow, std::string_view why, const std::string& outcome);
  // The client's address as the run sees it ("127.0.0.1:50412"), or empty.
  std::string client_address() const;
  // The proxy's end of the connection as the run sees it ("127.0.0.1:8080"), or empty.
  std::string server_address() const;

 private:
  // terminated: handed to the run's broker (terminator.hpp), which owns both
  // sockets until it calls back with how the connection ended.
  enum class State {
    head,
    sniffing,
    auth_wait,
    asking,  // ask mode: held until the user answers (ServerCore's questions)
    resolving,
    connecting,
    relaying,
    terminated,
    lingering,
    closed
  };
  // One direction of the relay. A tunnel (CONNECT, captured) moves bytes
  // socket -> pipe -> socket inside the kernel (splice) once a read fills the
  // server's shared scratch buffer (bulk); until then, and for plain HTTP
  // whose body is framed, it reads through that buffer: a request and its
  // answer of a few bytes cost no pipe (two system calls and a 1 MiB pipe
  // less on every set-up). `pending` holds bytes only while the receiver is
  // slow. An idle tunnel owns no buffer at all.
  struct Direction {
    boost::asio::ip::tcp::socket* from = nullptr;
    boost::asio::ip::tcp::socket* to = nullptr;
    std::uint64_t* counter = nullptr;
    std::vector<char> pending;
    bool eof = false;
    bool done = false;     // body complete (plain HTTP): read no further
    bool limited = false;  // Content-Length framing
    std::uint64_t remaining = 0;
    std::unique_ptr<ChunkedTracker> chunked;
    UniqueFd pipe_read, pipe_write;  // splice path only
    std::size_t in_pipe = 0;         // bytes read into the pipe, not yet written on
    bool copy = false;               // splice is not available: copy through user space
    bool bulk = false;               // tunnel: a read filled the scratch buffer, splice from now on
  };

  static constexpr std::size_t kHeadReadChunk = 4096;
  static constexpr auto kLinger = std::chrono::seconds(2);
  static constexpr int kReadsPerTurn = 16;  // then yield, so one busy tunnel cannot starve the others
  // Bytes a tunnel's pipe may hold: larger means fewer system calls. The kernel
  // caps it (fs.pipe-max-size, and a per-user budget); the default is kept then.
  static constexpr int kPipeBytes = 1 << 20;
  // A ClientHello larger than this is not what any TLS client sends.
  static constexpr std::size_t kMaxHelloBytes = 32 * 1024;

  // intake_explicit.cpp: the request head, the password, the destination.
  void wait_head();
  void on_head_readable(const boost::system::error_code& ec);
  void check_password();
  void take_request();
  // The run's own service (run_service.cpp) is named by this host.
  static bool names_run_service(const HostPort& endpoint);
  // intake_captured.cpp: on ports 80 and 443 the first bytes must be a TLS
  // ClientHello or an HTTP request naming the host; checked before anything
  // is resolved.
  void sniff();
  void check_sniffed();

  // upstream.cpp: the decision every intake but a published port takes
  // (destination.hpp), then resolve or connect.
  void decide();
  // After the rule let the destination through (or the user did): the
  // broker's refusals, then this machine or a name to resolve.
  void go_on(Route route);
  void resolve();
  void on_resolved(Result<std::vector<boost::asio::ip::address>> addresses);
  void connect(std::vector<boost::asio::ip::address> addresses);
  void try_next_address();
  // Waits until the connect in progress on upstream_ to `ep` is over.
  void await_connect(const boost::asio::ip::tcp::endpoint& ep);
  // The connect to `ep` is over (writable): its result decides.
  void connect_finished(const boost::asio::ip::tcp::endpoint& ep);
  void on_connected(const boost::asio::ip::tcp::endpoint& ep);
  // Which carries the bytes now: the broker's relay, a tunnel (after a 200
  // for CONNECT) or one plain HTTP request.
  void hand_over();

  // broker_handoff.cpp. The run's broker: a credential in what leaves the run
  // (the destination name, a plain-HTTP head, a captured connection's first
  // bytes) to a host it is not bound to; plain HTTP to a terminated host.
  // True when refused.
  bool refused_by_broker();
  // Hands the connection to the broker (a terminated host); `early`: the
  // client's bytes already read.
  void terminate(std::string early);
  void on_terminated(const RelayEnd& end);

  // plain_http.cpp: one request, its body framed exactly, nothing after it.
  void forward_request();
  // A plain-HTTP request body carrying a credential: the upstream is cut (the
  // request never completes) and the client answered 403 if it can still be.
  void refuse_body();
  // The bytes as they go, and a chunked body's data without its framing (a
  // placeholder split by a chunk boundary).
  bool body_carries_credential(std::string_view raw, const std::vector<std::string_view>& payload);
  // The upstream's response head is held (up to the limit) until it is
  // whole, so that an endless one is answered 502, not relayed.
  bool hold_response_head(const char* data, std::size_t n);

  // tunnel_sni.cpp: a tunnel's first client bytes are held until the TLS
  // ClientHello, if that is what they are, shows which server it asks for.
  void read_hello();
  void decide_hello();
  void refuse_tunnel(std::string_view why);
  // Sends the held first bytes upstream, then `then`.
  void release_hello(void (*then)(Connection&));

  // pump.cpp: the relay both ways.
  void start_relay();
  // Writes outgoing_ to `to`, then `then`: at once when the socket takes it
  // all (the usual case), else once the receiver has taken the rest.
  void send_outgoing(boost::asio::ip::tcp::socket& to, void (*then)(Connection&));
  void arm(Direction& d);
  void on_readable(Direction& d, const boost::system::error_code& ec);
  void copy_readable(Direction& d);
  void splice_readable(Direction& d);
  // Writes what the pipe holds to the receiver; false when it must wait for
  // the receiver (it re-arms the reader itself once drained) or failed.
  bool flush_pipe(Direction& d);
  void on_source_eof(Direction& d);

  // connection.cpp: the end of a connection.
  // Refuses the request: logs, answers `status` with an x-proxy-error header,
  // then closes after a short drain so the client reads the answer.
  void refuse(int status, std::string_view reason, std::string_view verdict = "denied", bool by_rule = false,
              std::string address = {});
  // Sends `answer` (a whole HTTP response) as the connection's last bytes,
  // then drains and closes (after a refusal, or the run service's answer).
  void send_final(std::string answer);
  void linger();
  void close(std::string_view how);
  // run_service.cpp: http://parallex.invalid/, answered by the proxy itself.
  void serve_run_service();
  // A connection without an HTTP answer (captured, published) is refused by a reset.
  void reset(std::string_view reason, std::string_view verdict, bool by_rule);
  void log_once(std::string_view how);

  ServerCore& server_;
  Kind kind_;
  boost::asio::ip::tcp::socket client_;
  boost::asio::ip::tcp::socket upstream_;
  State state_ = State::head;
  Clock::time_point started_;
  Clock::time_point deadline_;
  Clock::time_point last_activity_;
  Destination dest_;      // what the intake made out; first_bytes freed once sent
  std::string head_;      // a proxy client's request head while it is read
  std::string outgoing_;  // an answer or the first upstream bytes, then freed
  Request request_;       // plain HTTP: the request as parsed, until forwarded
  Target target_;         // plain HTTP: its origin-form path and body framing
  Decision decision_;
  bool logged_ = false;
  bool hello_pending_ = false;  // tunnel: the ClientHello is not checked yet
  std::string response_head_;   // plain HTTP: the upstream's head while it is incomplete
  bool response_head_done_ = false;
  Direction up_;    // client -> upstream
  Direction down_;  // upstream -> client
  std::unique_ptr<boost::asio::steady_timer> delay_;
  std::unique_ptr<OutboundBodyCheck> body_check_;     // plain HTTP: credentials the body may not carry
  std::unique_ptr<OutboundBodyCheck> payload_check_;  // the same in a chunked body's data
  bool to_this_machine_ = false;                      // Local servers: no placeholder checks
  std::vector<boost::asio::ip::address> candidates_;  // while connecting
  std::size_t next_candidate_ = 0;
};

}  // namespace px::proxy
