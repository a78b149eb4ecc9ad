#include "broker/relay.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <boost/algorithm/string/join.hpp>
#include <boost/asio/write.hpp>

#include "broker/reasons.hpp"
#include "common/redact.hpp"
#include "proxy/host_rules.hpp"
#include "proxy/http_status.hpp"
#include "proxy/reasons.hpp"

namespace px::broker {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr std::size_t kReadChunk = 16 * 1024;
constexpr auto kTick = std::chrono::seconds(1);
constexpr auto kShutdownGrace = std::chrono::seconds(2);
// Requests read ahead of their responses (pipelining). Beyond this the client
// is not read until answers go out: its queue cannot grow without bound.
constexpr std::size_t kMaxPipelined = 32;

// A refusal inside the terminated connection: the client reads it as the
// server's answer, with the reason in x-proxy-error (as the proxy's own
// refusals) and a sentence in the body.
std::string refusal(int status, std::string_view reason, const std::string& message) {
  const std::string body = redact(message) + "\n";
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(proxy::status_text(status)) +
         "\r\nx-proxy-error: " + std::string(reason) +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

bool is_eof(const error_code& ec) {
  return ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
}

// What a failed client handshake says about the client.
std::string_view client_failure(const error_code& ec, const SniCheck& sni) {
  if (sni.mismatch) return reason::sni_mismatch;
  if (ec.category() == asio::error::get_ssl_category()) {
    switch (ERR_GET_REASON(static_cast<unsigned long>(ec.value()))) {
      case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
      case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
      case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
      case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
      case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
        return reason::client_refused_ca;
      default:
        break;
    }
  }
  return reason::client_tls_failed;
}

std::string hex_size(std::size_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%zx", n);
  return buf;
}

}  // namespace

// ---- the shared context's report ----

void BrokerContext::note_request(const std::string& host, bool refused) {
  std::lock_guard lock(mutex_);
  auto& h = hosts_[host];
  h.host = host;
  ++h.requests;
  if (refused) ++h.refused;
}

void BrokerContext::note_exfiltration(const Exfiltration& e) {
  std::lock_guard lock(mutex_);
  ++attempts_[{e.credential, e.host, e.where}];
}

void BrokerContext::note_failure(const std::string& host, std::string_view reason) {
  std::lock_guard lock(mutex_);
  ++failures_[{host, std::string(reason)}];
}

BrokerReport BrokerContext::report() const {
  std::lock_guard lock(mutex_);
  BrokerReport r;
  for (const auto& [name, h] : hosts_) r.hosts.push_back(h);
  for (const auto& [key, n] : attempts_) {
    r.exfiltration.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), n});
  }
  for (const auto& [key, n] : failures_) r.failures.push_back({key.first, key.second, n});
  return r;
}

// ---- the relay ----

Relay::Relay(std::shared_ptr<BrokerContext> context, tcp::socket client, std::string early,
             tcp::socket upstream, RelayTarget target, std::function<void(const RelayEnd&)> on_end)
    : ctx_(std::move(context)),
      client_(PrefixedSocket(std::move(client), std::move(early)), ctx_->client_facing.get(), target.tls),
      up_(std::move(upstream), ctx_->upstream.get(), target.tls),
      host_(std::move(target.host)),
      port_(target.port),
      binding_(std::move(target.binding)),
      local_(target.local),
      on_end_(std::move(on_end)),
      timer_(client_.get_executor()) {
  started_ = last_activity_ = Clock::now();
  sni_.expected = host_;
  // What this host's requests are scanned for and its responses cleaned of,
  // made once per connection; each request or response takes a cheap copy.
  scanner_template_ = ctx_->credentials.body_scanner(binding_);
  response_template_ = ctx_->credentials.response_replacer(binding_);
}

bool Relay::names_this_server(std::string_view authority) const {
  proxy::HostPort hp;
  const auto v = proxy::parse_authority(authority, false, local_ && !client_.tls() ? 80 : port_, hp);
  // This machine's addresses are refused as addresses but read whole.
  const bool read =
      v.ok() || (local_ && v.reason == proxy::reason::ip_literal && proxy::is_loopback_name(hp.host));
  if (!read || hp.port != port_) return false;
  // This machine's server answers to each spelling of loopback; any other host only to its own name.
  return local_ ? proxy::is_loopback_name(hp.host) : hp.host == host_;
}

