// The kill switch end to end: a real sealed `parallex run` starts 200
// processes (setsid daemons, a double fork) and holds a tunnel through its
// real proxy to a server on the host; `parallex pause --all` from outside must
// freeze every one, cut the tunnel in flight and refuse a new CONNECT;
// `parallex resume --all` brings all back; `parallex kill` ends the tree.
// Run with the cgroup mechanism and with the process-tree fallback.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "killswitch/cgroup.hpp"
#include "killswitch/proc.hpp"
#include "spawn.hpp"
#include "test_paths.hpp"
#include "tree_helpers.hpp"

namespace fs = std::filesystem;
using namespace px::killswitch;
using namespace px::killswitch::testing;

namespace {

// Inside the seal: a tunnel through the run's proxy to the host's echo server,
// then the tree, then a loop that pings through the tunnel and, once it broke,
// keeps trying a new one. Files in the run folder say how far it got.
const char* kInside = R"PY(
import base64, os, socket, subprocess, sys, time, urllib.parse
d, port, n, mark = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
proxy = urllib.parse.urlparse(os.environ["HTTPS_PROXY"])
def note(name, text):
    with open(os.path.join(d, name), "a") as f: f.write(text + "\n")
def tunnel():
    # A long timeout: a ping that merely waits on a loaded machine (the
    # sanitizer build, every core busy) must not be taken for a cut tunnel,
    # or the run opens its second one before the pause.
    s = socket.create_connection((proxy.hostname, proxy.port), timeout=30)
    auth = base64.b64encode(f"{proxy.username}:{proxy.password}".encode()).decode()
    s.sendall(f"CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\nProxy-Authorization: Basic {auth}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        c = s.recv(1024)
        if not c: raise OSError("closed during CONNECT")
        head += c
    if b" 200 " not in head.split(b"\r\n")[0]: raise OSError(head.split(b"\r\n")[0].decode())
    return s
def ping(s):
    s.sendall(b"ping\n")
    if s.recv(16) != b"ping\n": raise OSError("no echo")
t = tunnel(); ping(t); note("tunnel1", "ok")
note("proxy", os.environ["HTTPS_PROXY"])
os.environ["PX_TREE_MARK"] = mark
subprocess.Popen(["/bin/sh", os.path.join(d, "tree.sh"), n, d], stdin=subprocess.DEVNULL)
broken = False
while True:
    time.sleep(0.05)
    try:
        if broken:
            t = tunnel(); ping(t); note("tunnel2", "ok"); broken = False
        else:
            ping(t)
    except OSError as e:
        if not broken: note("broken", str(e))
        broken = True
)PY";

const char* kTree = R"SH(
n=$1; d=$2
setsid sh -c 'while :; do echo x >> "$0/alive"; sleep 0.02; done' "$d" </dev/null >/dev/null 2>&1 &
setsid sleep 1000 </dev/null >/dev/null 2>&1 &
(sh -c 'sleep 1000 & exit 0' &)
i=4
while [ $i -lt $n ]; do sleep 1000 & i=$((i+1)); done
echo ok > "$d/ready"
wait
)SH";

// A TCP echo server on the host's loopback that counts connections and EOFs.
class EchoServer {
 public:
  EchoServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 16);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~EchoServer() {
    stop_ = true;
    thread_.join();
    for (int c : clients_) ::close(c);
    ::close(fd_);
  }
  int port() const { return port_; }
  int accepted() const { return accepted_; }
  int closed() const { return closed_; }

 private:
  void loop() {
    while (!stop_) {
      std::vector<pollfd> fds{{fd_, POLLIN, 0}};
      for (int c : clients_) fds.push_back({c, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) {
          clients_.push_back(c);
          ++accepted_;
        }
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char buf[256];
        const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n > 0) {
          (void)!::write(fds[i].fd, buf, static_cast<std::size_t>(n));
        } else {
          ::close(fds[i].fd);
          std::erase(clients_, fds[i].fd);
          ++closed_;
        }
      }
    }
  }
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0}, closed_{0};
  std::vector<int> clients_;
  std::thread thread_;
};

using px::test::slurp;

