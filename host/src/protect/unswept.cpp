#include "protect/unswept.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/paths.hpp"
#include "common/redact.hpp"
#include "common/replace_file.hpp"
#include "common/unique_fd.hpp"
#include "protect/quarantine.hpp"
#include "protect/sweep_after_death.hpp"
#include "run/record.hpp"

namespace px::protect {

namespace {

using nlohmann::json;

constexpr const char* kStateFile = "sweep-state";

std::string first_line(const char* file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string boot_id() {
  return first_line("/proc/sys/kernel/random/boot_id");
}

// This machine: a state folder shared by several (a home on NFS) holds runs
// of the others, which are theirs to sweep, live or not.
std::string machine_id() {
  std::string id = first_line("/etc/machine-id");
  if (id.empty()) id = first_line("/proc/sys/kernel/hostname");
  return id;
}

// The run's cgroup, once what is left in it is killed: whether it is empty
// (then removed) or gone.
bool cgroup_emptied(const fs::path& cgroup) {
  UniqueFd dir(::open(cgroup.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return errno == ENOENT;
  auto populated = [&dir] {
    UniqueFd events(::openat(dir.get(), "cgroup.events", O_RDONLY | O_CLOEXEC));
    char buf[256] = {};
    return !events || ::read(events.get(), buf, sizeof buf - 1) <= 0 ||
           std::string_view(buf).find("populated 0") == std::string_view::npos;
  };
  if (populated()) {
    if (UniqueFd kill{::openat(dir.get(), "cgroup.kill", O_WRONLY | O_CLOEXEC)})
      (void)!::write(kill.get(), "1", 1);
    for (int i = 0; i < 100 && populated(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (populated()) return false;
  }
  dir.reset();
  ::rmdir(cgroup.c_str());
  return true;
}

// Whether nothing of the run can be running (unswept.hpp says why each test suffices).
bool run_is_over(const json& j) {
  if (j.value("boot", "") != boot_id()) return true;
  auto pid_of = [&j](const char* key) { return j.contains(key) ? j[key].at(0).get<pid_t>() : 0; };
  auto start_of = [&j](const char* key) { return j.contains(key) ? j[key].at(1).get<std::uint64_t>() : 0; };
  if (run::process_running(pid_of("supervisor"), start_of("supervisor"))) return false;
  if (run::process_running(pid_of("watchdog"), start_of("watchdog"))) return false;
  const std::string cgroup = j.value("cgroup", "");
  if (!cgroup.empty()) return cgroup_emptied(cgroup);
  return !run::process_running(pid_of("first"), start_of("first"));
}

// Sweeps the run whose record folder is `record_dir` if nothing of it runs;
// what it says, one line per file moved or per problem.
std::vector<std::string> sweep_one(const fs::path& record_dir) {
  const std::string id = record_dir.filename().string();
  UniqueFd state(::open((record_dir / kStateFile).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!state) {
    if (errno == ENOENT) ::unlink((unswept_dir() / id).c_str());
    return {};
  }
  // One sweeper at a time: another parallex (or the run's watchdog, which
  // keeps its pid while it sweeps) may be at it.
  struct stat st {};
  if (::flock(state.get(), LOCK_EX | LOCK_NB) != 0 || ::fstat(state.get(), &st) != 0 || st.st_nlink == 0)
    return {};
  const auto bytes = read_sweep_state(state.get());
  const json j = bytes ? json::from_cbor(*bytes, true, false) : json(json::value_t::discarded);
  if (j.is_object() && j.value("machine", "") != machine_id()) return {};
  if (j.is_discarded() || !j.is_object() || !j.contains("quarantine") || !j["quarantine"].is_binary()) {
    forget_unswept(record_dir);
    return {"run " + id + ": what its sweep needed is unreadable (" + (record_dir / kStateFile).string() +
            "): the files other programs run later in its folder were not checked after it"};
  }
  try {
    if (!run_is_over(j)) return {};
  } catch (const json::exception&) {
    return {};
  }
  const fs::path folder = j.value("folder", "");
  UniqueFd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  struct stat fst {};
  const bool same = dir && ::fstat(dir.get(), &fst) == 0 && fst.st_dev == j.value("folder_dev", dev_t{0}) &&
                    fst.st_ino == j.value("folder_ino", ino_t{0});
  if (!same) {
    forget_unswept(record_dir);
    return {"run " + id + ": its folder " + folder.string() +
            " is gone or is another folder now: what the run made there was not checked"};
  }
  const auto& bin = j["quarantine"].get_binary();
  auto restored = Quarantine::restore(std::vector<std::uint8_t>(bin.begin(), bin.end()), std::move(dir));
  if (!restored) {
    forget_unswept(record_dir);
    return {"run " + id + ": " + restored.error().message};
  }
  Quarantine& q = *restored.value();
  const auto moved = q.sweep("after its supervisor and its watchdog died", /*git=*/true, /*may_copy=*/true);
  std::vector<std::string> said;
  for (const auto& m : moved) said.push_back("run " + id + ": " + redact(describe(m, q.run_folder())));
  (void)run::update_record(record_dir, [&](run::RunRecord& r) {
    for (const auto& m : moved)
      r.notices.push_back({run::NoticeKind::alert, redact(describe(m, q.run_folder()))});
    r.quarantined = q.moved();
    return true;
  });
  forget_unswept(record_dir);
  return said;
}

}  // namespace

fs::path unswept_dir() {
  return parallex_state_dir() / "unswept";
}

Status remember_unswept(const UnsweptRun& run) {
  json j{{"machine", machine_id()},
         {"boot", boot_id()},
         {"quarantine", json::binary(run.quarantine)},
         {"folder", run.folder.string()},
         {"folder_dev", run.folder_dev},
         {"folder_ino", run.folder_ino},
         {"supervisor", {run.supervisor_pid, run.supervisor_start}},
         {"watchdog", {run.watchdog_pid, run.watchdog_start}},
         {"first", {run.first_pid, run.first_start}},
         {"cgroup", run.cgroup.string()}};
  const std::vector<std::uint8_t> bytes = json::to_cbor(j);
  PX_TRY(replace_file(run.record_dir / kStateFile,
                      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
  const fs::path marker = unswept_dir() / run.record_dir.filename();
  struct stat st {};
  if (::lstat(marker.c_str(), &st) == 0) return ok();
  std::error_code ec;
  fs::create_directories(marker.parent_path(), ec);
  ::chmod(marker.parent_path().c_str(), 0700);
  return replace_file(marker, run.record_dir.string());
}

void forget_unswept(const fs::path& record_dir) {
  ::unlink((record_dir / kStateFile).c_str());
  ::unlink((unswept_dir() / record_dir.filename()).c_str());
}

std::vector<std::string> sweep_unswept_runs() {
  std::vector<std::string> said;
  const fs::path dir = unswept_dir();
  DIR* d = ::opendir(dir.c_str());
  if (!d) return said;
  std::vector<std::string> ids;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ids.emplace_back(e->d_name);
  ::closedir(d);
  for (const auto& id : ids) {
    std::ifstream in(dir / id);
    std::string record_dir;
    std::getline(in, record_dir);
    if (record_dir.empty() || fs::path(record_dir).filename() != id) {
      ::unlink((dir / id).c_str());
      continue;
    }
    for (auto& line : sweep_one(record_dir)) said.push_back(std::move(line));
  }
  return said;
}

}  // namespace px::protect
