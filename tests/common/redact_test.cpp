// Secrets are redacted by shape wherever text could carry them: each shape
// is replaced, text around it kept, and text without one comes back unchanged.
#include "common/redact.hpp"

#include <gtest/gtest.h>

#include <string>

namespace px {
namespace {

TEST(Redact, EveryShape) {
  const std::string gh = "ghp_" + std::string(36, 'a');
  EXPECT_EQ(redact("token " + gh + " end"), "token [REDACTED:github-token] end");
  EXPECT_EQ(redact("github_pat_" + std::string(40, 'B')), "[REDACTED:github-token]");
  EXPECT_EQ(redact("x sk-ant-api03-" + std::string(30, 'k')), "x [REDACTED:anthropic-key]");
  EXPECT_EQ(redact("sk-proj-" + std::string(30, 'o')), "[REDACTED:openai-key]");
  EXPECT_EQ(redact("id AKIAABCDEFGHIJKLMNOP."), "id [REDACTED:aws-access-key].");
  EXPECT_EQ(redact("aws_secret_access_key = " + std::string(40, 'S')),
            "aws_secret_access_key = [REDACTED:aws-secret-key]");
  EXPECT_EQ(redact("Proxy-Authorization: Basic dXNlcjpwYXNzd29yZA=="),
            "Proxy-Authorization: Basic [REDACTED:credential]");
  EXPECT_EQ(redact("https://user:hunter2@example.com/x"),
            "https://user:[REDACTED:url-password]@example.com/x");
  EXPECT_EQ(redact("a\n-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\nb"),
            "a\n[REDACTED:private-key]\nb");
}

TEST(Redact, OrdinaryTextIsUnchanged) {
  for (const std::string text : {"", "through the high ghost", "gh_pages ghx_1", "sk-short", "mask-ant",
                                 "https://example.com/@user", "Authorization: none", "AKIA too short"})
    EXPECT_EQ(redact(text), text);
}

TEST(Redact, RegisteredSecretsAnywhere) {
  register_secret("s3cr3t-literal-value");
  EXPECT_EQ(redact("pw=s3cr3t-literal-value;"), "pw=[REDACTED:secret];");
  register_secret("short");  // under 8 characters: too common to redact
  EXPECT_EQ(redact("short"), "short");
}

}  // namespace
}  // namespace px