class KillSwitchE2E : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(PARALLEX_BINARY_DIR) / "ks-e2e-XXXXXX").string();
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    root_ = tmpl;
    work_ = root_ / "work";
    fs::create_directories(work_);
    fs::create_directories(root_ / "runtime");
    fs::permissions(root_ / "runtime", fs::perms::owner_all);
    std::ofstream(work_ / "inside.py") << kInside;
    std::ofstream(work_ / "tree.sh") << kTree;
    std::random_device rd;
    mark_ = "ks" + std::to_string(rd()) + std::to_string(::getpid());
  }
  void TearDown() override {
    if (run_pid_ > 0) {
      ::kill(run_pid_, SIGKILL);
      ::waitpid(run_pid_, nullptr, 0);
    }
    for (pid_t p : marked_processes(mark_)) ::kill(p, SIGKILL);
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string env() const {
    return "XDG_RUNTIME_DIR=" + (root_ / "runtime").string() + " PARALLEX_HOME=" + (root_ / "data").string() +
           (GetParam() ? "" : " PARALLEX_NO_CGROUP=1");
  }
  // `parallex ARGS` from outside every run; its exit status.
  int px(const std::string& args, std::string* out = nullptr) {
    const fs::path o = root_ / "px.out";
    const std::string cmd = "env " + env() + " " + PARALLEX_EXE + " " + args + " >" + o.string() + " 2>&1";
    const int rc = std::system(cmd.c_str());
    if (out) *out = slurp(o);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  void start_run(int echo_port) {
    // Made before the fork: the echo server's thread runs, and no child
    // of a threaded process may allocate (a lock that thread held stays held).
    const std::string cmd = "exec env " + env() + " " + PARALLEX_EXE + " run --online --local-servers --in " +
                            work_.string() + " -- python3 " + (work_ / "inside.py").string() + " " +
                            work_.string() + " " + std::to_string(echo_port) + " 200 " + mark_ + " >" +
                            (root_ / "run.out").string() + " 2>&1";
    run_pid_ = ::fork();
    if (run_pid_ == 0) {
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
      _exit(127);
    }
  }
  bool run_alive() { return ::waitpid(run_pid_, nullptr, WNOHANG) == 0; }

  fs::path root_, work_;
  std::string mark_;
  pid_t run_pid_ = -1;
};

// A CONNECT to the run's proxy from inside the run's network namespace (the
// only place it listens); the first line of the answer, or what went wrong.
std::string connect_from_run_netns(const fs::path& dir, pid_t any_run_pid, const std::string& proxy_url,
                                   int port) {
  const std::string py =
      "import socket,base64,sys,urllib.parse as u\n"
      "p=u.urlparse(sys.argv[1])\n"
      "try:\n"
      "  s=socket.create_connection((p.hostname,p.port),timeout=3)\n"
      "  a=base64.b64encode(f'{p.username}:{p.password}'.encode()).decode()\n"
      "  s.sendall(f'CONNECT localhost:{sys.argv[2]} HTTP/1.1\\r\\nHost: x\\r\\nProxy-Authorization: Basic "
      "{a}\\r\\n\\r\\n'.encode())\n"
      "  r=s.recv(200).split(b'\\r\\n')[0].decode() or 'closed'\n"
      "except Exception as e:\n"
      "  r='error '+type(e).__name__\n"
      "print(r)\n";
  const fs::path script = dir / "connect.py";
  std::ofstream(script) << py;
  const std::string cmd = "nsenter -t " + std::to_string(any_run_pid) + " -n python3 " + script.string() +
                          " '" + proxy_url + "' " + std::to_string(port) + " 2>&1";
  std::string out;
  if (FILE* f = ::popen(cmd.c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, f)) out += buf;
    ::pclose(f);
  }
  return out;
}

}  // namespace

