// A plugin written with the SDK whose methods throw: every call must come back
// as an error naming the plugin, never as an exception in the host.
#include <parallex/plugin.hpp>

#include <stdexcept>

class ThrowingPlugin final : public parallex::sdk::Plugin {
 public:
  std::optional<parallex::sdk::Detection> detect(const parallex::sdk::Command&) override {
    throw std::runtime_error("detect exploded");
  }
  void contribute(const parallex::sdk::ContributeInput&, parallex::sdk::Contribution&) override {
    throw std::logic_error("contribute exploded");
  }
};

PARALLEX_PLUGIN(ThrowingPlugin, "throwing", "0.1.0", "Throwing", "Throws from every callback")