void Relay::start() {
  error_code ig;
  client_.lowest_layer().set_option(tcp::no_delay(true), ig);
  up_.lowest_layer().set_option(tcp::no_delay(true), ig);
  tick();
  if (!client_.tls()) {
    // A plain-HTTP server on this machine: no handshakes, requests at once.
    handshakes_left_ = 0;
    return after_handshakes();
  }
  auto leaf = ctx_->ca->leaf_for(host_);
  if (!leaf) {
    log_connection(reason::client_tls_failed, leaf.error().message);
    return close("error");
  }
  if (auto s = prepare_client_facing(client_.native_handle(), *leaf.value(), &sni_); !s) {
    log_connection(reason::client_tls_failed, s.error().message);
    return close("error");
  }
  if (auto s = prepare_upstream(up_.native_handle(), host_); !s) {
    log_connection(reason::upstream_tls_failed, s.error().message);
    return close("error");
  }
  // Both handshakes at once: the client's does not wait for the server's.
  client_.async_handshake(asio::ssl::stream_base::server, [self = shared_from_this()](const error_code& ec) {
    self->on_handshake(true, ec);
  });
  up_.async_handshake(asio::ssl::stream_base::client,
                      [self = shared_from_this()](const error_code& ec) { self->on_handshake(false, ec); });
}

void Relay::tick() {
  timer_.expires_after(kTick);
  timer_.async_wait([self = shared_from_this()](const error_code& ec) {
    if (ec || self->phase_ == Phase::closed) return;
    const auto now = Clock::now();
    const auto& limits = self->ctx_->limits;
    if (self->phase_ == Phase::handshake && now - self->started_ >= limits.handshake_timeout) {
      self->log_connection(reason::client_tls_failed, "the TLS handshakes did not finish in time");
      return self->close("idle-timeout");
    }
    if (self->phase_ == Phase::finishing && now >= self->finish_deadline_) return self->close("eof");
    if (self->phase_ == Phase::serving && self->head_timing_ &&
        now - self->head_started_ >= limits.header_timeout) {
      self->head_timing_ = false;
      Exchange ex;
      ex.started = self->head_started_;
      self->refuse(std::move(ex), 408, reason::header_timeout,
                   "parallex broker: the request head did not arrive in time.");
    } else if (now - self->last_activity_ >= limits.idle_timeout) {
      return self->close("idle-timeout");
    }
    self->tick();
  });
}

void Relay::on_handshake(bool client_side, const error_code& ec) {
  if (phase_ == Phase::closed) return;
  (client_side ? client_hs_ : upstream_hs_) = ec;
  // A client whose handshake failed is refused at once, whatever the server's
  // handshake is doing: its answer would change nothing, and the refusal is
  // logged when it happens, not when a slow server finishes (or never).
  if (client_side && ec) return refuse_failed_client();
  if (--handshakes_left_ > 0) return;
  after_handshakes();
}

void Relay::refuse_failed_client() {
  last_activity_ = Clock::now();
  const std::string_view why = client_failure(client_hs_, sni_);
  std::string detail;
  if (why == reason::sni_mismatch) {
    detail = "the client asked for " + sni_.seen.substr(0, 256) + " inside a tunnel to " + host_;
  } else if (why == reason::client_refused_ca) {
    detail = "the client does not trust the run's CA (" + client_hs_.message() +
             "); point it at the run's CA bundle, or make the host passthrough if it pins its certificates";
  } else {
    detail = client_hs_.message();
  }
  log_connection(why, detail);
  close("refused");
}

void Relay::after_handshakes() {
  last_activity_ = Clock::now();
  if (upstream_hs_) {
    // Never a downgrade: the client gets a 502 naming the reason for each
    // request it sends, and the connection ends.
    const std::string verify = upstream_verify_error(up_.native_handle());
    upstream_failure_reason_ = verify.empty() ? reason::upstream_tls_failed : reason::upstream_certificate;
    upstream_failure_detail_ = verify.empty() ? upstream_hs_.message() : verify;
    log_connection(upstream_failure_reason_, upstream_failure_detail_);
  }
  phase_ = Phase::serving;
  read_request();
}

// ---- client -> upstream ----

void Relay::read_client(ClientWait why) {
  client_wait_ = why;
  client_reading_ = true;
  if (client_buf_.empty()) client_buf_.resize(kReadChunk);
  client_.async_read_some(
      asio::buffer(client_buf_),
      [self = shared_from_this()](const error_code& ec, std::size_t n) { self->on_client_read(ec, n); });
}

