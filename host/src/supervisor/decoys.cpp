#include "supervisor/decoys.hpp"

#include <fcntl.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include "common/redact.hpp"
#include "killswitch/proc.hpp"
#include "killswitch/registry.hpp"
#include "killswitch/run_control.hpp"

namespace px::supervisor {
namespace {

std::string random_chars(std::size_t n, const std::string& alphabet) {
  std::random_device rd;
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += alphabet[pick(rd)];
  return s;
}

const std::string kUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const std::string kAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const std::string kB64 = kAlnum + "+/";

std::string decoy_content(const std::string& name) {
  if (name == "credentials")
    return "[default]\naws_access_key_id = AKIA" + random_chars(16, kUpper) +
           "\naws_secret_access_key = " + random_chars(40, kB64) + "\nregion = us-east-1\n";
  if (name == "id_rsa") {
    std::string body;
    for (int i = 0; i < 25; ++i) body += random_chars(70, kB64) + "\n";
    return "-----BEGIN OPENSSH PRIVATE "
           "KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn\n" +
           body + "-----END OPENSSH PRIVATE KEY-----\n";
  }
  if (name == "hosts.yml.bak")
    return "github.com:\n    user: deploy-bot\n    oauth_token: gho_" + random_chars(36, kAlnum) +
           "\n    git_protocol: https\n";
  return "https://deploy-bot:ghp_" + random_chars(36, kAlnum) + "@github.com\n";
}

// Running, not a zombie: an exited process has already left its cgroup, so
// asking which run it belongs to would wrongly say "none".
bool process_running(pid_t pid) {
  const auto st = killswitch::read_proc_stat(pid);
  return st && st->state != 'Z' && st->state != 'X' && st->state != 'x';
}

}  // namespace

std::vector<fs::path> decoy_paths(const fs::path& home) {
  return {home / ".config/aws/credentials", home / ".ssh-backup/id_rsa", home / ".config/gh/hosts.yml.bak",
          home / ".git-credentials.old"};
}

Result<std::vector<fs::path>> plant_decoys(const fs::path& home) {
  std::vector<fs::path> planted;
  for (const auto& path : decoy_paths(home)) {
    std::error_code ec;
    if (fs::exists(path, ec) || fs::is_symlink(path, ec)) continue;
    // Parents: created 0700, one level at a time, never through a symlink.
    fs::path dir = home;
    for (const auto& part : path.parent_path().lexically_relative(home)) {
      dir /= part;
      if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return Error::io("create " + dir.string(), errno);
      if (fs::is_symlink(dir, ec))
        return Error::conflict(dir.string() +
                               " is a symbolic link; parallex plants decoys only in real folders.");
    }
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd) return Error::io("create the decoy " + path.string(), errno);
    const std::string text = decoy_content(path.filename().string());
    if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      return Error::io("write the decoy " + path.string(), errno);
    planted.push_back(path);
  }
  return planted;
}

Result<std::unique_ptr<DecoyWatch>> DecoyWatch::start(const fs::path& home,
                                                      std::function<bool(pid_t)> belongs_to_run,
                                                      bool allow_fanotify,
                                                      std::function<void(const DecoyHit&)> on_hit) {
  std::unique_ptr<DecoyWatch> w(new DecoyWatch());
  w->belongs_to_run_ = std::move(belongs_to_run);
  w->on_hit_ = std::move(on_hit);
  for (const auto& p : decoy_paths(home)) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec) && !fs::is_symlink(p, ec)) w->paths_.push_back(p);
  }
  // fanotify first: it names the process. Per-inode marks, so any path to the
  // file (a hard link, a bind mount) is seen.
  if (allow_fanotify)
    w->fd_ = UniqueFd(
        ::fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_CLOEXEC | O_LARGEFILE));
  if (w->fd_) {
    w->method_ = "fanotify";
    for (const auto& p : w->paths_)
      if (::fanotify_mark(w->fd_.get(), FAN_MARK_ADD, FAN_OPEN | FAN_ACCESS, AT_FDCWD, p.c_str()) != 0) {
        w->fd_.reset();
        break;
      }
  }
  if (!w->fd_) {
    w->method_ = "inotify";
    w->fd_ = UniqueFd(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
    if (!w->fd_) return Error::io("inotify_init1 for the decoy watch", errno);
    for (const auto& p : w->paths_) {
      const int wd =
          ::inotify_add_watch(w->fd_.get(), p.c_str(), IN_OPEN | IN_ACCESS | IN_MOVE_SELF | IN_DELETE_SELF);
      if (wd < 0) return Error::io("watch the decoy " + p.string(), errno);
      w->wds_.push_back(wd);
    }
  }
  // The last drain: an open just before the run ended still counts.
  WatchThread::Options options;
  options.last_drain = true;
  PX_TRY(w->watch_.start(
      w->fd_.get(),
      [raw = w.get()] {
        if (raw->method_ == "fanotify")
          raw->drain_fanotify();
        else
          raw->drain_inotify();
      },
      std::move(options)));
  return w;
}

