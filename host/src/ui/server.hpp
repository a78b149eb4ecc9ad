#pragma once
// The HTTP server of `parallex ui` (Boost.Beast on Asio): 127.0.0.1 only,
// each request answered by UiRules (ui/rules.hpp), GET /api/events kept open
// as a server-sent-events stream (ui/event_stream.hpp). Bounded: a request
// head of 16 KiB, a body of 1 MiB, 30 s to send a request, 64 connections.
#include <cstdint>
#include <memory>

#include "common/error.hpp"
#include "ui/rules.hpp"

namespace px::ui {

class UiServer {
 public:
  // Listens on 127.0.0.1:`port` (0: a free port the system picks). `make_rules`
  // gets the port it listens on.
  static Result<std::unique_ptr<UiServer>> listen(std::uint16_t port);
  ~UiServer();
  std::uint16_t port() const;
  // Serves until stop() (from a signal's thread or another), on `threads` threads.
  void serve(const UiRules& rules, int threads);
  void stop();

  struct State;

 private:
  explicit UiServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace px::ui
