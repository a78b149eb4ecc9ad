// Plugin discovery + loading, and policy composition: the work every
// `parallex run` does before the seal. Google Benchmark; compare against
// BM_ParseDefaultProfile (the floor: reading the embedded YAML).
#include <benchmark/benchmark.h>

#include "pluginhost/detection.hpp"
#include "pluginhost/plugin_set.hpp"
#include "policy/compose.hpp"

namespace {

// The build's plugins, found from this executable (build/bench/policy/) as
// `parallex` finds them from build/: no path in the compile flags, so ccache
// reuses the object from one clone to the next.
const std::vector<std::filesystem::path> kDirs{
    std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path().parent_path() / "plugins"};

void BM_ParseDefaultProfile(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(px::policy::load_profile("default"));
}
BENCHMARK(BM_ParseDefaultProfile);

void BM_DiscoverAndLoadPlugins(benchmark::State& state) {
  for (auto _ : state) {
    auto set = px::pluginhost::PluginSet::load(kDirs);
    if (set.plugins().size() < 4) state.SkipWithError("the four plugins are not built");
    benchmark::DoNotOptimize(set);
  }
}
BENCHMARK(BM_DiscoverAndLoadPlugins);

void BM_DetectAndCompose(benchmark::State& state) {
  auto set = px::pluginhost::PluginSet::load(kDirs);
  auto base = px::policy::load_profile("default");
  const px::pluginhost::CommandLine cmd{{"claude", "-p", "hi"}, "", ""};
  for (auto _ : state) {
    auto choice = px::pluginhost::choose_harness(set, std::nullopt, &cmd);
    px::policy::ComposeInputs in;
    in.user_home = "/home/u";
    in.run_folder = "/srv/project";
    in.temp_dir = "/run/user/1000/parallex/tmp/run-x";
    in.profiles.push_back(base.value());
    if (choice && choice.value().plugin)
      in.harness =
          choice.value()
              .plugin
              ->contribute(px::policy::Platform::linux_host, in.user_home, in.user_home, in.run_folder, &cmd)
              .value();
    in.network.allow = {"api.anthropic.com"};
    auto policy = px::policy::compose(in);
    if (!policy) state.SkipWithError(policy.error().message.c_str());
    benchmark::DoNotOptimize(policy);
  }
}
BENCHMARK(BM_DetectAndCompose);

}  // namespace

BENCHMARK_MAIN();
