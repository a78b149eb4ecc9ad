// The fallback: it claims any command with the lowest confidence, so a command
// no harness plugin recognises still gets a policy, and adds nothing to it. What
// such a run may touch comes from the profile and the flags alone.
#include <parallex/plugin.hpp>

namespace {

using namespace parallex::sdk;

class GenericPlugin final : public Plugin {
 public:
  std::optional<Detection> detect(const Command& command) override {
    if (command.argv.empty() || command.argv.front().empty()) return std::nullopt;
    return Detection{1, "no harness plugin recognises `" + std::string(basename_of(command.argv.front())) +
                            "`; it runs with the profile and your flags only"};
  }
  void contribute(const ContributeInput&, Contribution&) override {}
};

}  // namespace

PARALLEX_PLUGIN(GenericPlugin, "generic", "1.0.0", "Any command",
                "The fallback for commands no harness plugin claims; adds nothing to the policy")