TEST_P(KillSwitchE2E, PauseAllFreezesEveryProcessAndCutsTheNetworkUntilResume) {
  if (::geteuid() != 0) GTEST_SKIP() << "nsenter into the run's network namespace needs root";
  if (std::system("command -v python3 >/dev/null && command -v nsenter >/dev/null") != 0)
    GTEST_SKIP() << "python3 and nsenter are needed";
  if (GetParam() && !probe_cgroup().usable) GTEST_SKIP() << probe_cgroup().why_not;
  EchoServer echo;
  start_run(echo.port());
  ASSERT_TRUE(wait_until([&] { return fs::exists(work_ / "ready") || !run_alive(); }, 30000))
      << slurp(root_ / "run.out");
  ASSERT_TRUE(run_alive()) << "the run ended early: " << slurp(root_ / "run.out");
  ASSERT_TRUE(fs::exists(work_ / "tunnel1")) << slurp(root_ / "run.out");
  ASSERT_TRUE(wait_until([&] { return marked_processes(mark_).size() >= 200; }, 10000));
  std::string runs;
  ASSERT_EQ(px("runs --json", &runs), 0) << runs;
  const auto listed = nlohmann::json::parse(runs);
  ASSERT_EQ(listed["runs"].size(), 1u) << runs;
  const std::string run_id = listed["runs"][0]["id"];
  // CPU and memory come from the run's cgroup; without one they are not known (null, never 0).
  const auto& row = listed["runs"][0];
  if (GetParam()) {
    ASSERT_TRUE(row["cpu_seconds"].is_number()) << runs;
    EXPECT_GT(row["cpu_seconds"].get<double>(), 0.0) << runs;  // 200 processes started
    if (!row["memory_bytes"].is_null()) {
      EXPECT_GT(row["memory_bytes"].get<std::uint64_t>(), 0u) << runs;
    }
  } else {
    EXPECT_TRUE(row["cpu_seconds"].is_null()) << runs;
    EXPECT_TRUE(row["memory_bytes"].is_null()) << runs;
  }
  const std::string proxy_url = slurp(work_ / "proxy").substr(0, slurp(work_ / "proxy").find('\n'));
  EXPECT_EQ(echo.closed(), 0);

  // From inside another sealed run, with the control sockets in reach: the
  // command refuses, and so does the supervisor to a raw request on its socket.
  const fs::path runtime = root_ / "runtime" / "parallex";
  const std::string raw =
      "import socket,sys,glob\n"
      "for path in glob.glob(sys.argv[1] + '/runs/*.sock'):\n"
      "  s=socket.socket(socket.AF_UNIX); s.connect(path)\n"
      "  s.sendall(b'{\"v\":1,\"op\":\"pause\",\"by\":\"inside\"}\\n'); print(s.recv(4096).decode())\n";
  std::ofstream(work_ / "raw.py") << raw;
  std::string inside;
  const int inside_status =
      px("run --in " + work_.string() + " --grant " + fs::path(PARALLEX_EXE).parent_path().string() +
             ":ro --grant " + (root_ / "runtime").string() + ":rw -- sh -c '" + PARALLEX_EXE +
             " pause --all; echo pause-status=$?; python3 " + (work_ / "raw.py").string() + " " +
             runtime.string() + "'",
         &inside);
  EXPECT_EQ(inside_status, 0) << inside;
  EXPECT_NE(inside.find("inside a Parallex run"), std::string::npos) << inside;
  EXPECT_EQ(inside.find("pause-status=0"), std::string::npos) << inside;
  // The runtime dir is Parallex's own state, denied to every run whatever the
  // grants: the control sockets are not even in reach. (Were they, the
  // supervisor would refuse a request from inside a run.)
  EXPECT_EQ(inside.find("\"ok\":true"), std::string::npos) << inside;
  EXPECT_EQ(inside.find("\"ok\": true"), std::string::npos) << inside;
  const auto before = fs::file_size(work_ / "alive");
  EXPECT_TRUE(wait_until([&] { return fs::file_size(work_ / "alive") > before; }, 2000))
      << "paused from inside";

  // What reached the host's server before the pause; nothing may while paused.
  const int accepted_before_pause = echo.accepted();
  std::string said;
  ASSERT_EQ(px("pause --all", &said), 0) << said;
  const auto marked = marked_processes(mark_);
  ASSERT_GE(marked.size(), 195u);  // 200, less a few short-lived ones (the daemon's sleeps)
  for (const pid_t p : marked) {
    const auto st = read_proc_stat(p);
    if (!st) continue;
    if (GetParam())
      EXPECT_TRUE(task_is_cgroup_frozen(p) || ended_or_ending(p)) << "pid " << p << " state " << st->state;
    else
      EXPECT_TRUE(stopped_or_stop_pending(p)) << "pid " << p << " state " << st->state;
  }
  // The tunnel in flight is cut: the host's server sees it close.
  EXPECT_TRUE(wait_until([&] { return echo.closed() >= 1; }, 3000)) << "the tunnel stayed open while paused";
  // A new CONNECT is refused while paused (sent from the run's own network namespace).
  const std::string refused = connect_from_run_netns(root_, marked.front(), proxy_url, echo.port());
  EXPECT_EQ(refused.find(" 200 "), std::string::npos) << refused;
  EXPECT_EQ(echo.accepted(), accepted_before_pause)
      << "a connection got through while paused: " << refused
      << "; the run's tunnel broke before: " << slurp(work_ / "broken");
  const auto alive = fs::file_size(work_ / "alive");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(fs::file_size(work_ / "alive"), alive) << "the setsid daemon kept running while paused";

  ASSERT_EQ(px("resume --all", &said), 0) << said;
  EXPECT_TRUE(wait_until([&] { return fs::file_size(work_ / "alive") > alive; }, 3000)) << "not resumed";
  // The network is back: the run opens a new tunnel by itself.
  EXPECT_TRUE(wait_until([&] { return fs::exists(work_ / "tunnel2"); }, 5000))
      << "no new tunnel after resume: " << slurp(work_ / "broken");
  EXPECT_GT(echo.accepted(), accepted_before_pause);

  ASSERT_EQ(px("kill " + run_id, &said), 0) << said;
  EXPECT_TRUE(wait_until([&] { return marked_processes(mark_).empty(); }, 5000));
  EXPECT_TRUE(wait_until([&] { return !run_alive(); }, 5000));
  run_pid_ = -1;
}