void Relay::on_client_read(const error_code& ec, std::size_t n) {
  client_reading_ = false;
  if (phase_ == Phase::closed) return;
  if (shutdown_after_read_) return shutdown_client();
  if (phase_ == Phase::finishing) return;
  if (ec) {
    if (client_wait_ == ClientWait::head && in_.empty() && is_eof(ec)) {
      // The client is done: what it asked is still answered, then the end.
      client_eof_ = true;
      client_wait_ = ClientWait::none;
      if (pending_.empty() && !responding_) finish();
      return;
    }
    return close(is_eof(ec) ? "client-closed" : "error");
  }
  last_activity_ = Clock::now();
  bytes_up_ += n;
  in_.append(client_buf_.data(), n);
  switch (client_wait_) {
    case ClientWait::head:
      return read_request();
    case ClientWait::body:
      return forward_request_body();
    case ClientWait::tunnel:
      return tunnel(true);
    case ClientWait::none:
      return;
  }
}

void Relay::read_request() {
  // Requests are read only while serving: a WebSocket tunnel (which may have
  // started before this call) reads the client on its own.
  if (phase_ != Phase::serving) return;
  client_wait_ = ClientWait::none;
  if (pending_.size() >= kMaxPipelined) {
    waiting_for_room_ = true;
    return;
  }
  const proxy::ParseResult r = proxy::parse_request_head(in_, ctx_->limits.request_head, request_);
  if (r.state == proxy::ParseState::need_more) {
    if (!in_.empty() && !head_timing_) {
      head_timing_ = true;
      head_started_ = Clock::now();
    }
    return read_client(ClientWait::head);
  }
  head_timing_ = false;
  if (r.state == proxy::ParseState::bad) {
    Exchange ex;
    ex.started = Clock::now();
    return refuse(
        std::move(ex), r.status, r.reason,
        "parallex broker: the request to " + host_ + " is malformed (" + std::string(r.reason) + ").");
  }
  handle_request();
}

