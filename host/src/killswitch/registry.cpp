#include "killswitch/registry.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <sstream>

#include "common/clock.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "common/read_file.hpp"
#include "common/replace_file.hpp"
#include "common/unique_fd.hpp"
#include "killswitch/control_socket.hpp"
#include "killswitch/proc.hpp"

namespace px::killswitch {

nlohmann::json to_json(const RunEntry& e) {
  return {{"v", 1},
          {"id", e.id},
          {"agent", e.agent},
          {"command", e.command},
          {"pid", e.pid},
          {"pid_start", e.pid_start},
          {"child_pid", e.child_pid},
          {"child_start", e.child_start},
          {"watchdog_pid", e.watchdog_pid},
          {"cgroup", e.cgroup.string()},
          {"since", e.since},
          {"state", e.state},
          {"mechanism", e.mechanism},
          {"socket", e.socket.string()},
          {"folder", e.folder.string()}};
}

RunEntry run_entry_from_json(const nlohmann::json& j) {
  RunEntry e;
  e.id = j.value("id", "");
  e.agent = j.value("agent", "");
  if (j.contains("command") && j["command"].is_array())
    for (const auto& c : j["command"])
      if (c.is_string()) e.command.push_back(c.get<std::string>());
  e.pid = j.value("pid", 0);
  e.pid_start = j.value("pid_start", std::uint64_t{0});
  e.child_pid = j.value("child_pid", 0);
  e.child_start = j.value("child_start", std::uint64_t{0});
  e.watchdog_pid = j.value("watchdog_pid", 0);
  e.cgroup = j.value("cgroup", "");
  e.since = j.value("since", "");
  e.state = j.value("state", "");
  e.mechanism = j.value("mechanism", "");
  e.socket = j.value("socket", "");
  e.folder = j.value("folder", "");
  return e;
}

Status ensure_private_dir(const fs::path& dir) {
  std::error_code ec;
  if (dir.has_parent_path() && !fs::exists(dir.parent_path(), ec))
    fs::create_directories(dir.parent_path(), ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return Error::io("create " + dir.string(), errno);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return Error::io("stat " + dir.string(), errno);
  if (!S_ISDIR(st.st_mode))
    return Error::conflict(dir.string() +
                           " is not a directory; remove it so parallex can keep its runtime files there.");
  if (st.st_uid != ::geteuid())
    return Error::conflict(dir.string() +
                           " belongs to another user; parallex will not use it for its control sockets.");
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0)
    return Error::io("chmod 0700 " + dir.string(), errno);
  return ok();
}

Result<fs::path> runs_dir(const fs::path& runtime_dir) {
  PX_TRY(ensure_private_dir(runtime_dir));
  const fs::path runs = runtime_dir / "runs";
  PX_TRY(ensure_private_dir(runs));
  return runs;
}

Status write_entry(const fs::path& runs, const RunEntry& e) {
  return replace_file(runs / (e.id + ".json"), to_json_text(to_json(e)) + "\n");
}

void remove_entry(const fs::path& runs, const std::string& id) {
  ::unlink((runs / (id + ".json")).c_str());
  ::unlink((runs / (id + ".sock")).c_str());
  ::unlink((runs / (id + ".direct")).c_str());  // killswitch/direct_control.hpp
}

std::string utc_now_iso() {
  return iso_utc_seconds(std::time(nullptr));
}

bool process_alive(pid_t pid, std::uint64_t start_time) {
  if (pid <= 0) return false;
  const auto st = read_proc_stat(pid);
  if (!st || st->state == 'Z' || st->state == 'X') return false;
  return start_time == 0 || st->start_time == start_time;
}

bool agent_has_live_run(const fs::path& runtime_dir, const std::string& agent) {
  for (const auto& r : list_runs(runtime_dir).live)
    if (r.agent == agent) return true;
  return false;
}

std::optional<std::string> live_run_in(const fs::path& runtime_dir, const fs::path& folder) {
  const fs::path inside = normal_absolute(folder);
  for (const auto& r : list_runs(runtime_dir).live)
    if (!r.folder.empty() && is_within(normal_absolute(r.folder), inside)) return r.id;
  return std::nullopt;
}

ListedRuns list_runs(const fs::path& runtime_dir) {
  ListedRuns out;
  const fs::path runs = runtime_dir / "runs";
  std::error_code ec;
  for (fs::directory_iterator it(runs, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path();
    if (p.extension() != ".json" || p.filename().string()[0] == '.') continue;
    // Through the one reader of small files: a FIFO or a folder named like an
    // entry is skipped, never waited on.
    const auto text = read_regular_file(p, {.max_bytes = 256 * 1024, .follow_links = false});
    if (!text) continue;
    const auto j = parse_json_input(text.value());
    if (j.is_discarded() || !j.is_object()) continue;  // half-written by another process; not ours to judge
    RunEntry e;
    try {
      e = run_entry_from_json(j);
    } catch (const nlohmann::json::exception&) {
      continue;  // a member of another type: not an entry this parallex wrote
    }
    if (e.id.empty() || e.id + ".json" != p.filename().string()) continue;
    bool stale = !process_alive(e.pid, e.pid_start);
    if (!stale) {
      // A live pid whose socket refuses is a supervisor that lost its socket
      // (or a recycled pid); it cannot be reached, so it cannot block anything.
      const int probe = probe_socket(e.socket);
      stale = probe == ECONNREFUSED || probe == ENOENT;
    }
    if (stale) {
      remove_entry(runs, e.id);
      out.cleaned.push_back(e.id);
      continue;
    }
    out.live.push_back(std::move(e));
  }
  std::sort(out.live.begin(), out.live.end(),
            [](const RunEntry& a, const RunEntry& b) { return a.id < b.id; });
  return out;
}

}  // namespace px::killswitch
