#include "common/ui_ports.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <string>
#include <system_error>

namespace px {

namespace fs = std::filesystem;

namespace {

fs::path ui_ports_dir(const fs::path& runtime_dir) {
  return runtime_dir / "ui";
}

}  // namespace

UiPortFile::~UiPortFile() {
  if (!fd_) return;
  std::error_code ec;
  fs::remove(path_, ec);
}

Result<UiPortFile> UiPortFile::publish(const fs::path& runtime_dir, std::uint16_t port) {
  const fs::path dir = ui_ports_dir(runtime_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  ::chmod(runtime_dir.c_str(), 0700);
  ::chmod(dir.c_str(), 0700);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    return Error::invalid(dir.string() +
                          " is not a folder of yours: remove it, or set XDG_RUNTIME_DIR to a folder "
                          "only you can write, and start `parallex ui` again.");
  UiPortFile f;
  f.path_ = dir / (std::to_string(::getpid()) + ".port");
  const fs::path temp = dir / ("." + std::to_string(::getpid()) + ".port.tmp");
  ::unlink(temp.c_str());
  // Locked before it has its name, so no reader ever sees it unlocked while we live.
  f.fd_ = UniqueFd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!f.fd_ || ::flock(f.fd_.get(), LOCK_SH) != 0) return Error::io("write " + temp.string(), errno);
  const std::string text = std::to_string(port) + "\n";
  if (::write(f.fd_.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      ::rename(temp.c_str(), f.path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return Error::io("write " + f.path_.string(), err);
  }
  return f;
}

std::vector<std::uint16_t> live_ui_ports(const fs::path& runtime_dir) {
  std::vector<std::uint16_t> ports;
  std::error_code ec;
  for (fs::directory_iterator it(ui_ports_dir(runtime_dir), ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path();
    if (p.extension() != ".port" || p.filename().string().front() == '.') continue;
    UniqueFd fd(::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) continue;
    // A lock we can take is held by nobody: its server is gone (the file is
    // left: a reader removing it could race a new server of the same pid).
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) continue;
    char buf[16] = {};
    const ssize_t n = ::pread(fd.get(), buf, sizeof buf - 1, 0);
    unsigned value = 0;
    if (n <= 0 || std::from_chars(buf, buf + n, value).ec != std::errc() || value == 0 || value > 65535)
      continue;
    ports.push_back(static_cast<std::uint16_t>(value));
  }
  return ports;
}

}  // namespace px