void Relay::handle_request() {
  Exchange ex;
  ex.started = Clock::now();
  ex.record.host = host_;
  ex.record.port = port_;
  ex.record.method = request_.method;
  ex.record.path = request_.target;

  if (!upstream_failure_reason_.empty()) {
    ex.record.detail = upstream_failure_detail_;
    return refuse(std::move(ex), 502, upstream_failure_reason_,
                  "parallex broker: the server " + host_ + " failed verification (" +
                      upstream_failure_detail_ + "); nothing was sent to it.",
                  "failed");
  }
  if (request_.method == "CONNECT" || request_.method == "TRACE") {
    return refuse(
        std::move(ex), 400, proxy::reason::bad_method,
        "parallex broker: " + request_.method + " is not relayed inside a connection to " + host_ + ".");
  }
  // Through the run's proxy, a plain-HTTP client names the server in each
  // request (absolute form): taken to its path when it names this server.
  if (local_ && !client_.tls() && request_.target.rfind("http://", 0) == 0) {
    const std::string_view rest = std::string_view(request_.target).substr(7);
    const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
    if (!names_this_server(authority)) {
      return refuse(std::move(ex), 421, reason::wrong_host,
                    "parallex broker: this connection is to " + host_ + ":" + std::to_string(port_) +
                        "; its requests must name it.");
    }
    std::string path(rest.substr(authority.size()));
    if (path.empty() || path.front() != '/') path = "/" + path;
    request_.target = std::move(path);
    ex.record.path = request_.target;
  }
  if (request_.target.empty() || request_.target.front() != '/') {
    return refuse(std::move(ex), 400, reason::not_origin_form,
                  "parallex broker: requests to " + host_ + " must name a path (origin form).");
  }
  // The Host header must name the host the connection was allowed for: the
  // rules and credentials of this host must not serve a request meant for
  // another name behind the same server.
  const std::size_t n_host = request_.count("host");
  if (n_host > 1)
    return refuse(std::move(ex), 400, proxy::reason::duplicate_header, "parallex broker: two Host headers.");
  if (n_host == 0 && request_.version == "HTTP/1.1") {
    return refuse(std::move(ex), 400, reason::missing_host,
                  "parallex broker: an HTTP/1.1 request needs a Host header.");
  }
  if (n_host == 1) {
    if (!names_this_server(request_.find("host")->value)) {
      return refuse(
          std::move(ex), 421, reason::wrong_host,
          "parallex broker: this connection is to " + host_ + "; its requests must say Host: " + host_ + ".");
    }
  }
  if (const auto v = proxy::check_body_framing(request_, body_); !v.ok()) {
    return refuse(std::move(ex), v.status, v.reason,
                  "parallex broker: the request's body framing is ambiguous.");
  }
  if (request_.count("http2-settings") > 0) {
    return refuse(std::move(ex), 400, reason::upgrade_refused,
                  "parallex broker: h2c upgrades are not relayed.");
  }
  if (request_.count("upgrade") > 1) {
    return refuse(std::move(ex), 400, reason::upgrade_refused,
                  "parallex broker: one Upgrade header at most.");
  }
  if (const auto* up = request_.find("upgrade")) {
    if (request_.method != "GET" || !proxy::iequals(up->value, "websocket") ||
        body_.body != proxy::Target::Body::none) {
      return refuse(std::move(ex), 400, reason::upgrade_refused,
                    "parallex broker: only WebSocket upgrades are relayed.");
    }
    ex.upgrade = true;
  }

  // Credentials: a placeholder bound elsewhere is refused and reported; one
  // bound here is swapped for its secret.
  HeadOutcome outcome = ctx_->credentials.apply_to_head(binding_, request_);
  if (outcome.exfiltration) {
    ctx_->note_exfiltration(*outcome.exfiltration);
    const std::string cred = outcome.exfiltration->credential;
    ex.record.detail = "placeholder of credential " + cred + " in the " + outcome.exfiltration->where;
    return refuse(std::move(ex), 403, reason::exfiltration,
                  "parallex broker: this request to " + host_ + " carries the credential \"" + cred +
                      "\", which may not be sent to " + host_ +
                      ". It was not sent, and the attempt is reported.");
  }
  ex.record.credentials = boost::algorithm::join(outcome.substituted, ",");
  const bool holds_secret = !outcome.substituted.empty();

  // Request rules, first match wins.
  if (const auto it = ctx_->rules.find(host_); it != ctx_->rules.end() && !it->second.rules.empty()) {
    const auto path = canonical_path(request_.target);
    if (!path) {
      return refuse(
          std::move(ex), 400, reason::ambiguous_path,
          "parallex broker: the request rules of " + host_ +
              " cannot judge this path (dot segments, '//', an encoded '/', '\\' or ';'); write it plainly.");
    }
    const RuleDecision d = decide(it->second.rules, request_.method, *path);
    if (d.rule != nullptr) ex.record.rule = host_ + " #" + std::to_string(d.index + 1) + " " + d.rule->text();
    if (!d.allowed) {
      const std::string shown = redact(path->substr(0, 200));
      if (d.rule == nullptr) {
        ex.record.rule = host_ + ": no rule matched";
        return refuse(std::move(ex), 403, reason::no_rule_matched,
                      "parallex broker: no request rule of this run allows " + request_.method + " " + shown +
                          " on " + host_ + ".");
      }
      const std::string because = d.rule->reason.empty() ? d.rule->text() : d.rule->reason;
      return refuse(std::move(ex), 403, reason::rule_denied,
                    "parallex broker: " + request_.method + " " + shown + " on " + host_ +
                        " is refused: " + because + ".");
    }
  } else {
    ex.record.rule = "no rules";
  }

  const proxy::Header* connection = request_.find("connection");
  ex.close_after = (connection != nullptr && header_lists(connection->value, "close")) ||
                   (request_.version == "HTTP/1.0" &&
                    (connection == nullptr || !header_lists(connection->value, "keep-alive")));

  // The head as forwarded: as received, with the secrets swapped in and no
  // Proxy-* header (the run's proxy password never reaches a server).
  out_up_.clear();
  out_up_ += request_.method + " " + request_.target + " " + request_.version + "\r\n";
  for (const auto& h : request_.headers) {
    if (h.name.size() >= 6 && proxy::iequals(std::string_view(h.name).substr(0, 6), "proxy-")) continue;
    out_up_ += h.name + ": " + h.value + "\r\n";
  }
  out_up_ += "\r\n";
  in_.erase(0, request_.head_size);
  if (holds_secret) {
    for (auto& h : request_.headers) OPENSSL_cleanse(h.value.data(), h.value.size());
  }
  request_ = {};
  ++requests_;

  body_left_ = body_.body == proxy::Target::Body::length ? body_.content_length : 0;
  body_chunks_.reset(body_.body == proxy::Target::Body::chunked ? new proxy::ChunkedTracker() : nullptr);
  body_scanner_ = scanner_template_;
  raw_scanner_ = body_.body == proxy::Target::Body::chunked ? body_scanner_ : StreamScanner();
  ex.id = ++last_id_;
  body_owner_ = ex.id;
  pending_.push_back(std::move(ex));
  pump_responses();
  asio::async_write(up_, asio::buffer(out_up_),
                    [self = shared_from_this()](const error_code& ec, std::size_t) {
                      // The head held a secret: it does not stay in memory longer than needed.
                      OPENSSL_cleanse(self->out_up_.data(), self->out_up_.size());
                      if (self->ending()) return;
                      if (ec) return self->close("error");
                      self->forward_request_body();
                    });
}

