#include "supervisor/global_pause.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/replace_file.hpp"
#include "common/unique_fd.hpp"
#include "supervisor/registry.hpp"

namespace px::supervisor {

fs::path pause_file(const fs::path& runtime_dir) {
  return runtime_dir / "paused";
}

Status set_global_pause(const fs::path& runtime_dir, const std::string& by) {
  PX_TRY(ensure_private_dir(runtime_dir));
  return replace_file(pause_file(runtime_dir),
                      nlohmann::json{{"since", utc_now_iso()}, {"by", by}}.dump() + "\n");
}

void clear_global_pause(const fs::path& runtime_dir) {
  ::unlink(pause_file(runtime_dir).c_str());
}

std::optional<std::string> global_pause_since(const fs::path& runtime_dir) {
  std::ifstream in(pause_file(runtime_dir));
  if (!in) return std::nullopt;
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_object() && j.contains("since") && j["since"].is_string()) return j["since"].get<std::string>();
  return std::string("an unknown time");
}

Status wait_while_globally_paused(const fs::path& runtime_dir,
                                  const std::function<void(const std::string&)>& notice,
                                  std::chrono::milliseconds max_wait) {
  auto since = global_pause_since(runtime_dir);
  if (!since) return ok();
  UniqueFd in(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (in)
    ::inotify_add_watch(in.get(), runtime_dir.c_str(), IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE);
  if (notice)
    notice("all runs are paused (parallex pause --all, since " + *since +
           "); this run starts after `parallex resume --all`");
  const auto deadline = std::chrono::steady_clock::now() + max_wait;
  while (global_pause_since(runtime_dir)) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
            .count();
    if (left <= 0)
      return Error::conflict("all runs are still paused (since " + *since +
                             "); run `parallex resume --all` and start the run again.");
    pollfd p{in ? in.get() : -1, POLLIN, 0};
    // The 1 s cap also covers a runtime dir where inotify is unavailable.
    if (::poll(&p, 1, static_cast<int>(std::min<long>(left, 1000))) > 0) {
      char buf[4096];
      while (::read(in.get(), buf, sizeof buf) > 0) {
      }
    }
  }
  return ok();
}

}  // namespace px::supervisor