DecoyWatch::~DecoyWatch() {
  (void)stop();
}

std::vector<DecoyHit> DecoyWatch::stop() {
  watch_.stop();
  std::lock_guard lock(mu_);
  return hits_;
}

void DecoyWatch::add_hit(DecoyHit hit) {
  std::lock_guard lock(mu_);
  for (const auto& h : hits_)
    if (h.path == hit.path && h.event == hit.event && h.pid == hit.pid) return;
  hit.at = killswitch::utc_now_iso();
  if (on_hit_) on_hit_(hit);
  hits_.push_back(std::move(hit));
}

void DecoyWatch::drain_fanotify() {
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n <= 0) return;
    const auto got = static_cast<std::size_t>(n);
    // Whole records, each event_len long, one after the other; each header
    // is copied out (the kernel promises no alignment to a char buffer).
    fanotify_event_metadata m{};
    for (std::size_t off = 0; off + sizeof m <= got; off += m.event_len) {
      std::memcpy(&m, buf + off, sizeof m);
      if (m.event_len < sizeof m || m.event_len > got - off) return;
      if (m.vers != FANOTIFY_METADATA_VERSION) return;
      fs::path path;
      if (m.fd >= 0) {
        char target[4096];
        const std::string link = "/proc/self/fd/" + std::to_string(m.fd);
        const ssize_t l = ::readlink(link.c_str(), target, sizeof target - 1);
        if (l > 0) path = std::string(target, static_cast<std::size_t>(l));
        ::close(m.fd);
      }
      const pid_t pid = m.pid;
      if (pid == ::getpid()) continue;
      DecoyHit hit;
      hit.path = path;
      hit.event = (m.mask & FAN_OPEN) ? "open" : "read";
      hit.pid = pid;
      hit.process = killswitch::describe_process(pid);
      // A process that is gone cannot be checked: kept, to be safe. It is
      // asked again after the check, since it may have exited in between.
      if (belongs_to_run_ && process_running(pid) && !belongs_to_run_(pid) && process_running(pid)) continue;
      add_hit(std::move(hit));
    }
  }
}

void DecoyWatch::drain_inotify() {
  alignas(inotify_event) char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n <= 0) return;
    for (ssize_t off = 0; off < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buf + off);
      off += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      std::size_t i = 0;
      while (i < wds_.size() && wds_[i] != e->wd) ++i;
      if (i == wds_.size()) continue;
      DecoyHit hit;
      hit.path = paths_[i];
      if (e->mask & IN_OPEN)
        hit.event = "open";
      else if (e->mask & IN_ACCESS)
        hit.event = "read";
      else if (e->mask & IN_MOVE_SELF)
        hit.event = "moved";
      else if (e->mask & IN_DELETE_SELF)
        hit.event = "deleted";
      else
        continue;
      add_hit(std::move(hit));
    }
  }
}

void RunDecoys::on_started(killswitch::RunControl& control, run::RunRecord& record) {
  if (home_.empty()) return;
  auto watch = DecoyWatch::start(
      home_, [&control](pid_t pid) { return control.owns_process(pid); }, true,
      [this](const DecoyHit& hit) {
        if (on_hit_) on_hit_(hit);
      });
  if (!watch) {
    say_({run::NoticeKind::alert,
          "the decoy credentials are not watched in this run: " + watch.error().message});
    record.decoys = run::DecoyWatchState{{}, 0, redact(watch.error().message)};
    return;
  }
  watch_ = std::move(watch).value();
  (void)control.hold_until_exit(watch_->descriptor());
  record.decoys = run::DecoyWatchState{watch_->method(), watch_->watched(), {}};
}

void RunDecoys::stop(run::RunRecord& record) {
  if (!watch_) return;
  for (auto hit : watch_->stop()) {
    // A process's command line may carry a secret: redacted here as in the notice.
    hit.process = redact(hit.process);
    record.notices.push_back({run::NoticeKind::alert,
                              redact("DECOY " + hit.event + ": " + hit.path.string() +
                                     (hit.process.empty() ? " (process unknown)" : " by " + hit.process))});
    record.decoy_hits.push_back(std::move(hit));
  }
  watch_.reset();
}

}  // namespace px::supervisor
