// The evaluator is the judge of the Seatbelt tests, so it is tested first on
// hand-written profiles whose answers are known.
#include "sbpl_eval.hpp"

#include <gtest/gtest.h>

namespace px::sbpl {
namespace {

Profile load(const std::string& text, std::vector<std::pair<std::string, std::string>> params = {}) {
  std::string error;
  auto p = Profile::load(text, params, &error);
  EXPECT_TRUE(p.has_value()) << error;
  return p ? *p : Profile{};
}

TEST(SbplEval, DenyDefaultDeniesEverything) {
  auto p = load("(version 1)\n(deny default)\n");
  EXPECT_TRUE(p.has_deny_default_first());
  EXPECT_EQ(p.decide(Query::file("file-read-data", "/etc/hosts")), Decision::deny);
  EXPECT_EQ(p.decide(Query::connect("localhost", 80)), Decision::deny);
}

TEST(SbplEval, LastMatchingRuleWins) {
  auto p = load(R"((version 1)(deny default)
(allow file-read* (subpath "/a"))
(deny file-read* (subpath "/a/secret"))
(allow file-read* (literal "/a/secret/ok")))");
  EXPECT_EQ(p.decide(Query::file("file-read-data", "/a/x")), Decision::allow);
  EXPECT_EQ(p.decide(Query::file("file-read-data", "/a/secret/key")), Decision::deny);
  EXPECT_EQ(p.decide(Query::file("file-read-data", "/a/secret/ok")), Decision::allow);
  EXPECT_EQ(p.evaluate(Query::file("file-read-data", "/a/secret/key")).line, 3);
}

TEST(SbplEval, UnfilteredRuleIsTheOperationsDefault) {
  auto p = load("(version 1)(deny default)(allow file-read*)(deny file-read-data (subpath \"/x\"))");
  EXPECT_EQ(p.decide(Query::file("file-read-data", "/y")), Decision::allow);
  EXPECT_EQ(p.decide(Query::file("file-read-metadata", "/x")), Decision::allow);
  EXPECT_EQ(p.decide(Query::file("file-read-data", "/x/z")), Decision::deny);
  EXPECT_EQ(p.decide(Query::file("file-write-data", "/y")), Decision::deny);
}

TEST(SbplEval, SubpathIsOnComponentBoundaries) {
  auto p = load("(version 1)(deny default)(allow file-read* (subpath \"/home/a\"))");
  EXPECT_TRUE(p.allows(Query::file("file-read-data", "/home/a")));
  EXPECT_TRUE(p.allows(Query::file("file-read-data", "/home/a/b")));
  EXPECT_FALSE(p.allows(Query::file("file-read-data", "/home/ab")));
}

TEST(SbplEval, ParamsAreBoundAndMustExist) {
  auto p =
      load("(version 1)(deny default)(allow file-write* (subpath (param \"W\")))", {{"W", "/w \"q\" (p)"}});
  EXPECT_TRUE(p.allows(Query::file("file-write-data", "/w \"q\" (p)/f")));
  std::string error;
  EXPECT_FALSE(Profile::load("(allow file-read* (subpath (param \"MISSING\")))", {}, &error));
  EXPECT_NE(error.find("MISSING"), std::string::npos);
}

TEST(SbplEval, SyntaxErrorsAreRefused) {
  std::string error;
  EXPECT_FALSE(Profile::load("(version 1)(deny default", {}, &error));
  EXPECT_NE(error.find("not closed"), std::string::npos) << error;
  EXPECT_FALSE(Profile::load("(version 1))", {}, &error));
  EXPECT_FALSE(Profile::load("(import \"system.sb\")", {}, &error));
  EXPECT_FALSE(Profile::load("(allow (literal \"/x\"))", {}, &error));
}

TEST(SbplEval, RequireAllAnyNotAndRegex) {
  auto p = load(R"((version 1)(deny default)
(allow file-write* (subpath "/r"))
(deny file-write-create (require-all (subpath "/r") (regex #"/\.[gG][iI][tT]$")))
(allow file-read* (require-any (literal "/x") (literal "/y")))
(allow file-read* (require-all (subpath "/z") (require-not (literal "/z/no")))))");
  EXPECT_EQ(p.decide(Query::file("file-write-create", "/r/sub/.git")), Decision::deny);
  EXPECT_EQ(p.decide(Query::file("file-write-create", "/r/sub/.GIT")), Decision::deny);
  EXPECT_EQ(p.decide(Query::file("file-write-create", "/r/sub/.gitignore")), Decision::allow);
  EXPECT_EQ(p.decide(Query::file("file-write-data", "/r/.git")), Decision::allow);
  EXPECT_TRUE(p.allows(Query::file("file-read-data", "/y")));
  EXPECT_TRUE(p.allows(Query::file("file-read-data", "/z/yes")));
  EXPECT_FALSE(p.allows(Query::file("file-read-data", "/z/no")));
}

TEST(SbplEval, NetworkAddresses) {
  auto p = load(R"((version 1)(deny default)
(allow network-outbound (remote ip "localhost:3128"))
(allow network-bind (local ip "*:*")))");
  EXPECT_TRUE(p.allows(Query::connect("localhost", 3128)));
  EXPECT_TRUE(p.allows(Query::connect("127.0.0.1", 3128)));
  EXPECT_FALSE(p.allows(Query::connect("localhost", 3129)));
  EXPECT_FALSE(p.allows(Query::connect("140.82.112.3", 3128)));
  EXPECT_TRUE(p.allows(Query::bind("0.0.0.0", 8080)));
  EXPECT_FALSE(p.allows(Query::file("file-read-data", "/")));
}

TEST(SbplEval, UnmodelledFilterThatCouldDecideIsUnknown) {
  auto p = load(R"((version 1)(deny default)
(allow file-write-data (require-all (literal "/dev/null") (vnode-type CHARACTER-DEVICE))))");
  EXPECT_EQ(p.decide(Query::file("file-write-data", "/dev/null")), Decision::unknown);
  // A definite "no" elsewhere in require-all settles it without the unknown filter.
  EXPECT_EQ(p.decide(Query::file("file-write-data", "/etc/passwd")), Decision::deny);
}

TEST(SbplEval, MachAndSysctlNames) {
  auto p = load(R"((version 1)(deny default)
(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))
(allow sysctl-read (sysctl-name "hw.ncpu") (sysctl-name-prefix "kern.proc.pid.")))");
  EXPECT_TRUE(p.allows(Query::named("mach-lookup", "com.apple.system.opendirectoryd.libinfo")));
  EXPECT_FALSE(p.allows(Query::named("mach-lookup", "com.apple.pasteboard.1")));
  EXPECT_TRUE(p.allows(Query::named("sysctl-read", "kern.proc.pid.42")));
  EXPECT_FALSE(p.allows(Query::named("sysctl-write", "hw.ncpu")));
}

}  // namespace
}  // namespace px::sbpl