void Relay::forward_request_body() {
  if (phase_ != Phase::serving) return;
  const bool done = (body_.body == proxy::Target::Body::none) ||
                    (body_.body == proxy::Target::Body::length && body_left_ == 0);
  if (done) {
    body_.body = proxy::Target::Body::none;
    // The exchange may be answered already (a server that replies before the
    // body is in); then it is gone from pending_ and the next request is read.
    if (const Exchange* ex = body_exchange(); ex != nullptr && ex->upgrade) {
      awaiting_upgrade_ = true;  // the response decides: a tunnel, or the next request
      return;
    }
    if (const Exchange* ex = body_exchange(); ex != nullptr && ex->close_after)
      return;  // nothing more is read
    return read_request();
  }
  if (in_.empty()) return read_client(ClientWait::body);
  std::size_t take = 0;
  std::vector<std::string_view> spans;
  if (body_.body == proxy::Target::Body::length) {
    take = static_cast<std::size_t>(std::min<std::uint64_t>(body_left_, in_.size()));
    body_left_ -= take;
    spans.emplace_back(in_.data(), take);
  } else {
    const auto step = body_chunks_->feed(in_, &spans);
    if (step.error) {
      if (Exchange* ex = body_exchange()) ex->record.detail = "malformed chunked body";
      return close("error");
    }
    take = step.consumed;
    if (step.done) body_.body = proxy::Target::Body::none;
  }
  // Looked at before it is sent: the end of a placeholder never leaves.
  if (!body_scanner_.empty()) {
    int tag = -1;
    for (const auto span : spans) {
      if (tag < 0) tag = body_scanner_.feed(span);
    }
    if (tag < 0 && !raw_scanner_.empty()) tag = raw_scanner_.feed(std::string_view(in_).substr(0, take));
    if (tag >= 0) return request_body_exfiltration(tag);
  }
  for (const auto span : spans) {
    if (Exchange* ex = body_exchange()) ex->record.bytes_up += span.size();
  }
  if (take == in_.size()) {
    out_up_.swap(in_);
    in_.clear();
  } else {
    out_up_.assign(in_, 0, take);
    in_.erase(0, take);
  }
  asio::async_write(up_, asio::buffer(out_up_),
                    [self = shared_from_this()](const error_code& ec, std::size_t) {
                      if (self->ending()) return;
                      if (ec) return self->close("error");
                      self->last_activity_ = Clock::now();
                      self->forward_request_body();
                    });
}

void Relay::request_body_exfiltration(int tag) {
  const auto& cred = ctx_->credentials.credentials().at(static_cast<std::size_t>(tag));
  const Exfiltration e{cred.name, host_, "request body"};
  ctx_->note_exfiltration(e);
  Exchange* answered = body_exchange();
  if (answered == nullptr) {
    // The server answered before the body was in, and the answer is out:
    // nothing to refuse any more, so the connection is cut instead.
    if (ctx_->log) {
      RequestRecord r;
      r.host = host_;
      r.port = port_;
      r.verdict = "denied";
      r.reason = reason::exfiltration;
      r.detail = "placeholder of credential " + cred.name + " in a request body (after its answer)";
      ctx_->log->write(r);
    }
    return close("refused");
  }
  Exchange& ex = *answered;
  ex.record.detail = "placeholder of credential " + cred.name + " in the request body";
  ex.record.status = 403;
  ex.record.verdict = "denied";
  ex.record.reason = reason::exfiltration;
  if (!ex.response_started) {
    ex.local = refusal(403, reason::exfiltration,
                       "parallex broker: this request to " + host_ + " carries the credential \"" +
                           cred.name + "\" in its body, which may not be sent to " + host_ +
                           ". The request was cut off before it, and the attempt is reported.");
  }
  client_wait_ = ClientWait::none;
  // The server has the head and part of the body: the request never completes.
  error_code ig;
  up_.lowest_layer().close(ig);
  if (!responding_) pump_responses();
}

Relay::Exchange* Relay::body_exchange() {
  for (auto& ex : pending_) {
    if (ex.id == body_owner_) return &ex;
  }
  return nullptr;
}

void Relay::refuse(Exchange ex, int status, std::string_view why, const std::string& message,
                   std::string_view verdict) {
  if (ex.record.host.empty()) {
    ex.record.host = host_;
    ex.record.port = port_;
  }
  ex.record.status = status;
  ex.record.verdict = verdict;
  ex.record.reason = why;
  ex.local = refusal(status, why, message);
  ex.close_after = true;
  client_wait_ = ClientWait::none;  // nothing more is read from this client
  request_ = {};
  pending_.push_back(std::move(ex));
  pump_responses();
}

