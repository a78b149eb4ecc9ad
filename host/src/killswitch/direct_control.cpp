#include "killswitch/direct_control.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "common/read_file.hpp"
#include "common/replace_file.hpp"
#include "killswitch/cgroup.hpp"
#include "killswitch/control_socket.hpp"
#include "killswitch/proc.hpp"
#include "killswitch/process_tracker.hpp"

namespace px::killswitch {
namespace {

// Bounded, so that the whole command stays within two seconds with one
// supervisor stopped: a second to notice, this to act.
constexpr std::chrono::milliseconds kActWithin{800};

// The cgroup the entry names, when it is one of this run's: under the
// cgroup2 mount, named after the run (".../parallex/<id>" as root,
// ".../parallex-<id>" in a delegated cgroup). Anything else is not acted on.
std::optional<fs::path> run_cgroup_of(const RunEntry& entry) {
  if (entry.cgroup.empty()) return std::nullopt;
  const auto mount = find_cgroup2_mount();
  if (!mount) return std::nullopt;
  const fs::path path = normal_absolute(entry.cgroup);
  if (path != entry.cgroup || !is_within(path, *mount) || path == *mount) return std::nullopt;
  const std::string leaf = path.filename().string();
  if (leaf != entry.id && leaf != "parallex-" + entry.id) return std::nullopt;
  if (!is_run_cgroup_path(path.lexically_relative(*mount).string())) return std::nullopt;
  return path;
}

const char* resulting_state(const std::string& op) {
  if (op == "pause") return "paused";
  if (op == "kill") return "killed";
  return "running";
}

}  // namespace

fs::path direct_op_file(const fs::path& runs_dir, const std::string& run_id) {
  return runs_dir / (run_id + ".direct");
}

std::optional<std::string> supervisor_cannot_answer(const RunEntry& entry) {
  const auto st = read_proc_stat(entry.pid);
  if (!st || (entry.pid_start && st->start_time != entry.pid_start)) return std::nullopt;  // gone: stale
  if (st->state == 'T') return std::string("is stopped (SIGSTOP)");
  if (st->state == 't') return std::string("is stopped by a debugger");
  return std::nullopt;
}

Result<std::string> act_directly(const fs::path& runs_dir, const RunEntry& entry, const std::string& op,
                                 const std::string& by, const std::string& why) {
  if (op != "pause" && op != "resume" && op != "kill")
    return Error::internal("no direct action for '" + op + "'");
  // First the note for the supervisor: were it to go on in the middle of
  // what follows, it still learns what was done.
  const nlohmann::json note{{"op", op}, {"by", by}, {"why", why}, {"at", utc_now_iso()}};
  PX_TRY(replace_file(direct_op_file(runs_dir, entry.id), to_json_text(note) + "\n"));
  const std::string head = "its supervisor (pid " + std::to_string(entry.pid) + ") " + why + "; ";
  if (const auto path = run_cgroup_of(entry)) {
    PX_TRY_ASSIGN(auto cgroup, RunCgroup::existing(*path));
    if (op == "pause") {
      PX_TRY(cgroup.freeze(kActWithin));
      return head + "froze its cgroup " + path->string() + " directly (cgroup.freeze)";
    }
    if (op == "resume") {
      PX_TRY(cgroup.thaw(kActWithin));
      return head + "thawed its cgroup " + path->string() + " directly";
    }
    PX_TRY(cgroup.kill(kActWithin));
    return head + "killed every process in its cgroup " + path->string() + " directly (cgroup.kill)";
  }
  if (!entry.cgroup.empty())
    return Error::conflict(head + "its registry entry names " + entry.cgroup.string() +
                           ", which is not this run's cgroup, so nothing was done; `kill -9 " +
                           std::to_string(entry.pid) + "` ends the run through its watchdog");
  // An entry written by an older Parallex names neither: nothing to act on
  // that is surely the run's.
  if (entry.mechanism == "cgroup" || (entry.child_pid > 0 && entry.child_start == 0))
    return Error::conflict(head +
                           "its registry entry does not say which cgroup or processes are the run's, so "
                           "nothing was done; `kill -9 " +
                           std::to_string(entry.pid) + "` ends the run through its watchdog");
  // The process-tree fallback: the tree from the run's first process, by pid
  // and start time, and the orphans that came back to the supervisor.
  if (entry.child_pid <= 0)
    return head + "no process of the run had started yet, so there was nothing to " + op +
           "; its supervisor does it when it goes on";
  auto tracker = ProcessTracker::observe(entry.pid, entry.child_pid, entry.child_start, entry.watchdog_pid);
  const std::size_t count = tracker->scan().size();
  const std::string n = std::to_string(count) + " process" + (count == 1 ? "" : "es");
  if (op == "pause") {
    PX_TRY(tracker->stop_all(kActWithin));
    return head + "stopped its " + n + " directly (SIGSTOP)";
  }
  if (op == "resume") {
    PX_TRY(tracker->continue_all());
    return head + "continued its " + n + " directly (SIGCONT)";
  }
  // Done once every process is dying: nothing here waits for them to be
  // gone (the supervisor reaps and records them when it goes on).
  PX_TRY(tracker->kill_all(kActWithin, /*until_gone=*/false));
  return head + "killed its " + n + " directly (SIGKILL)";
}

std::optional<DirectOp> take_direct_op(const fs::path& runs_dir, const std::string& run_id) {
  // Renamed away first: a client's newer note written meanwhile is the
  // next one taken, never lost between the read and the removal.
  const fs::path file = direct_op_file(runs_dir, run_id);
  const fs::path taken = runs_dir / ("." + run_id + ".direct-taken");
  if (::rename(file.c_str(), taken.c_str()) != 0) return std::nullopt;
  auto text = read_regular_file(taken, {.max_bytes = 64 * 1024, .follow_links = false});
  ::unlink(taken.c_str());
  const auto j = text ? parse_json_input(text.value()) : nlohmann::json(nlohmann::json::value_t::discarded);
  if (!j.is_object()) return std::nullopt;
  const auto get = [&](const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  DirectOp op{get("op"), get("by"), get("why"), get("at")};
  if (op.op != "pause" && op.op != "resume" && op.op != "kill") return std::nullopt;
  return op;
}

std::optional<std::string> pending_direct_state(const fs::path& runs_dir, const std::string& run_id) {
  const auto text =
      read_regular_file(direct_op_file(runs_dir, run_id), {.max_bytes = 64 * 1024, .follow_links = false});
  if (!text) return std::nullopt;
  const auto j = parse_json_input(text.value());
  if (!j.is_object() || !j.contains("op") || !j["op"].is_string()) return std::nullopt;
  return std::string(resulting_state(j["op"].get<std::string>()));
}

}  // namespace px::killswitch
