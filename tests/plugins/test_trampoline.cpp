// The SDK's trampolines: whatever a plugin method throws becomes PX_ERROR plus
// a message through the sink's error callback, never an exception across the
// C boundary. Test-only plugins, compiled into this executable.
#include <gtest/gtest.h>

#include <parallex/plugin.hpp>
#include <stdexcept>

#include "loaded_plugin.hpp"

using namespace px_test;

namespace {

class ThrowingPlugin final : public parallex::sdk::Plugin {
 public:
  std::optional<parallex::sdk::Detection> detect(const parallex::sdk::Command& c) override {
    if (!c.argv.empty() && c.argv[0] == "int") throw 42;
    throw std::runtime_error("detect failed: no such harness");
  }
  void contribute(const parallex::sdk::ContributeInput&, parallex::sdk::Contribution& out) override {
    out.read_write("~/.thrower", "state written before the failure");
    throw std::runtime_error("contribute failed: cannot read the harness config");
  }
  bool has_sign_in() const override { return true; }
  void carry_sign_in(const parallex::sdk::SignInInput&, parallex::sdk::SignIn&) override {
    throw std::runtime_error("sign-in failed");
  }
  bool has_transcripts() const override { return true; }
  void parse_transcripts(const parallex::sdk::TranscriptInput&, parallex::sdk::TranscriptOutput&) override {
    throw std::runtime_error("parse failed");
  }
  std::vector<std::string> transcript_roots(const std::string&) override {
    throw std::runtime_error("roots failed");
  }
};

class ThrowingConstructor final : public parallex::sdk::Plugin {
 public:
  ThrowingConstructor() { throw std::runtime_error("cannot start"); }
  std::optional<parallex::sdk::Detection> detect(const parallex::sdk::Command&) override {
    return std::nullopt;
  }
  void contribute(const parallex::sdk::ContributeInput&, parallex::sdk::Contribution&) override {}
};

class Overconfident final : public parallex::sdk::Plugin {
 public:
  std::optional<parallex::sdk::Detection> detect(const parallex::sdk::Command& c) override {
    if (c.argv.size() > 1 && c.argv[1] == "zero") return parallex::sdk::Detection{0, "not really"};
    return parallex::sdk::Detection{250, "very sure"};
  }
  void contribute(const parallex::sdk::ContributeInput&, parallex::sdk::Contribution&) override {}
};

}  // namespace

PARALLEX_PLUGIN(ThrowingPlugin, "thrower", "0.0.1", "Thrower", "Throws from every method")

TEST(Trampoline, ThrowingMethodsBecomeErrorsWithTheirMessage) {
  const px_plugin* p = parallex_plugin_entry();
  ASSERT_NE(p, nullptr);
  EXPECT_STREQ(p->name, "thrower");

  DetectResult d = detect(*p, {{"thrower"}, "", ""});
  EXPECT_EQ(d.rc, PX_ERROR);
  EXPECT_TRUE(d.claims.empty());
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_EQ(d.errors[0], "detect failed: no such harness");

  ContributeResult c = contribute(*p, ContributeArgs{});
  EXPECT_EQ(c.rc, PX_ERROR);
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_EQ(c.errors[0], "contribute failed: cannot read the harness config");
  EXPECT_EQ(c.paths.size(), 1u)
      << "what was sent before the throw reached the sink; the host discards it on error";

  ASSERT_NE(p->carry_sign_in, nullptr);
  SignInResult s = carry_sign_in(*p, PX_PLATFORM_LINUX, "/home/u", "/home/a");
  EXPECT_EQ(s.rc, PX_ERROR);
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0], "sign-in failed");

  ASSERT_NE(p->parse_transcripts, nullptr);
  TranscriptResult t = parse_transcripts(*p, {"/x"});
  EXPECT_EQ(t.rc, PX_ERROR);
  ASSERT_EQ(t.errors.size(), 1u);
  EXPECT_EQ(t.errors[0], "parse failed");

  ASSERT_NE(p->transcript_roots, nullptr);
  RootsResult r = transcript_roots(*p, "/home/a");
  EXPECT_EQ(r.rc, PX_ERROR);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0], "roots failed");
}

TEST(Trampoline, NonStandardExceptionsAreCaughtToo) {
  const px_plugin* p = parallex_plugin_entry();
  DetectResult d = detect(*p, {{"int"}, "", ""});
  EXPECT_EQ(d.rc, PX_ERROR);
  ASSERT_EQ(d.errors.size(), 1u);
  EXPECT_NE(d.errors[0].find("unknown exception"), std::string::npos);
}

TEST(Trampoline, AThrowingConstructorMakesTheEntryReturnNull) {
  using T = parallex::sdk::detail::Trampolines<ThrowingConstructor>;
  EXPECT_EQ(T::entry("ctor", "0.0.1", "Ctor", "Throws while constructed"), nullptr);
}

TEST(Trampoline, ConfidenceIsClampedAndZeroIsNoClaim) {
  using T = parallex::sdk::detail::Trampolines<Overconfident>;
  const px_plugin* p = T::entry("overconfident", "0.0.1", "Over", "Claims too much");
  ASSERT_NE(p, nullptr);
  DetectResult high = detect(*p, {{"x"}, "", ""});
  EXPECT_EQ(high.rc, PX_OK);
  ASSERT_EQ(high.claims.size(), 1u);
  EXPECT_EQ(high.claims[0].confidence, 100);
  DetectResult zero = detect(*p, {{"x", "zero"}, "", ""});
  EXPECT_EQ(zero.rc, PX_OK);
  EXPECT_TRUE(zero.claims.empty());
}