// ---- upstream -> client ----

void Relay::pump_responses() {
  if (responding_ || pending_.empty() || ending()) return;
  responding_ = true;
  if (!pending_.front().local.empty()) return send_local();
  handle_response_head();
}

void Relay::read_upstream() {
  if (up_buf_.empty()) up_buf_.resize(kReadChunk);
  up_.async_read_some(
      asio::buffer(up_buf_),
      [self = shared_from_this()](const error_code& ec, std::size_t n) { self->on_upstream_read(ec, n); });
}

void Relay::on_upstream_read(const error_code& ec, std::size_t n) {
  if (ending()) return;
  if (phase_ == Phase::tunnel) {
    if (ec) return close(is_eof(ec) ? "eof" : "error");
    last_activity_ = Clock::now();
    up_in_.append(up_buf_.data(), n);
    return tunnel(false);
  }
  if (ec) {
    if (pending_.empty()) return close("eof");
    Exchange& front = pending_.front();
    if (!front.local.empty() && !front.response_started) return send_local();
    if (front.response_started && response_body_ == BodyKind::until_close && is_eof(ec)) {
      // The end of a body framed by the end of the connection. A connection
      // cut without TLS close_notify is passed on as such (no close_notify
      // to the client either), so the client sees the same truncation.
      if (ec == asio::ssl::error::stream_truncated) {
        upstream_truncated_ = true;
        front.record.detail = "the server closed without close_notify";
      }
      response_body_ = BodyKind::none;
      return write_client(replacing_ ? replacer_.finish() : std::string(), &Relay::response_done);
    }
    if (!front.response_started) front.record.detail = "the server closed the connection before answering";
    return close(is_eof(ec) ? "upstream-closed" : "error");
  }
  last_activity_ = Clock::now();
  up_in_.append(up_buf_.data(), n);
  if (pending_.empty()) return close("error");  // a server that speaks unasked
  if (response_body_ == BodyKind::none) return handle_response_head();
  forward_response_body();
}

void Relay::handle_response_head() {
  Exchange& front = pending_.front();
  Response response;
  const proxy::ParseResult r = parse_response_head(up_in_, ctx_->limits.response_head, response);
  if (r.state == proxy::ParseState::need_more) return read_upstream();
  if (r.state == proxy::ParseState::bad || (response.status == 101 && !front.upgrade)) {
    front.record.detail = std::string(r.state == proxy::ParseState::bad ? r.reason : "unasked 101");
    if (front.response_started) return close("error");
    front.local =
        refusal(502, reason::bad_upstream_response,
                "parallex broker: the server " + host_ + " sent a response that cannot be relayed safely.");
    front.record.status = 502;
    front.record.verdict = "failed";
    front.record.reason = reason::bad_upstream_response;
    return send_local();
  }
  const std::string method = front.record.method;
  const ResponseFraming framing = response_framing(response, method);
  if (!framing.ok) {
    front.local = refusal(502, reason::bad_upstream_response,
                          "parallex broker: the server " + host_ + " framed its response ambiguously.");
    front.record.status = 502;
    front.record.verdict = "failed";
    front.record.reason = reason::bad_upstream_response;
    front.record.detail = "conflicting Content-Length";
    return send_local();
  }
  const bool interim = response.status >= 100 && response.status < 200 && response.status != 101;
  front.response_started = true;
  if (!interim) front.record.status = response.status;

  // The head as forwarded: a secret the server echoes goes back to its placeholder.
  const bool te = response.count("transfer-encoding") > 0;
  std::string head = response.version + " " + std::to_string(response.status) +
                     (response.reason_phrase.empty() ? "" : " " + response.reason_phrase) + "\r\n";
  for (auto& h : response.headers) {
    if (te && proxy::iequals(h.name, "content-length")) continue;
    response_template_.replace_in(h.value);
    head += h.name + ": " + h.value + "\r\n";
  }
  head += "\r\n";
  up_in_.erase(0, response.head_size);

  if (interim) {
    // 100 Continue, 103 Early Hints: passed on; the final answer follows.
    return write_client(std::move(head), &Relay::handle_response_head);
  }
  if (response.status == 101) {
    front.record.status = 101;
    return write_client(std::move(head), &Relay::start_tunnel);
  }
  const proxy::Header* encoding = response.find("content-encoding");
  replacer_ = response_template_;
  replacing_ = !replacer_.empty() && (encoding == nullptr || proxy::iequals(encoding->value, "identity"));
  response_body_ = framing.kind;
  response_left_ = framing.length;
  response_chunks_.reset(framing.kind == BodyKind::chunked ? new proxy::ChunkedTracker() : nullptr);
  const proxy::Header* connection = response.find("connection");
  if ((connection != nullptr && header_lists(connection->value, "close")) ||
      framing.kind == BodyKind::until_close ||
      (response.version == "HTTP/1.0" &&
       (connection == nullptr || !header_lists(connection->value, "keep-alive")))) {
    front.close_after = true;
  }
  write_client(std::move(head), &Relay::forward_response_body);
}

