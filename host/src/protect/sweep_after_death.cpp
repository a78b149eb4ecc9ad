#include "protect/sweep_after_death.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <vector>

#include "common/redact.hpp"
#include "common/unique_fd.hpp"
#include "protect/quarantine.hpp"
#include "protect/unswept.hpp"
#include "run/private_dir.hpp"
#include "run/record.hpp"

namespace px::protect {

namespace {

bool g_available = false;

bool is_dir_fd(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
}

int sweep_after_death(int state_fd, int run_dir_fd, int private_dirs_fd) {
  // The private dirs first: they need nothing but the folder, and a failing
  // quarantine sweep below must not leave them.
  if (is_dir_fd(private_dirs_fd)) {
    run::sweep_private_dirs(private_dirs_fd);
    ::close(private_dirs_fd);
  }
  struct stat st {};
  if (::fstat(state_fd, &st) != 0 && !is_dir_fd(run_dir_fd)) return 0;  // handed the private dirs only
  UniqueFd state(state_fd);
  UniqueFd dir(run_dir_fd);
  if (!state || !dir || !is_dir_fd(dir.get())) {
    std::fprintf(stderr,
                 "parallex: %s is for the run's watchdog (fd 3: the state, fd 4: the run folder, fd 5: the "
                 "runs-private folder)\n",
                 kSweepArgument);
    return 2;
  }
  const auto bytes = read_sweep_state(state.get());
  if (!bytes) return 1;
  auto quarantine = Quarantine::restore(*bytes, std::move(dir));
  if (!quarantine) {
    std::fprintf(stderr, "parallex: %s\n", quarantine.error().message.c_str());
    return 1;
  }
  Quarantine& q = *quarantine.value();
  const auto moved = q.sweep("after its supervisor died", /*git=*/true, /*may_copy=*/true);
  // Under the record folder's lock: `parallex runs` may be closing it as lost.
  const auto written = run::update_record(q.record_dir(), [&](run::RunRecord& r) {
    for (const auto& m : moved)
      r.notices.push_back({run::NoticeKind::alert, redact(describe(m, q.run_folder()))});
    r.quarantined = q.moved();
    return true;
  });
  forget_unswept(q.record_dir());  // nothing is left for a later parallex to sweep
  return written && written.value() ? 0 : 1;
}

}  // namespace

constexpr std::size_t kMaxState = 64 * 1024 * 1024;

std::optional<std::vector<std::uint8_t>> read_sweep_state(int fd) {
  std::vector<std::uint8_t> out;
  std::uint8_t buf[65536];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return out;
    out.insert(out.end(), buf, buf + n);
    at += n;
    if (out.size() > kMaxState) return std::nullopt;
  }
}

std::optional<int> sweep_entry(int argc, char** argv) {
  g_available = true;
  if (argc != 2 || std::string_view(argv[1]) != kSweepArgument) return std::nullopt;
  return sweep_after_death(3, 4, 5);
}

bool sweep_available() {
  return g_available;
}

}  // namespace px::protect
