#pragma once
// Helpers for the MCP tests: a temporary PARALLEX_HOME with agents written as
// the agent store lays them out, and a server fed from a string.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mcp/server.hpp"

namespace px::mcp::test {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class TempHome {
 public:
  TempHome() {
    std::string templ = (fs::temp_directory_path() / "px-mcp-test-XXXXXX").string();
    dir_ = ::mkdtemp(templ.data());
    ::setenv("PARALLEX_HOME", dir_.c_str(), 1);
  }
  ~TempHome() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    ::unsetenv("PARALLEX_HOME");
  }
  const fs::path& dir() const { return dir_; }
  fs::path agent_root(const std::string& name) const { return dir_ / "agents" / name; }

  // An agent as the store lays it out (agent.yaml is JSON, which YAML reads).
  fs::path add_agent(const std::string& name, const std::string& network = "offline",
                     std::vector<std::string> allow = {},
                     const std::string& created = "2026-01-01T00:00:00Z") const {
    const fs::path root = agent_root(name);
    for (const char* d : {"home", "keys", "gh", "no-hooks", "runs"}) fs::create_directories(root / d);
    Json cfg{{"version", 1},
             {"name", name},
             {"email", name + "@example.com"},
             {"created", created},
             {"repos", Json::array()},
             {"network", {{"mode", network}, {"allow", allow}, {"local_servers", false}}},
             {"grants", Json::array()},
             {"share_harness_config", false},
             {"sealed", true}};
    write(root / "agent.yaml", cfg.dump(2));
    write(root / "keys" / "id_ed25519", "not a real key\n");
    write(root / "keys" / "id_ed25519.pub", "ssh-ed25519 AAAA test\n");
    write(root / "home" / "notes.txt", "first\n");
    return root;
  }

  static void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::trunc) << text;
  }
  static std::string read(const fs::path& file) {
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  fs::path dir_;
};

// Feeds `input` (one message per line) to a server and returns what it wrote.
inline std::vector<Json> serve(const std::string& input, ServerOptions options = {}) {
  std::istringstream in(input);
  std::ostringstream out;
  StreamTransport transport(in, out);
  Server server(transport, std::move(options));
  EXPECT_EQ(server.serve(), 0);
  std::vector<Json> replies;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) {
    Json j = Json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "the server wrote a line that is not JSON: " << line;
    replies.push_back(j);
  }
  return replies;
}

inline std::string line(const Json& j) {
  return j.dump() + "\n";
}

inline std::string init(const Json& capabilities = Json::object(),
                        const std::string& version = "2025-06-18") {
  return line({{"jsonrpc", "2.0"},
               {"id", 0},
               {"method", "initialize"},
               {"params",
                {{"protocolVersion", version},
                 {"capabilities", capabilities},
                 {"clientInfo", {{"name", "test"}, {"version", "1"}}}}}}) +
         line({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
}

inline std::string call(int id, const std::string& tool, const Json& args = Json::object()) {
  return line({{"jsonrpc", "2.0"},
               {"id", id},
               {"method", "tools/call"},
               {"params", {{"name", tool}, {"arguments", args}}}});
}

inline const Json* reply_to(const std::vector<Json>& replies, const Json& id) {
  for (const auto& r : replies)
    if (r.contains("id") && r["id"] == id && (r.contains("result") || r.contains("error"))) return &r;
  return nullptr;
}

inline std::string text_of(const Json& reply) {
  std::string s;
  for (const auto& c : reply["result"]["content"]) s += c.value("text", "");
  return s;
}

}  // namespace px::mcp::test
