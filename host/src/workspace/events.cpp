#include "workspace/events.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/clock.hpp"
#include "common/json_io.hpp"
#include "common/redact.hpp"

namespace px::workspace {

Result<EventSink> EventSink::open(const std::string& target) {
  EventSink sink;
  if (target.rfind("fd:", 0) == 0) {
    const std::string digits = target.substr(3);
    int fd = -1;
    try {
      std::size_t used = 0;
      fd = std::stoi(digits, &used);
      if (used != digits.size()) fd = -1;
    } catch (const std::exception&) {
      fd = -1;
    }
    if (fd < 0 || digits.empty())
      return Error::invalid("--events " + target +
                            ": expected fd:N with N a file descriptor number, e.g. fd:3");
    if (fd <= 2)
      return Error::invalid(
          "--events " + target +
          ": fd 0, 1 and 2 are the command's own input and output; pass another fd (e.g. 3>events)");
    if (::fcntl(fd, F_GETFD) < 0)
      return Error::invalid("--events " + target + ": fd " + digits +
                            " is not open; open it when starting parallex");
    // The sealed command must not inherit it: it could write forged events.
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    sink.fd_ = fd;
    return sink;
  }
  if (target.empty()) return Error::invalid("--events needs a file or fd:N");
  sink.owned_ = UniqueFd(::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0600));
  if (!sink.owned_) return Error::io("--events " + target + ": cannot open it for writing", errno);
  sink.fd_ = sink.owned_.get();
  return sink;
}

void EventSink::emit(const std::string& event, nlohmann::json fields) {
  if (fd_ < 0) return;
  nlohmann::json line = nlohmann::json::object();
  line["event"] = event;
  line["time"] = iso_utc_now();
  for (auto& [k, v] : fields.items()) line[k] = std::move(v);
  // Every string a run produced could hold a secret.
  std::string text = redact(to_json_text(line)) + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (!failed_)
        std::fprintf(stderr, "parallex: cannot write events (%s); the run goes on\n", std::strerror(errno));
      failed_ = true;
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace px::workspace
