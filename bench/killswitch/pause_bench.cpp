// Kill-switch latency: from the start of a pause-all (the code path of
// `parallex pause --all`: pause file, registry, one request per supervisor in
// parallel) to every process of every run frozen, as confirmed by each
// supervisor (cgroup.events "frozen 1", or every tracked process in state T)
// and checked again here from /proc afterwards.
//
//   pause_bench [--sizes 1,10,200] [--runs 5] [--reps 20] [--mechanism both|cgroup|fallback]
//
// Each run is a real supervisor process (forked) with its own RunControl,
// control socket and tree of sleeping processes.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "killswitch/cgroup.hpp"
#include "killswitch/control_socket.hpp"
#include "killswitch/global_pause.hpp"
#include "killswitch/kill_switch_client.hpp"
#include "killswitch/proc.hpp"
#include "killswitch/run_control.hpp"

using namespace px::killswitch;
namespace fs = std::filesystem;

namespace {

// Write ends of the release pipes of the supervisors forked so far: each new
// supervisor closes them, so that only the bench holds them.
std::vector<int> g_release_fds;

struct Supervisor {
  pid_t pid = 0;
  int release_fd = -1;  // closing it ends the run
};

// The supervisor of one run with `k` processes (a shell that starts k-1
// sleepers and then becomes the k-th).
Supervisor fork_supervisor(const fs::path& runtime, const std::string& id, int k, bool cgroup) {
  int ready[2], release[2];
  if (::pipe2(ready, O_CLOEXEC) != 0 || ::pipe2(release, O_CLOEXEC) != 0) std::exit(1);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(ready[0]);
    ::close(release[1]);
    for (const int fd : g_release_fds) ::close(fd);
    RunControlOptions o;
    o.run_id = id;
    o.runtime_dir = runtime;
    o.use_cgroup = cgroup;
    auto rc = RunControl::start(o);
    if (!rc) {
      std::fprintf(stderr, "pause_bench: %s\n", rc.error().message.c_str());
      ::_exit(2);
    }
    const std::string script =
        "i=1; while [ $i -lt " + std::to_string(k) + " ]; do sleep 1000 & i=$((i+1)); done; exec sleep 1000";
    const int cg = rc.value()->cgroup_fd();
    const pid_t child = ::fork();
    if (child == 0) {
      if (cg >= 0 && enter_cgroup(cg) != 0) ::_exit(3);
      ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    if (!rc.value()->attach(child)) ::_exit(4);
    for (int i = 0; i < 5000 && static_cast<int>(rc.value()->processes().size()) < k; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    (void)!::write(ready[1], "r", 1);
    char c;
    while (::read(release[0], &c, 1) < 0 && errno == EINTR) {
    }
    rc.value()->finish();
    ::waitpid(child, nullptr, 0);
    ::_exit(0);
  }
  ::close(ready[1]);
  ::close(release[0]);
  char c;
  if (::read(ready[0], &c, 1) != 1) {
    std::fprintf(stderr, "pause_bench: a supervisor failed to start\n");
    std::exit(1);
  }
  ::close(ready[0]);
  g_release_fds.push_back(release[1]);
  return {pid, release[1]};
}

std::vector<pid_t> tree_of(pid_t root) {
  std::vector<pid_t> out;
  std::deque<pid_t> q{root};
  while (!q.empty()) {
    const pid_t p = q.front();
    q.pop_front();
    out.push_back(p);
    for (const pid_t c : proc_children(p)) q.push_back(c);
  }
  return out;
}

// Every process of every run frozen/stopped, checked from /proc and cgroupfs.
bool all_paused(const fs::path& runtime, bool cgroup, int expected) {
  int n = 0;
  for (const auto& run : list_runs(runtime).live) {
    auto st = send_request(run.socket, {{"v", 1}, {"op", "status"}});
    if (!st) return false;
    const auto& r = st.value()["run"];
    if (r.value("state", "") != "paused") return false;
    if (cgroup) {
      const fs::path cg = r.value("cgroup", "");
      std::ifstream ev(cg / "cgroup.events");
      std::string text((std::istreambuf_iterator<char>(ev)), std::istreambuf_iterator<char>());
      if (text.find("frozen 1") == std::string::npos) return false;
      std::ifstream procs(cg / "cgroup.procs");
      pid_t p;
      while (procs >> p) {
        if (!task_is_cgroup_frozen(p)) return false;
        ++n;
      }
    } else {
      for (const pid_t p : tree_of(run.child_pid)) {
        const auto s = read_proc_stat(p);
        if (s && !is_stopped_state(s->state)) return false;
        ++n;
      }
    }
  }
  return n >= expected;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes{1, 10, 200};
  int max_runs = 5, reps = 20;
  std::string mech = "both";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--sizes") {
      sizes.clear();
      std::stringstream ss(v);
      std::string part;
      while (std::getline(ss, part, ',')) sizes.push_back(std::stoi(part));
    } else if (a == "--runs") {
      max_runs = std::stoi(v);
    } else if (a == "--reps") {
      reps = std::stoi(v);
    } else if (a == "--mechanism") {
      mech = v;
    }
  }
  std::vector<bool> mechanisms;
  if (mech != "fallback") {
    if (probe_cgroup().usable)
      mechanisms.push_back(true);
    else
      std::fprintf(stderr, "pause_bench: no cgroup: %s\n", probe_cgroup().why_not.c_str());
  }
  if (mech != "cgroup") mechanisms.push_back(false);

  std::printf("| mechanism    | processes | runs | median ms | p90 ms | max ms | all frozen |\n");
  std::printf("|--------------|----------:|-----:|----------:|-------:|-------:|:----------:|\n");
  for (const bool cgroup : mechanisms) {
    for (const int n : sizes) {
      const fs::path runtime = fs::temp_directory_path() / ("px-pause-bench-" + std::to_string(::getpid()));
      fs::remove_all(runtime);
      const int runs = std::min(max_runs, n);
      std::vector<Supervisor> sups;
      for (int r = 0; r < runs; ++r) {
        const int k = n / runs + (r < n % runs ? 1 : 0);
        sups.push_back(fork_supervisor(runtime, "bench-" + std::to_string(r), k, cgroup));
      }
      std::vector<double> ms;
      bool verified = true;
      for (int rep = 0; rep < reps; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        auto res = pause_runs(runtime, {true, ""});
        const auto t1 = std::chrono::steady_clock::now();
        bool ok = res && static_cast<int>(res.value().size()) == runs;
        if (ok)
          for (const auto& o : res.value()) ok = ok && o.ok;
        verified = verified && ok && all_paused(runtime, cgroup, n);
        ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        (void)resume_runs(runtime, {true, ""});
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      for (auto& s : sups) {
        ::close(s.release_fd);
        ::waitpid(s.pid, nullptr, 0);
      }
      g_release_fds.clear();
      fs::remove_all(runtime);
      std::printf("| %-12s | %9d | %4d | %9.2f | %6.2f | %6.2f | %-10s |\n",
                  cgroup ? "cgroup" : "process-tree", n, runs, percentile(ms, 0.5), percentile(ms, 0.9),
                  *std::max_element(ms.begin(), ms.end()), verified ? "yes" : "NO");
      std::fflush(stdout);
    }
  }
  return 0;
}
