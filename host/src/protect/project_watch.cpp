#include "protect/project_watch.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string_view>
#include <thread>

namespace px::protect {

namespace {

// Events that can make a name appear in a watched folder. IN_ONLYDIR and
// IN_DONT_FOLLOW: a watched path that became a link is not followed.
constexpr std::uint32_t kEvents = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK;
// A file is usually written right after it is made: a short pause lets the
// first write land in the file before it is moved (the writer's descriptor
// follows it into the record folder either way).
constexpr auto kSettle = std::chrono::milliseconds(20);

}  // namespace

Result<std::unique_ptr<ProjectWatch>> ProjectWatch::start(
    Quarantine& quarantine, std::function<void(const std::vector<Quarantined>&)> moved) {
  std::unique_ptr<ProjectWatch> w(new ProjectWatch(quarantine, std::move(moved)));
  w->inotify_ = UniqueFd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!w->inotify_) return Error::io("inotify_init1 for the run folder's protected files", errno);
  w->arm();
  // No last drain: the end of the run sweeps again, whatever the watch saw.
  PX_TRY(w->watch_.start(w->inotify_.get(), [raw = w.get()] { raw->on_events(); }));
  return w;
}

ProjectWatch::~ProjectWatch() {
  stop();
}

void ProjectWatch::stop() {
  watch_.stop();
}

void ProjectWatch::arm() {
  // Adding a watch twice is harmless (inotify returns the same descriptor).
  for (const auto& dir : quarantine_.watch_dirs()) {
    const int wd = ::inotify_add_watch(inotify_.get(), dir.c_str(), kEvents);
    if ((dir / "").lexically_normal() == (quarantine_.run_folder() / "").lexically_normal())
      run_folder_wd_ = wd;
  }
}

bool ProjectWatch::read_events() {
  bool git = false;
  alignas(inotify_event) char buf[8192];
  for (ssize_t n; (n = ::read(inotify_.get(), buf, sizeof buf)) > 0;) {
    for (ssize_t at = 0; at < n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf + at);
      // A .git made or moved into the run folder, or events lost: the
      // quarantine looks at once (Quarantine::git_event).
      if ((ev->mask & IN_Q_OVERFLOW) ||
          (ev->wd == run_folder_wd_ && ev->len > 0 && std::string_view(ev->name) == ".git"))
        git = true;
      at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
    }
  }
  return git;
}

void ProjectWatch::on_events() {
  if (read_events()) quarantine_.git_event();
  std::this_thread::sleep_for(kSettle);
  if (read_events()) quarantine_.git_event();
  // A folder that appeared is watched from now on; sweeping after arming
  // catches what was made in it before its watch existed.
  for (int round = 0; round < 8; ++round) {
    arm();
    const auto moved = quarantine_.sweep("during the run", /*git=*/false, /*may_copy=*/false);
    if (moved.empty()) break;
    if (moved_) moved_(moved);
  }
}

}  // namespace px::protect
