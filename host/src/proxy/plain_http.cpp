// One plain HTTP request through the proxy (GET http://host/...), once the
// upstream is connected: its head rewritten in origin form (upstream_head),
// its body forwarded exactly as framed (Content-Length or chunked) and nothing
// after it, so a second, pipelined request never reaches the upstream (no
// request smuggling past the decision). The broker looks through the body as
// it goes; the upstream's response head is held until whole.
#include <algorithm>
#include <boost/asio/write.hpp>

#include "proxy/connection.hpp"
#include "proxy/reasons.hpp"
#include "proxy/server_core.hpp"

namespace px::proxy {
namespace asio = boost::asio;
using boost::system::error_code;

void Connection::forward_request() {
  std::string leftover = dest_.first_bytes.substr(request_.head_size);
  dest_.first_bytes = std::string();
  outgoing_ = upstream_head(request_, target_);
  Terminator* broker = server_.config.terminator.get();
  std::string_view body = leftover;
  std::vector<std::string_view> payload;  // a chunked body's data, without its framing
  switch (target_.body) {
    case Target::Body::none:
      up_.done = true;
      body = {};
      break;
    case Target::Body::length:
      up_.limited = true;
      body = body.substr(
          0, static_cast<std::size_t>(std::min<std::uint64_t>(body.size(), target_.content_length)));
      up_.remaining = target_.content_length - body.size();
      up_.done = up_.remaining == 0;
      break;
    case Target::Body::chunked: {
      up_.chunked = std::make_unique<ChunkedTracker>();
      if (broker && !to_this_machine_) payload_check_ = broker->body_check(dest_.endpoint.host);
      const auto step = up_.chunked->feed(body, payload_check_ ? &payload : nullptr);
      if (step.error) return close("error");
      body = body.substr(0, step.consumed);
      up_.done = step.done;
      break;
    }
  }
  if (broker && !to_this_machine_) body_check_ = broker->body_check(dest_.endpoint.host);
  if (body_carries_credential(body, payload)) return refuse_body();
  decision_.bytes_up += body.size();
  outgoing_.append(body);
  request_ = {};
  start_relay();
}

bool Connection::body_carries_credential(std::string_view raw, const std::vector<std::string_view>& payload) {
  if (body_check_ && !raw.empty() && body_check_->feed(raw)) return true;
  if (payload_check_)
    for (const auto piece : payload)
      if (payload_check_->feed(piece)) return true;
  return false;
}

void Connection::refuse_body() {
  error_code ig;
  upstream_.close(ig);
  if (decision_.bytes_down == 0 && response_head_.empty() && !response_head_done_)
    return refuse(403, reason::credential_exfiltration, "denied", true);
  // The answer has begun: the client cannot be told any more, only cut off.
  decision_.verdict = "denied";
  decision_.reason = reason::credential_exfiltration;
  server_.note_refused(decision_.host, decision_.port, reason::credential_exfiltration);
  close("error");
}

bool Connection::hold_response_head(const char* data, std::size_t n) {
  const std::size_t scanned = response_head_.size() < 3 ? 0 : response_head_.size() - 3;
  response_head_.append(data, n);
  if (response_head_.find("\r\n\r\n", scanned) == std::string::npos) {
    if (response_head_.size() > server_.config.limits.max_response_head) {
      response_head_ = std::string();
      refuse(502, reason::response_head_too_large, "failed");
      return false;
    }
    arm(down_);
    return false;
  }
  // The head is whole: it goes to the client with what came after it, then
  // the rest of the response is relayed as it comes.
  response_head_done_ = true;
  *down_.counter += response_head_.size();
  down_.pending.assign(response_head_.begin(), response_head_.end());
  response_head_ = std::string();
  asio::async_write(client_, asio::buffer(down_.pending),
                    [self = shared_from_this()](const error_code& e, std::size_t) {
                      if (self->state_ != State::relaying) return;
                      if (e) return self->close("error");
                      std::vector<char>().swap(self->down_.pending);
                      self->arm(self->down_);
                    });
  return true;
}

}  // namespace px::proxy
