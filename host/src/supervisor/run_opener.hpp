#pragma once
// The run's opener, as a service of the run (docs/opener.md): a page a
// sealed run asks to open is never opened for it (the user's browser is not
// behind the run's proxy and has the user's sign-ins). Its `BROWSER` and the
// names programs run to open a page (`xdg-open`, `sensible-browser`...) lead
// to the parallex executable, which hands the address here over a socket in
// the run's view; the address is shown to the user, whole and escaped, and
// recorded (an event, run.json's `open_requests`). Opening it stays the
// user's click.
//
// Shown on the run's terminal at once when the terminal is line by line (a
// plain command, a CLI's login); while a program holds it in raw mode (a
// harness's TUI, which owns the screen) the line waits for the run's end
// rather than drawing over it, and the event is there at once (`parallex
// events --follow`, the run's page).
//
// The socket takes one address a message from anything inside the run and
// answers one word: nothing a run sends does more than add one line to what
// the user sees, a bounded number of times (a burst, then one every two
// seconds; past that counted, not kept).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "common/watch_thread.hpp"
#include "run/events.hpp"
#include "run/notice.hpp"
#include "run/record_parts.hpp"

namespace px::supervisor {

namespace fs = std::filesystem;

class RunOpener {
 public:
  using Say = std::function<void(const run::Notice&)>;
  // Whether the run's network rule lets a host and port be reached now: the
  // run's proxy's live decision (NetworkProxy::allows_now), so that a host
  // allowed while the run goes on (`parallex allow --run`) is not marked.
  using InRule = std::function<bool(const std::string& host, std::uint16_t port)>;
  // `events` outlives this object. Nothing is made for an unsealed run (its
  // programs open what they like: the user chose no seal).
  RunOpener(InRule in_rule, bool sealed, Say say, const run::EventLog* events);
  ~RunOpener();
  RunOpener(const RunOpener&) = delete;
  RunOpener& operator=(const RunOpener&) = delete;

  // Makes PRIVATE_DIR/open: the socket, listening, and the opener's names.
  // A run goes on without it when it cannot be made (said, never fatal).
  void start(const fs::path& private_dir);
  // Serves the socket, once the seal is forked (its thread must not exist at the fork).
  void on_started();
  // BROWSER, PATH (the opener's folder first), PARALLEX_OPEN_SOCKET.
  void add_to(backend::EnvMap& env) const;
  // No more requests; what was asked goes into the record (and the lines
  // held back from a TUI into its notices, printed at the run's end).
  void stop(run::RunRecord& record);
  void release();

 private:
  void serve();  // on the watch's thread: one connection, one message
  std::string take(const std::string& by, const std::string& url, pid_t pid);
  bool allowed_now();

  InRule in_rule_;
  bool sealed_;
  Say say_;
  const run::EventLog* events_;
  fs::path dir_;
  UniqueFd listener_;
  WatchThread watch_;
  std::mutex mu_;
  run::OpenRequests taken_;        // under mu_
  std::vector<run::Notice> held_;  // under mu_: lines a TUI kept from the terminal
  double tokens_ = 0;              // the rate limit's bucket
  std::chrono::steady_clock::time_point refilled_;
};

}  // namespace px::supervisor
