#include "ui/server.hpp"

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "ui/beast_request.hpp"
#include "ui/event_stream.hpp"

namespace px::ui {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr std::size_t kMaxConnections = 64;
constexpr auto kRequestTime = std::chrono::seconds(30);
constexpr auto kStreamPoll = std::chrono::milliseconds(200);

}  // namespace

struct UiServer::State {
  net::io_context io;
  tcp::acceptor acceptor{io};
  std::atomic<std::size_t> connections{0};
  const UiRules* rules = nullptr;
};

namespace {

class UiSession : public std::enable_shared_from_this<UiSession> {
 public:
  UiSession(tcp::socket socket, UiServer::State& state)
      : stream_(std::move(socket)), state_(state), timer_(stream_.get_executor()) {}
  ~UiSession() { --state_.connections; }

  void start() { read(); }

 private:
  void read() {
    parser_.emplace();
    parser_->header_limit(kHeadLimit);
    parser_->body_limit(kBodyLimit);
    stream_.expires_after(kRequestTime);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::eof)
      return close();
    if (ec) return answer_bad_request(ec.message());
    const auto& req = parser_->get();
    const UiRequest r = ui_request_from(req);
    keep_alive_ = req.keep_alive();
    const int version = req.version();
    UiReply reply = state_.rules->handle(r);
    if (reply.stream_events) return start_stream(reply.events_since_ms);
    send(std::move(reply), version);
  }

  void answer_bad_request(const std::string& why) {
    UiReply reply;
    reply.status = 400;
    reply.content_type = "application/json";
    reply.body = nlohmann::json{{"error", "malformed request: " + why}}.dump();
    keep_alive_ = false;
    send(std::move(reply), 11);
  }

  void send(UiReply reply, int version) {
    response_ = {};
    response_.version(version);
    response_.result(static_cast<unsigned>(reply.status));
    for (const auto& [name, value] : security_headers()) response_.set(name, value);
    for (const auto& [name, value] : reply.headers) response_.set(name, value);
    if (!reply.content_type.empty()) response_.set(http::field::content_type, reply.content_type);
    response_.body() = std::move(reply.body);
    response_.keep_alive(keep_alive_);
    response_.prepare_payload();
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec || !self->keep_alive_) return self->close();
      self->read();
    });
  }

  void start_stream(std::optional<std::int64_t> since_ms) {
    events_.emplace(since_ms);
    std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n";
    for (const auto& [name, value] : security_headers()) head += name + ": " + value + "\r\n";
    head += "Connection: close\r\n\r\n: parallex events\n\n";
    stream_.expires_never();
    write_stream(std::move(head));
  }

  void write_stream(std::string text) {
    out_ = std::move(text);
    net::async_write(stream_, net::buffer(out_),
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) return self->close();
                       self->timer_.expires_after(kStreamPoll);
                       self->timer_.async_wait([self](beast::error_code wait_ec) {
                         if (!wait_ec) self->poll_stream();
                       });
                     });
  }

  void poll_stream() {
    std::string text = events_->next();
    if (text.empty()) {
      timer_.expires_after(kStreamPoll);
      timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
        if (!ec) self->poll_stream();
      });
      return;
    }
    write_stream(std::move(text));
  }

  void close() {
    beast::error_code ignored;
    timer_.cancel();
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  beast::tcp_stream stream_;
  UiServer::State& state_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  bool keep_alive_ = false;
  std::optional<EventStream> events_;
  std::string out_;
};

void accept_next(UiServer::State& state) {
  state.acceptor.async_accept(net::make_strand(state.io), [&state](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted) return;
    if (!ec) {
      if (++state.connections > kMaxConnections) {
        --state.connections;
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        std::make_shared<UiSession>(std::move(socket), state)->start();
      }
    }
    accept_next(state);
  });
}

}  // namespace

UiServer::UiServer(std::unique_ptr<State> state) : state_(std::move(state)) {}
UiServer::~UiServer() = default;

Result<std::unique_ptr<UiServer>> UiServer::listen(std::uint16_t port) {
  auto state = std::make_unique<State>();
  beast::error_code ec;
  const tcp::endpoint where(net::ip::make_address_v4("127.0.0.1"), port);
  state->acceptor.open(where.protocol(), ec);
  if (!ec) state->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) state->acceptor.bind(where, ec);
  if (!ec) state->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return Error::invalid("cannot listen on 127.0.0.1:" + std::to_string(port) + " (" + ec.message() +
                          "); choose another port with --port, or leave it out for a free one");
  return std::unique_ptr<UiServer>(new UiServer(std::move(state)));
}

std::uint16_t UiServer::port() const {
  return state_->acceptor.local_endpoint().port();
}

void UiServer::serve(const UiRules& rules, int threads) {
  state_->rules = &rules;
  accept_next(*state_);
  std::vector<std::thread> more;
  for (int i = 1; i < threads; ++i) more.emplace_back([this] { state_->io.run(); });
  state_->io.run();
  for (auto& t : more) t.join();
}

void UiServer::stop() {
  state_->io.stop();
}

}  // namespace px::ui
