#pragma once
// The agents tests' fixture: a private PARALLEX_HOME and user HOME, the real
// `parallex` executable run through a shell, real git repositories.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "agents/store.hpp"
#include "test_paths.hpp"

namespace px_agents_test {

namespace fs = std::filesystem;
using namespace px::agents;

inline const std::string kToken = "ghp_" + std::string(36, 'A');  // right shape, not a real token

inline std::string q(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void spit(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

inline bool have(const char* tool) {
  return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0;
}

struct Ran {
  int status = -1;
  std::string out, err;
};

class AgentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/px-agents-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    data_ = root_ / "data";
    user_home_ = root_ / "user";
    fs::create_directories(user_home_);
    // The user's own git identity: it must never reach the agent.
    spit(user_home_ / ".gitconfig", "[user]\n\tname = Real User\n\temail = real@user.example\n");
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(data_ / "agents", fs::perms::owner_all, fs::perm_options::add, ec);
    for (auto it = fs::recursive_directory_iterator(root_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_directory(ec) && !it->is_symlink(ec))
        fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(root_, ec);
  }

  fs::path agents_root() const { return data_ / "agents"; }
  AgentPaths paths(const std::string& name) const { return paths_of(agents_root(), name); }

  // Runs a shell command line with the test's PARALLEX_HOME and HOME, and a
  // clean git environment (no system config of the machine's).
  Ran sh(const std::string& cmd, const std::string& input = "", const std::string& env = "") {
    const fs::path in = root_ / "stdin", out = root_ / "stdout", err = root_ / "stderr";
    spit(in, input);
    const std::string line = "env -u SSH_AUTH_SOCK PARALLEX_HOME=" + q(data_.string()) +
                             " HOME=" + q(user_home_.string()) + " GIT_CONFIG_NOSYSTEM=1 " + env + " sh -c " +
                             q(cmd) + " <" + q(in.string()) + " >" + q(out.string()) + " 2>" +
                             q(err.string());
    const int rc = std::system(line.c_str());
    Ran r;
    r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }
  Ran px(const std::string& args, const std::string& input = "", const std::string& env = "") {
    return sh(q(PARALLEX_EXE) + " " + args, input, env);
  }
  // The environment an agent's git gets in its runs (see run_inputs.cpp).
  std::string agent_git_env(const std::string& name) const {
    const auto p = paths(name);
    return "HOME=" + q(p.home().string()) + " GIT_CONFIG_GLOBAL=" + q(p.gitconfig().string()) +
           " GIT_TERMINAL_PROMPT=0 GH_CONFIG_DIR=" + q(p.gh().string());
  }
  void make_agent(const std::string& name, const std::string& extra = "") {
    auto r = px("agent new " + name + " --email " + name + "@example.com " + extra);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  fs::path make_repo(const std::string& dirname) {
    const fs::path repo = root_ / dirname;
    fs::create_directories(repo);
    auto r = sh("cd " + q(repo.string()) +
                " && git init -q -b main . && git -c user.name=U -c user.email=u@x -c "
                "commit.gpgsign=false commit -q --allow-empty -m init");
    EXPECT_EQ(r.status, 0) << r.err;
    return repo;
  }

  fs::path root_, data_, user_home_;
};

inline mode_t mode_of(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return st.st_mode & 07777;
}
}  // namespace px_agents_test
