// Request rules: the parser's errors, the path the rules see, and matching.
#include <gtest/gtest.h>

#include "broker/request_rules.hpp"
#include "contains.hpp"

namespace px::broker {
namespace {

using px::test::contains;

RequestRule rule(std::string_view line, std::string reason = {}) {
  auto r = parse_request_rule_line(line, std::move(reason));
  EXPECT_TRUE(r) << line << ": " << (r ? "" : r.error().message);
  return r ? r.value() : RequestRule{};
}

std::string error_of(std::string_view line) {
  auto r = parse_request_rule_line(line);
  EXPECT_FALSE(r) << line << " should be refused";
  return r ? std::string() : r.error().message;
}

TEST(RequestRules, ParsesMethodsAndPatterns) {
  const RequestRule r = rule("allow GET,HEAD /o/*.git/**", "read only");
  EXPECT_EQ(r.action, RuleAction::allow);
  EXPECT_EQ(r.methods, (std::vector<std::string>{"GET", "HEAD"}));
  EXPECT_EQ(r.pattern, "/o/*.git/**");
  EXPECT_EQ(r.reason, "read only");
  EXPECT_EQ(r.text(), "allow GET,HEAD /o/*.git/**");
  const RequestRule any = rule("deny *");
  EXPECT_TRUE(any.methods.empty());
  EXPECT_EQ(any.text(), "deny * /**");
}

TEST(RequestRules, BadRulesSayWhatToWrite) {
  EXPECT_TRUE(contains(error_of("allow GTE /x"), "\"GTE\" is not an HTTP method"))
      << error_of("allow GTE /x");
  EXPECT_TRUE(contains(error_of("allow get /x"), "write GET"));
  EXPECT_TRUE(contains(error_of("allow CONNECT /x"), "is not an HTTP method a rule can name"));
  EXPECT_TRUE(contains(error_of("allow GET,,POST /x"), "empty method"));
  EXPECT_TRUE(contains(error_of("allow GET,* /x"), "'*' stands alone"));
  EXPECT_TRUE(contains(error_of("permit GET /x"), "write allow or deny"));
  EXPECT_TRUE(contains(error_of("allow GET x/y"), "starts with '/'"));
  EXPECT_TRUE(contains(error_of("allow GET /x?y=1"), "remove the query"));
  EXPECT_TRUE(contains(error_of("allow GET /a%2Fb"), "without percent-escapes"));
  EXPECT_TRUE(contains(error_of("allow GET /a**"), "'**' must be a whole segment"));
  EXPECT_TRUE(contains(error_of("allow GET /a//b"), "empty path segment"));
  EXPECT_TRUE(contains(error_of("allow GET /a/../b"), "'.' and '..'"));
  EXPECT_TRUE(contains(error_of("allow GET /a b"), "has a space"));
  EXPECT_TRUE(contains(error_of("allow GET /a\\b"), "cannot"));
  EXPECT_TRUE(contains(error_of("allow"), "ACTION METHODS"));
  EXPECT_TRUE(contains(error_of("allow GET /" + std::string(1100, 'a')), "1024"));
  auto multi = parse_request_rule("allow", "GET /x", "two\nlines");
  ASSERT_FALSE(multi);
  EXPECT_TRUE(contains(multi.error().message, "one line"));
}

TEST(RequestRules, CanonicalPathRefusesWhatAServerCouldReadDifferently) {
  EXPECT_EQ(canonical_path("/o/r.git/info/refs?service=git-receive-pack"), "/o/r.git/info/refs");
  EXPECT_EQ(canonical_path("/%6F/r%2egit"), "/o/r.git");        // unreserved escapes decoded
  EXPECT_EQ(canonical_path("/a%20b/%c3%a9"), "/a%20b/%C3%A9");  // others kept, upper case
  EXPECT_EQ(canonical_path("/"), "/");
  EXPECT_EQ(canonical_path("/a/"), "/a/");
  for (const char* bad : {"/a/../b", "/a/./b", "/a/%2e%2E/b", "/a%2Fb", "/a%2fb", "/a\\b", "/a%5Cb", "/a//b",
                          "/a;x=1/b", "/a%3Bb", "/a%zz", "/a%2", "a/b", "", "*", "/a%00"}) {
    EXPECT_FALSE(canonical_path(bad)) << bad;
  }
}

TEST(RequestRules, GlobsMatchWithinAndAcrossSegments) {
  const auto seg = [](std::string_view line) { return rule(line).segments; };
  EXPECT_TRUE(path_matches(seg("allow GET /o/*.git/info/refs"), "/o/r.git/info/refs", false));
  EXPECT_FALSE(path_matches(seg("allow GET /o/*.git/info/refs"), "/o/a/r.git/info/refs", false));
  EXPECT_TRUE(path_matches(seg("allow GET /o/**"), "/o", false));
  EXPECT_TRUE(path_matches(seg("allow GET /o/**"), "/o/", false));
  EXPECT_TRUE(path_matches(seg("allow GET /o/**"), "/o/a/b/c", false));
  EXPECT_FALSE(path_matches(seg("allow GET /o/**"), "/other", false));
  EXPECT_TRUE(path_matches(seg("allow GET /**/refs"), "/a/b/refs", false));
  EXPECT_TRUE(path_matches(seg("allow GET /**/refs"), "/refs", false));
  EXPECT_TRUE(path_matches(seg("allow GET /a/**/b/**/c"), "/a/x/b/y/z/c", false));
  EXPECT_FALSE(path_matches(seg("allow GET /a/*"), "/a/x/y", false));
  EXPECT_TRUE(path_matches(seg("allow GET /"), "/", false));
  EXPECT_FALSE(path_matches(seg("allow GET /"), "/a", false));
  EXPECT_FALSE(path_matches(seg("allow GET /O/R"), "/o/r", false));
  EXPECT_TRUE(path_matches(seg("allow GET /O/R"), "/o/r", true));
  // Many stars and double stars stay fast (no exponential backtracking).
  const std::string path = "/" + std::string(2000, 'a');
  EXPECT_FALSE(path_matches(seg("allow GET /**/**/**/**/*a*a*a*a*a*a*b"), path, false));
}

TEST(RequestRules, FirstMatchWinsAndNoMatchIsARefusal) {
  // "push only to my repos" (github.com) and "read-only" (api.github.com).
  const std::vector<RequestRule> github = {
      rule("allow GET,HEAD /**"), rule("allow POST /o/r.git/git-upload-pack"),
      rule("allow POST /o/r.git/git-receive-pack"), rule("deny * /**", "push only to my repos")};
  EXPECT_TRUE(decide(github, "GET", "/x/y.git/info/refs").allowed);
  EXPECT_TRUE(decide(github, "POST", "/o/r.git/git-receive-pack").allowed);
  const auto other = decide(github, "POST", "/x/y.git/git-receive-pack");
  EXPECT_FALSE(other.allowed);
  EXPECT_EQ(other.index, 3);
  EXPECT_EQ(other.rule->reason, "push only to my repos");
  const std::vector<RequestRule> api = {rule("allow GET,HEAD /**")};
  const auto post = decide(api, "POST", "/repos/o/r/issues");
  EXPECT_FALSE(post.allowed);
  EXPECT_EQ(post.rule, nullptr);
  EXPECT_EQ(post.index, -1);
  EXPECT_TRUE(decide({}, "DELETE", "/anything").allowed);  // no rules: not judged
}

TEST(RequestRules, DenyRulesCatchEveryCaseSpellingAndTrailingSlash) {
  const std::vector<RequestRule> rules = {rule("deny POST /o/secret.git/**"), rule("deny DELETE /admin"),
                                          rule("allow * /**")};
  EXPECT_FALSE(decide(rules, "POST", "/O/Secret.GIT/git-receive-pack").allowed);
  EXPECT_FALSE(decide(rules, "DELETE", "/ADMIN/").allowed);
  EXPECT_TRUE(decide(rules, "DELETE", "/administrator").allowed);
  // Allow rules are exact: a case variant is not allowed by them.
  const std::vector<RequestRule> exact = {rule("allow POST /o/r.git/git-receive-pack")};
  EXPECT_FALSE(decide(exact, "POST", "/O/R.git/git-receive-pack").allowed);
}

}  // namespace
}  // namespace px::broker
