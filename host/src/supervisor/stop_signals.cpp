#include "supervisor/stop_signals.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdint>

namespace px::supervisor {

namespace {
constexpr int kStopSignals[3] = {SIGTERM, SIGHUP, SIGINT};
}

StopSignals::StopSignals(std::function<void(int)> on_stop) : on_stop_(std::move(on_stop)) {
  sigset_t set, old;
  ::sigemptyset(&set);
  for (int s : kStopSignals) ::sigaddset(&set, s);
  ::pthread_sigmask(SIG_BLOCK, &set, &old);
  for (int i = 0; i < 3; ++i) previously_blocked_[i] = ::sigismember(&old, kStopSignals[i]) == 1;
  signals_ = UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  wake_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
}

void StopSignals::start() {
  if (!thread_.joinable() && signals_ && wake_) thread_ = std::thread([this] { loop(); });
}

void StopSignals::take_pending() {
  if (!thread_.joinable()) read_pending(/*notify=*/true);
}

StopSignals::~StopSignals() {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_.get(), &one, sizeof one);
    thread_.join();
  }
  // Signals that came after the loop's last read, or before any loop, are
  // read here: nothing is pending for the caller once they are unblocked
  // again (a SIGTERM would end it).
  read_pending(/*notify=*/false);
  sigset_t set;
  ::sigemptyset(&set);
  for (int i = 0; i < 3; ++i)
    if (!previously_blocked_[i]) ::sigaddset(&set, kStopSignals[i]);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

void StopSignals::loop() {
  pollfd fds[2] = {{signals_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
  for (;;) {
    if (::poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents) return;
    read_pending(/*notify=*/true);
  }
}

void StopSignals::read_pending(bool notify) {
  if (!signals_) return;
  signalfd_siginfo info{};
  while (::read(signals_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    const int sig = static_cast<int>(info.ssi_signo);
    // The terminal's ^C (sent by the kernel to the foreground group) is
    // the command's; a SIGINT someone sent to the supervisor is ours.
    if (sig == SIGINT && info.ssi_code == SI_KERNEL) continue;
    int expected = 0;
    if (received_.compare_exchange_strong(expected, sig) && notify && on_stop_) on_stop_(sig);
  }
}

}  // namespace px::supervisor