void Relay::forward_response_body() {
  if (ending()) return;
  Exchange& front = pending_.front();
  if (response_body_ == BodyKind::none || (response_body_ == BodyKind::length && response_left_ == 0)) {
    response_body_ = BodyKind::none;
    return write_client(replacing_ ? replacer_.finish() : std::string(), &Relay::response_done);
  }
  if (up_in_.empty()) return read_upstream();
  std::string out;
  // Takes the first n bytes of up_in_ into `out`: the whole buffer is swapped,
  // not copied (the usual case: one TLS record, all of it body).
  const auto take_front = [this, &out](std::size_t n) {
    if (n == up_in_.size()) {
      out.swap(up_in_);
      up_in_.clear();
    } else {
      out.assign(up_in_, 0, n);
      up_in_.erase(0, n);
    }
  };
  switch (response_body_) {
    case BodyKind::length: {
      const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(response_left_, up_in_.size()));
      response_left_ -= take;
      front.record.bytes_down += take;
      take_front(take);
      if (replacing_) {
        replacer_.feed(out);
        if (response_left_ == 0) out += replacer_.finish();
      }
      if (response_left_ == 0) response_body_ = BodyKind::none;
      break;
    }
    case BodyKind::chunked: {
      std::vector<std::string_view> spans;
      const auto step = response_chunks_->feed(up_in_, &spans);
      if (step.error) {
        front.record.detail = "malformed chunked response";
        return close("error");
      }
      for (const auto span : spans) front.record.bytes_down += span.size();
      if (replacing_) {
        // Decoded, replaced and chunked again: a secret split across chunks
        // is found too. Trailers are dropped.
        for (const auto span : spans) {
          std::string part(span);
          replacer_.feed(part);
          if (!part.empty()) out += hex_size(part.size()) + "\r\n" + part + "\r\n";
        }
        if (step.done) {
          const std::string tail = replacer_.finish();
          if (!tail.empty()) out += hex_size(tail.size()) + "\r\n" + tail + "\r\n";
          out += "0\r\n\r\n";
        }
        up_in_.erase(0, step.consumed);
      } else {
        take_front(step.consumed);
      }
      if (step.done) response_body_ = BodyKind::none;
      break;
    }
    case BodyKind::until_close:
      front.record.bytes_down += up_in_.size();
      take_front(up_in_.size());
      if (replacing_) replacer_.feed(out);
      break;
    case BodyKind::none:
      break;
  }
  write_client(std::move(out), &Relay::forward_response_body);
}

void Relay::write_client(std::string data, void (Relay::*then)()) {
  if (data.empty()) return (this->*then)();
  out_down_ = std::move(data);
  asio::async_write(client_, asio::buffer(out_down_),
                    [self = shared_from_this(), then](const error_code& ec, std::size_t n) {
                      if (self->ending()) return;
                      if (ec) return self->close("client-closed");
                      self->bytes_down_ += n;
                      self->last_activity_ = Clock::now();
                      ((*self).*then)();
                    });
}

void Relay::response_done() {
  Exchange& front = pending_.front();
  log_exchange(front, "allowed", reason::allowed);
  const bool close_after = front.close_after;
  const bool was_upgrade = front.upgrade;
  pending_.pop_front();
  responding_ = false;
  if (upstream_truncated_) return close("eof");
  if (close_after) return finish();
  if (waiting_for_room_) {
    waiting_for_room_ = false;
    read_request();
  }
  if (was_upgrade && awaiting_upgrade_) {
    // Not switched (401, 426...): the connection goes on with the next request.
    awaiting_upgrade_ = false;
    read_request();
  }
  if (!pending_.empty()) return pump_responses();
  if (client_eof_) finish();
}

