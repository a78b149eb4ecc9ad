#pragma once
// The scripted model server (fake_model_server.py) on an ephemeral loopback
// port of this machine, one per test: what a user's local model server is to
// a harness. Shared by the end-to-end and the home guard tests.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/paths.hpp"
#include "test_paths.hpp"

namespace px::test {

class ModelServer {
 public:
  // `dir` holds its port file and logs; `workdir` is the folder its script
  // tells the client to work in. `extra`: more of the script's options
  // (--fetch HOST --page TEXT: one command fetching a page of its own).
  ModelServer(const std::filesystem::path& dir, const std::filesystem::path& workdir,
              const std::vector<std::string>& extra = {})
      : dir_(dir) {
    const char* path = std::getenv("PATH");
    const auto python = px::find_executable("python3", path ? path : "/usr/local/bin:/usr/bin:/bin");
    if (!python) return;
    const std::string py = python->string();
    const std::string script = std::string(PARALLEX_SOURCE_DIR) + "/tests/e2e/fake_model_server.py";
    const std::string port_file = (dir / "port").string(), actions = (dir / "actions.jsonl").string(),
                      requests = (dir / "requests.jsonl").string(), wd = workdir.string(),
                      credentials = (dir / "credentials.jsonl").string();
    std::vector<std::string> args{py,
                                  script,
                                  "--port-file",
                                  port_file,
                                  "--actions",
                                  actions,
                                  "--workdir",
                                  wd,
                                  "--requests",
                                  requests,
                                  "--credentials",
                                  credentials,
                                  "--tool-results",
                                  (dir / "tool_results.jsonl").string(),
                                  "--page-port-file",
                                  (dir / "page-port").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execv(py.c_str(), argv.data());
      ::_exit(127);
    }
    for (int i = 0; i < 600 && !std::filesystem::exists(dir / "port"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (std::filesystem::exists(dir / "port")) port_ = std::stoi(read(dir / "port"));
    if (std::filesystem::exists(dir / "page-port")) page_port_ = std::stoi(read(dir / "page-port"));
  }
  ~ModelServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  ModelServer(const ModelServer&) = delete;
  ModelServer& operator=(const ModelServer&) = delete;

  int port() const { return port_; }
  // With --fetch: the port of the page it serves (0 without).
  int page_port() const { return page_port_; }
  // What each tool call the client sent back said (its output), in order.
  std::vector<std::string> tool_results() const {
    std::vector<std::string> out;
    std::istringstream in(read(dir_ / "tool_results.jsonl"));
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object()) out.push_back(j.value("output", ""));
    }
    return out;
  }
  // What the server told the client to do, in order.
  std::vector<nlohmann::json> actions() const {
    std::vector<nlohmann::json> out;
    std::istringstream in(read(dir_ / "actions.jsonl"));
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    return out;
  }
  // The requests it received (paths and headers), for a failure message.
  std::string requests() const { return read(dir_ / "requests.jsonl"); }
  // The key each request carried (x-api-key or authorization), in order.
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    std::istringstream in(read(dir_ / "credentials.jsonl"));
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object()) out.push_back(j.value("x-api-key", "") + j.value("authorization", ""));
    }
    return out;
  }

 private:
  static std::string read(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  int port_ = 0;
  int page_port_ = 0;
};

}  // namespace px::test
