#include "common/watch_thread.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace px {
namespace {

// poll(), again after a signal (with the whole timeout: an idle tick may come
// a little late, never early); -1 on any other error.
int poll_retrying(pollfd* fds, nfds_t count, int timeout_ms) {
  for (;;) {
    const int rc = ::poll(fds, count, timeout_ms);
    if (rc >= 0 || errno != EINTR) return rc;
  }
}

}  // namespace

Status WatchThread::start(int fd, std::function<void()> on_readable, Options options) {
  if (running()) return Error::internal("a watch thread was started twice.");
  wake_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_) return Error::io("eventfd for a watch thread", errno);
  fd_ = fd;
  on_readable_ = std::move(on_readable);
  options_ = std::move(options);
  try {
    thread_ = std::thread([this]() noexcept { loop(); });
  } catch (const std::system_error& e) {
    wake_.reset();
    return Error::io("start a watch thread", e.code().value());
  }
  return ok();
}

void WatchThread::stop() {
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  // Cannot fail: the counter would have to reach 2^64 - 1 first.
  (void)!::write(wake_.get(), &one, sizeof one);
  thread_.join();
  wake_.reset();
}

void WatchThread::loop() {
  const bool idle = options_.on_idle && options_.idle_every.count() > 0;
  const int timeout_ms = idle ? static_cast<int>(options_.idle_every.count()) : -1;
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    // With two valid descriptors poll() fails only on a signal (retried);
    // anything else ends the watch rather than spin.
    const int ready = poll_retrying(fds, 2, timeout_ms);
    if (ready < 0) return;
    // stop() comes first: a descriptor that stays readable must not hold it up.
    if (fds[1].revents != 0) {
      if (options_.last_drain) {
        pollfd last{fd_, POLLIN, 0};
        if (poll_retrying(&last, 1, 0) > 0 && (last.revents & POLLIN)) on_readable_();
      }
      return;
    }
    if (ready == 0) {
      options_.on_idle();
      continue;
    }
    if (fds[0].revents & POLLIN) {
      on_readable_();
      continue;
    }
    // Hung up, in error or closed, with nothing left to read: poll() would
    // say so again at once for ever, so the watch ends here instead.
    if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) return;
  }
}

}  // namespace px
