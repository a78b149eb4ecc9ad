#include "supervisor/stop_signals.hpp"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

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
}

void StopSignals::start() {
  // No last drain: the destructor reads what is left, without calling on_stop.
  if (!watch_.running() && signals_)
    (void)watch_.start(signals_.get(), [this] { read_pending(/*notify=*/true); });
}

void StopSignals::take_pending() {
  if (!watch_.running()) read_pending(/*notify=*/true);
}

StopSignals::~StopSignals() {
  watch_.stop();
  // Signals that came after the watch's last read, or before any watch, are
  // read here: nothing is pending for the caller once they are unblocked
  // again (a SIGTERM would end it).
  read_pending(/*notify=*/false);
  sigset_t set;
  ::sigemptyset(&set);
  for (int i = 0; i < 3; ++i)
    if (!previously_blocked_[i]) ::sigaddset(&set, kStopSignals[i]);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
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