// A run's process whose main thread has exited while another thread runs on
// (pthread_exit): /proc shows it as a zombie. Taken for gone, pause and kill
// left it running in the process-tree fallback; it is held and killed like
// any other process.
TEST_P(KillSwitchE2E, AProcessWhoseMainThreadExitedIsPausedAndKilledToo) {
  if (std::system("command -v python3 >/dev/null") != 0) GTEST_SKIP() << "python3 is needed";
  if (GetParam() && !probe_cgroup().usable) GTEST_SKIP() << probe_cgroup().why_not;
  const char* lingering =
      "import ctypes, os, sys, threading, time\n"
      "def beat():\n"
      "    while True:\n"
      "        with open(sys.argv[1], 'a') as f: f.write('x')\n"
      "        time.sleep(0.02)\n"
      "threading.Thread(target=beat).start()\n"
      "time.sleep(0.2)\n"
      "ctypes.CDLL(None).pthread_exit(None)\n";
  std::ofstream(work_ / "lingering.py") << lingering;
  const fs::path beat = work_ / "beat";
  const std::string cmd = "exec env " + env() + " PX_TREE_MARK=" + mark_ + " " + PARALLEX_EXE + " run --in " +
                          work_.string() + " -- python3 " + (work_ / "lingering.py").string() + " " +
                          beat.string() + " " + mark_ + " >" + (root_ / "run.out").string() + " 2>&1";
  run_pid_ = ::fork();  // the command made before it, as in start_run
  if (run_pid_ == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
    _exit(127);
  }
  const auto size = [&] {
    std::error_code ec;
    const auto n = fs::file_size(beat, ec);
    return ec ? 0 : n;
  };
  // Its main thread gone: the process shows 'Z' while it writes on.
  pid_t lingerer = 0;
  ASSERT_TRUE(wait_until(
      [&] {
        // By its command line (the seal passes no PX_TREE_MARK), read through
        // the live thread: the zombie main thread's is empty.
        std::error_code ec;
        for (const auto& e : fs::directory_iterator("/proc", ec)) {
          const pid_t p = std::atoi(e.path().filename().c_str());
          const auto st = p > 0 ? read_proc_stat(p) : std::nullopt;
          if (!st || st->state != 'Z') continue;
          for (const auto& t : fs::directory_iterator(e.path() / "task", ec))
            if (read_proc_file(t.path() / "cmdline").value_or("").find(mark_) != std::string::npos)
              lingerer = p;
        }
        return lingerer != 0 || !run_alive();
      },
      30000))
      << slurp(root_ / "run.out");
  ASSERT_NE(lingerer, 0) << slurp(root_ / "run.out");
  const auto before = size();
  ASSERT_TRUE(wait_until([&] { return size() > before; }, 2000))
      << "not writing: " << slurp(root_ / "run.out");

  std::string said;
  ASSERT_EQ(px("pause --all", &said), 0) << said;
  auto held = size();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(size(), held) << "its thread kept running while paused: " << said;
  ASSERT_EQ(px("resume --all", &said), 0) << said;
  EXPECT_TRUE(wait_until([&] { return size() > held; }, 3000)) << "not resumed";

  ASSERT_EQ(px("kill --all", &said), 0) << said;
  EXPECT_TRUE(wait_until([&] { return !run_alive(); }, 5000)) << slurp(root_ / "run.out");
  held = size();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(size(), held) << "its thread outlived the kill: " << said;
  EXPECT_FALSE(fs::exists("/proc/" + std::to_string(lingerer) + "/task")) << "pid " << lingerer;
}

INSTANTIATE_TEST_SUITE_P(Mechanisms, KillSwitchE2E, ::testing::Values(true, false),
                         [](const auto& p) { return p.param ? "cgroup" : "fallback"; });
