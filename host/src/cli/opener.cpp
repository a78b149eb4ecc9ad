#include "cli/opener.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/shown.hpp"
#include "common/unique_fd.hpp"
#include "run/opener_protocol.hpp"

namespace px::cli {
namespace {

// How long the opener waits for the supervisor's answer.
constexpr int kOpenerAnswerMs = 3000;
// At most this many addresses from one command line (each its own request).
constexpr int kOpenerMaxArgs = 4;

void opener_say(const std::string& name, const std::string& text) {
  std::fputs((shown(name + " (parallex): " + text) + "\n").c_str(), stderr);
}

// One address to the supervisor; "" when it took it, else why not.
std::string opener_send(const std::string& socket_path, const std::string& name, const std::string& url) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) return "the opener's socket path is too long";
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  UniqueFd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!s || ::connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return std::string("the run's supervisor cannot be reached: ") + std::strerror(errno);
  const std::string message = name + std::string(1, '\0') + url;
  if (::send(s.get(), message.data(), message.size(), MSG_NOSIGNAL) < 0)
    return std::string("the address could not be handed over: ") + std::strerror(errno);
  timeval tv{kOpenerAnswerMs / 1000, (kOpenerAnswerMs % 1000) * 1000};
  ::setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char answer[256];
  const ssize_t n = ::recv(s.get(), answer, sizeof answer, 0);
  if (n <= 0) return "the run's supervisor did not answer";
  const std::string said(answer, static_cast<std::size_t>(n));
  return said == "ok" ? std::string() : said;
}

}  // namespace

std::optional<int> opener_entry(int argc, char** argv) {
  if (argc < 1 || argv[0] == nullptr) return std::nullopt;
  const std::string_view self = argv[0];
  const auto slash = self.rfind('/');
  const std::string name(slash == std::string_view::npos ? self : self.substr(slash + 1));
  if (std::find(run::kOpenerNames.begin(), run::kOpenerNames.end(), name) == run::kOpenerNames.end())
    return std::nullopt;
  std::vector<std::string> urls;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "--manual" || arg == "--version") {
      std::fputs(
          (name + " (parallex's opener in a sealed run): a page is never opened from inside the run; its "
                  "address is shown to you instead\n")
              .c_str(),
          stdout);
      return 0;
    }
    if (!arg.empty()) urls.push_back(arg);
  }
  if (urls.empty()) {
    opener_say(name, "give the address to open");
    return 1;
  }
  const char* socket_path = std::getenv(run::kOpenerSocketVariable);
  if (socket_path == nullptr || *socket_path == '\0') {
    opener_say(name,
               "not in a sealed parallex run (no PARALLEX_OPEN_SOCKET): " + urls.front() + " was not opened");
    return 3;
  }
  int status = 0;
  for (std::size_t i = 0; i < urls.size(); ++i) {
    if (i >= static_cast<std::size_t>(kOpenerMaxArgs)) {
      opener_say(name,
                 "at most " + std::to_string(kOpenerMaxArgs) + " addresses at once; the rest were not shown");
      return 1;
    }
    // Quiet when taken: a TUI that ran us owns the terminal.
    if (const std::string why = opener_send(socket_path, name, urls[i]); !why.empty()) {
      opener_say(name, urls[i] + " was not opened, nor shown to the user: " + why);
      status = 1;
    }
  }
  return status;
}

}  // namespace px::cli
