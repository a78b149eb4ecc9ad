// A plugin that names a project file outside the project: refused with an
// error naming the plugin and the path.
#include <parallex/plugin.hpp>

namespace {

class Climbing final : public parallex::sdk::Plugin {
 public:
  std::optional<parallex::sdk::Detection> detect(const parallex::sdk::Command&) override {
    return std::nullopt;
  }
  void contribute(const parallex::sdk::ContributeInput&, parallex::sdk::Contribution&) override {}
  std::vector<ProjectFile> project_files() override {
    return {{".climbing/settings.json", "fine"}, {"../outside/.bashrc", "not inside the project"}};
  }
};

}  // namespace

PARALLEX_PLUGIN(Climbing, "climbing", "1.0.0", "Climbing", "names a file outside the project")
