// The loader the backends share: strict parsing and real layouts.
#include "expectations_loader.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "contains.hpp"

namespace px::expectations {
namespace {

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto l = Layout::create();
    ASSERT_TRUE(l.has_value()) << l.error().message;
    layout_.emplace(std::move(l.value()));
  }

  std::string error_for(const std::string& yaml) {
    const fs::path file = layout_->root / "case.yaml";
    std::ofstream(file) << yaml;
    auto e = load(file);
    EXPECT_FALSE(e.has_value()) << yaml;
    return e ? std::string() : e.error().message;
  }

  std::optional<Layout> layout_;
};

using px::test::expect_contains;

TEST_F(LoaderTest, ErrorsNameFileLineAndKey) {
  expect_contains(error_for("rows:\n  - {op: read, path: /x, expect: allowed, extra: 1}\n"),
                  {"case.yaml:2", "rows.extra", "unknown key"});
  expect_contains(error_for("rows:\n  - {op: open, path: /x, expect: allowed}\n"),
                  {"case.yaml:2", "rows.op", "open"});
  expect_contains(error_for("rows:\n  - {op: read, path: /x, expect: maybe}\n"),
                  {"case.yaml:2", "rows.expect"});
  expect_contains(error_for("rows:\n  - {op: connect, path: /x, expect: denied}\n"), {"case.yaml:2", "host"});
  expect_contains(error_for("rows:\n  - {op: connect, host: a.b, port: 0, expect: denied}\n"), {"rows.port"});
  expect_contains(error_for("setup:\n  grants: [{path: /x, access: rwx}]\nrows: []\n"),
                  {"case.yaml:2", "access"});
  expect_contains(error_for("setup:\n  network: {online: perhaps}\nrows: []\n"), {"setup.network.online"});
  expect_contains(error_for("description: x\n"), {"no rows"});
  expect_contains(error_for("rows: [\n"), {"malformed YAML"});
}

TEST_F(LoaderTest, LayoutHasRealDirectoriesAndStandardFiles) {
  for (const auto& d :
       {layout_->home, layout_->run_folder, layout_->agent_home, layout_->temp, layout_->outside})
    EXPECT_TRUE(fs::is_directory(d)) << d;
  EXPECT_TRUE(fs::is_regular_file(layout_->home / ".ssh/id_ed25519"));
  EXPECT_TRUE(fs::is_regular_file(layout_->run_folder / ".git/config"));
  EXPECT_EQ(layout_->substitute("{run_folder}/a").value(), (layout_->run_folder / "a").string());
  EXPECT_FALSE(layout_->substitute("{nope}/a").has_value());
}

TEST_F(LoaderTest, LayoutIsRemovedWithItsObject) {
  fs::path root;
  {
    auto l = Layout::create();
    ASSERT_TRUE(l.has_value());
    root = l.value().root;
    EXPECT_TRUE(fs::exists(root));
  }
  EXPECT_FALSE(fs::exists(root));
}

}  // namespace
}  // namespace px::expectations
