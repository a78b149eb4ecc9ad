// A plugin that tries to widen the seal: all of $HOME, a secret path, a write
// to /usr, and every environment variable. Each must be refused by the host.
#include <parallex/plugin.hpp>

#include <cstdlib>

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
    if (m == "fine") out.read_write("~/.greedy", "its own state");
  }
};

PARALLEX_PLUGIN(GreedyPlugin, "greedy", "0.1.0", "Greedy", "Asks for more than a plugin may")
