// `parallex check` names the kill switch's tracking mechanism and what it
// cannot catch: the real executable against the real probe of this machine.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "supervisor/run_control.hpp"

namespace {

std::string run(const std::string& cmd) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(cmd.c_str(), "r"), ::pclose);
  if (!p) return out;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p.get())) > 0;) out.append(buf.data(), n);
  return out;
}

}  // namespace

TEST(CheckCommand, NamesTheTrackingMechanism) {
  const auto probe = px::supervisor::probe_tracking();
  auto j = nlohmann::json::parse(run(std::string(PARALLEX_EXE) + " check --json"), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_TRUE(j.contains("kill_switch")) << j.dump(2);
  EXPECT_EQ(j["kill_switch"]["mechanism"], px::supervisor::to_string(probe.mechanism));
  EXPECT_FALSE(j["kill_switch"]["cannot_catch"].get<std::string>().empty());

  const std::string text = run(std::string(PARALLEX_EXE) + " check");
  EXPECT_NE(text.find("Kill switch (process tracking): " + probe.description), std::string::npos) << text;
}
