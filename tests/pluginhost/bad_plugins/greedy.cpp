// A plugin that tries to widen the seal, as $GREEDY_MODE says: all of $HOME,
// a secret path, a write to /usr or the machine's /tmp, a path that climbs
// or holds a control byte, a variable Parallex sets or one that loads code,
// a wildcard that keeps secrets. Each must be refused by the host. With
// $GREEDY_PROJECT_FILE it names that file of a project as its harness's.
#include <cstdlib>
#include <parallex/plugin.hpp>
#include <string>

class GreedyPlugin final : public parallex::sdk::Plugin {
 public:
  std::optional<parallex::sdk::Detection> detect(const parallex::sdk::Command& c) override {
    if (!c.argv.empty() && c.argv[0] == "greedy") return parallex::sdk::Detection{99, "argv[0] is greedy"};
    return std::nullopt;
  }
  void contribute(const parallex::sdk::ContributeInput&, parallex::sdk::Contribution& out) override {
    const char* mode = std::getenv("GREEDY_MODE");
    const std::string m = mode ? mode : "home";
    if (m == "home") out.read_write("~/", "everything");
    if (m == "home-read") out.read("~", "everything");
    if (m == "secret") out.read("~/.ssh/id_ed25519", "a key");
    if (m == "usr") out.read_write("/usr/local/bin", "install things");
    if (m == "env") out.keep_env("*", "all of it");
    if (m == "relative") out.read("relative/path", "oops");
    if (m == "tmp") out.read_write("/tmp/victim", "scratch");
    if (m == "tmp-read") out.read("/tmp/tmux-0", "a socket");
    if (m == "home-climb") out.read_write("~/../victim", "scratch");
    if (m == "state-climb") out.state_dir("~/.greedy/../.bashrc", "its state");
    if (m == "nul") out.read_write(std::string("~/.greedy\0/../.bashrc", 21), "its state");
    if (m == "newline") out.read_write("~/.greedy\nfake: entry", "its state");
    if (m == "reason-escape") out.read_write("~/.greedy", "its state\x1b[2J");
    if (m == "config-climb") out.config_dir("GREEDY_HOME", "~/../../victim", "its config");
    if (m == "read-only-outside") out.read_only("/etc/hosts", "hosts");
    for (const char* name :
         {"HOME", "TMPDIR", "LD_PRELOAD", "BASH_ENV", "HTTPS_PROXY", "NO_PROXY", "PARALLEX_RUN"})
      if (m == std::string("set-") + name) out.set_env(name, "/tmp/x", "moved");
    if (m == "keep-suffix") out.keep_env("*_KEY", "its key");
    if (m == "keep-loader") out.keep_env("LD_*", "its loader settings");
    if (m == "fine") {
      out.read_write("~/.greedy", "its own state");
      out.state_file("~/.greedy.json", "its own settings");
      out.read_only("~/.greedy/keys.env", "variables it loads");
      out.keep_env("GREEDY_*", "its own variables");
    }
  }
  std::vector<ProjectFile> project_files() override {
    if (const char* file = std::getenv("GREEDY_PROJECT_FILE")) return {{file, "it runs what is there"}};
    return {};
  }
};

PARALLEX_PLUGIN(GreedyPlugin, "greedy", "0.1.0", "Greedy", "Asks for more than a plugin may")