void Relay::send_local() {
  Exchange& front = pending_.front();
  out_down_ = std::move(front.local);
  front.local.clear();
  asio::async_write(
      client_, asio::buffer(out_down_), [self = shared_from_this()](const error_code& ec, std::size_t n) {
        if (self->ending()) return;
        self->bytes_down_ += n;
        Exchange& ex = self->pending_.front();
        self->log_exchange(ex, ex.record.verdict.empty() ? "denied" : ex.record.verdict, ex.record.reason);
        self->pending_.pop_front();
        if (ec) return self->close("client-closed");
        self->finish();
      });
}

// ---- WebSocket: a tunnel after a checked upgrade ----

void Relay::start_tunnel() {
  Exchange& front = pending_.front();
  log_exchange(front, "allowed", reason::allowed);
  pending_.clear();
  phase_ = Phase::tunnel;
  awaiting_upgrade_ = false;
  tunnel(true);
  tunnel(false);
}

void Relay::tunnel(bool up) {
  if (phase_ != Phase::tunnel) return;
  std::string& pending_in = up ? in_ : up_in_;
  std::string& out = up ? out_up_ : out_down_;
  if (pending_in.empty()) {
    return up ? read_client(ClientWait::tunnel) : read_upstream();
  }
  out = std::move(pending_in);
  pending_in.clear();
  const auto done = [self = shared_from_this(), up](const error_code& ec, std::size_t n) {
    if (self->phase_ != Phase::tunnel) return;
    if (ec) return self->close("error");
    if (!up) self->bytes_down_ += n;
    self->last_activity_ = Clock::now();
    self->tunnel(up);
  };
  if (up) {
    asio::async_write(up_, asio::buffer(out), done);
  } else {
    asio::async_write(client_, asio::buffer(out), done);
  }
}

// ---- the end ----

void Relay::log_exchange(Exchange& ex, std::string_view verdict, std::string_view why) {
  ex.record.verdict = verdict;
  ex.record.reason = why;
  ex.record.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - ex.started);
  if (ctx_->log) ctx_->log->write(ex.record);
  ctx_->note_request(host_, verdict != "allowed");
}

void Relay::log_connection(std::string_view why, const std::string& detail) {
  RequestRecord r;
  r.host = host_;
  r.port = port_;
  r.verdict = "denied";
  r.reason = why;
  r.detail = detail;
  r.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_);
  if (ctx_->log) ctx_->log->write(r);
  ctx_->note_failure(host_, why);
  end_reason_ = why;
  connection_logged_ = true;
}

void Relay::finish() {
  if (ending()) return;
  phase_ = Phase::finishing;
  finish_deadline_ = Clock::now() + kShutdownGrace;
  error_code ig;
  up_.lowest_layer().close(ig);
  // close_notify tells the client the last response is complete (a body read
  // to the end of the connection needs it). A read in progress is cancelled
  // first: the shutdown must not overlap it.
  if (client_reading_) {
    shutdown_after_read_ = true;
    client_.lowest_layer().cancel(ig);
    return;
  }
  shutdown_client();
}

void Relay::shutdown_client() {
  shutdown_after_read_ = false;
  client_.async_shutdown([self = shared_from_this()](const error_code&) { self->close("eof"); });
}

void Relay::abort(std::string_view how) {
  close(how);
}

void Relay::close(std::string_view how) {
  if (phase_ == Phase::closed) return;
  if (phase_ == Phase::handshake && !connection_logged_) {
    log_connection(how == "stopped" ? reason::stopped : reason::client_tls_failed,
                   "the connection ended during the TLS handshakes (" + std::string(how) + ")");
  }
  phase_ = Phase::closed;
  error_code ig;
  timer_.cancel();
  client_.lowest_layer().close(ig);
  up_.lowest_layer().close(ig);
  // Exchanges still open are logged as ended by `how`.
  for (auto& ex : pending_) {
    if (ex.record.reason.empty()) {
      ex.record.detail =
          ex.record.detail.empty() ? "connection ended: " + std::string(how) : ex.record.detail;
      log_exchange(ex, "failed",
                   how == "cut" ? proxy::reason::paused
                                : (how == "stopped" ? reason::stopped : reason::upstream_closed));
    } else {
      log_exchange(ex, ex.record.verdict.empty() ? "denied" : ex.record.verdict, ex.record.reason);
    }
  }
  pending_.clear();
  if (on_end_) {
    RelayEnd end;
    end.closed = how;
    end.reason = end_reason_;
    end.bytes_up = bytes_up_;
    end.bytes_down = bytes_down_;
    end.requests = requests_;
    auto cb = std::move(on_end_);
    on_end_ = nullptr;
    cb(end);
  }
}

}  // namespace px::broker
