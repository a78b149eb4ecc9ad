// Brokered credentials without the network: placeholders, secret sources,
// substitution in request heads, and the scanners that look for them.
#include <sys/stat.h>

#include <set>

#include "broker/credentials.hpp"
#include "broker/placeholder.hpp"
#include "broker_harness.hpp"
#include "common/base64.hpp"
#include "common/redact.hpp"
#include "contains.hpp"

namespace px::broker::test {
namespace {

using px::test::contains;

using proxy::test::basic_auth;

std::string shape_signature(std::string_view s) {
  std::string out;
  for (const char c : s) out += (c == '-' || c == '_' || c == '.' || c == '=') ? c : 'x';
  return out;
}

TEST(Placeholder, KeepsTheShapeNeverTheSecret) {
  const std::string pat = "github_pat_11ABCDEFG0123456789abc_" +
                          std::string("AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghijklmnopqrstu");
  const std::string openai = "sk-proj-AbCdEf012345_-GhIjKlMnOpQrStUvWxYz0123456789abcdefgh";
  const std::string hex40 = "0123456789abcdef0123456789abcdef01234567";
  for (const std::string& secret : {kGithubSecret, kAnthropicSecret, pat, openai, hex40}) {
    auto p = make_placeholder("t", secret);
    ASSERT_TRUE(p) << p.error().message;
    const std::string& ph = p.value();
    EXPECT_NE(ph, secret);
    EXPECT_EQ(ph.size(), secret.size());
    EXPECT_EQ(known_prefix(ph), known_prefix(secret)) << ph;
    EXPECT_EQ(shape_of(ph), shape_of(secret));
    EXPECT_EQ(shape_signature(ph), shape_signature(secret)) << ph;
    // Shares no run of 8 characters with the secret after the prefix.
    const std::size_t from = known_prefix(secret).size();
    for (std::size_t i = from; i + 8 <= secret.size(); ++i)
      EXPECT_FALSE(contains(ph, secret.substr(i, 8))) << ph;
  }
  EXPECT_EQ(shape_of(kGithubSecret), "github-token");
  EXPECT_EQ(shape_of(kAnthropicSecret), "anthropic-key");
  EXPECT_EQ(shape_of(openai), "openai-key");
  EXPECT_EQ(known_prefix(kAnthropicSecret), "sk-ant-api03-");
  auto hex = make_placeholder("t", hex40);
  ASSERT_TRUE(hex);
  EXPECT_EQ(hex.value().find_first_not_of("0123456789abcdef"), std::string::npos) << hex.value();
}

TEST(Placeholder, RandomPerRunAndRefusedWhenTooShortOrOdd) {
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) seen.insert(make_placeholder("t", kGithubSecret).value());
  EXPECT_EQ(seen.size(), 50u);
  auto short_one = make_placeholder("short", "ghp_abc123");
  ASSERT_FALSE(short_one);
  EXPECT_TRUE(contains(short_one.error().message, "too short to broker")) << short_one.error().message;
  EXPECT_FALSE(contains(short_one.error().message, "abc123"));
  auto spaced = make_placeholder("spaced", "token with spaces in it and more words here");
  ASSERT_FALSE(spaced);
  EXPECT_TRUE(contains(spaced.error().message, "one token on one line"));
}

// 80 random bits at least, counted exactly at the edges: 20 hex digits are
// 80, 19 are 76; 14 base-62 characters are 83.4, 13 are 77.4.
TEST(Placeholder, TheEightyBitFloorIsCountedExactly) {
  EXPECT_TRUE(make_placeholder("t", std::string(20, 'a')).has_value());
  auto hex19 = make_placeholder("t", std::string(19, 'a'));
  ASSERT_FALSE(hex19);
  EXPECT_TRUE(contains(hex19.error().message, "(76 random bits after its prefix, 80 needed)"))
      << hex19.error().message;
  EXPECT_TRUE(make_placeholder("t", "Zz0123456789Ab").has_value());
  auto b62 = make_placeholder("t", "Zz0123456789A");
  ASSERT_FALSE(b62);
  EXPECT_TRUE(contains(b62.error().message, "(77 random bits after its prefix, 80 needed)"))
      << b62.error().message;
}

TEST(SecretSource, FileCommandAndVariable) {
  const auto dir = temp_dir("secret");
  write_file(dir / "t", kGithubSecret + "\n");
  auto from_file = read_secret("gh", SecretSource::from_file(dir / "t"));
  ASSERT_TRUE(from_file) << from_file.error().message;
  EXPECT_EQ(from_file.value(), kGithubSecret);
  // `pass show` prints the secret on the first line and more below it.
  auto from_command =
      read_secret("gh", SecretSource::from_command({"printf", "%s\\nurl: x\\n", kGithubSecret.c_str()}));
  ASSERT_TRUE(from_command) << from_command.error().message;
  EXPECT_EQ(from_command.value(), kGithubSecret);
  ::setenv("PX_BROKER_TEST_SECRET", kGithubSecret.c_str(), 1);
  auto from_env = read_secret("gh", SecretSource::from_env("PX_BROKER_TEST_SECRET"));
  ::unsetenv("PX_BROKER_TEST_SECRET");
  ASSERT_TRUE(from_env);
  EXPECT_EQ(from_env.value(), kGithubSecret);
  std::filesystem::remove_all(dir);
}

TEST(SecretSource, FailuresNameTheSourceNeverTheSecret) {
  const auto dir = temp_dir("secret-bad");
  write_file(dir / "open", kGithubSecret + "\n", 0644);
  write_file(dir / "two", kGithubSecret + "\nsecond line\n");
  const std::vector<std::pair<SecretSource, std::string>> cases = {
      {SecretSource::from_file(dir / "missing"), "cannot be opened"},
      {SecretSource::from_file(dir / "open"), "chmod 600"},
      {SecretSource::from_file(dir / "two"), "more than one line"},
      {SecretSource::from_command({"px-no-such-secret-helper"}), "could not be started"},
      {SecretSource::from_command({"sh", "-c", "echo 'gpg: decryption failed: No secret key' >&2; exit 2"}),
       "(exit status 2): gpg: decryption failed"},
      {SecretSource::from_command({"true"}), "printed nothing"},
      {SecretSource::from_env("PX_BROKER_TEST_UNSET_VARIABLE"), "is not set"},
      {SecretSource::from_value(""), "holds no secret"},
  };
  for (const auto& [source, expected] : cases) {
    auto r = read_secret("gh", source);
    ASSERT_FALSE(r) << source.describe();
    EXPECT_TRUE(contains(r.error().message, expected)) << r.error().message;
    EXPECT_TRUE(contains(r.error().message, "credential \"gh\"")) << r.error().message;
    EXPECT_FALSE(contains(r.error().message, kGithubSecret));
  }
  // A command that hangs (waiting for a passphrase) is stopped.
  SecretLimits quick;
  quick.command_timeout = std::chrono::milliseconds(300);
  const auto t0 = std::chrono::steady_clock::now();
  auto hung = read_secret("gh", SecretSource::from_command({"sleep", "30"}), quick);
  ASSERT_FALSE(hung);
  EXPECT_TRUE(contains(hung.error().message, "did not finish")) << hung.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  // A helper that leaks the token on stderr does not leak it into the message.
  register_secret(kGithubSecret);
  auto leaky =
      read_secret("gh", SecretSource::from_command({"sh", "-c", "echo " + kGithubSecret + " >&2; exit 1"}));
  ASSERT_FALSE(leaky);
  EXPECT_FALSE(contains(leaky.error().message, kGithubSecret)) << leaky.error().message;
  // An opaque secret (no shape the redactor knows) printed on stdout and on
  // stderr by a helper that then fails: not in the message either.
  const std::string opaque = "3f9a1c7be04d5a6f28c913e7b5d04a6c1e2f8b97";
  auto opaque_leak = read_secret(
      "key",
      SecretSource::from_command({"sh", "-c", "echo " + opaque + "; echo oops " + opaque + " >&2; exit 1"}));
  ASSERT_FALSE(opaque_leak);
  EXPECT_FALSE(contains(opaque_leak.error().message, opaque)) << opaque_leak.error().message;
  EXPECT_TRUE(contains(opaque_leak.error().message, "oops")) << opaque_leak.error().message;
  // Printed on stderr only (stdout empty), an opaque word is masked too; the
  // helper's own words stay, to say what went wrong.
  const std::string stderr_only = "Zk3q9Lm2Xv8Rt4Wy7Bn1Pc6D";
  auto stderr_leak =
      read_secret("key", SecretSource::from_command(
                             {"sh", "-c", "echo 'vault: token " + stderr_only + " expired' >&2; exit 2"}));
  ASSERT_FALSE(stderr_leak);
  EXPECT_FALSE(contains(stderr_leak.error().message, stderr_only)) << stderr_leak.error().message;
  EXPECT_TRUE(contains(stderr_leak.error().message, "vault: token [REDACTED] expired"))
      << stderr_leak.error().message;
  // A FIFO named as the secret file is refused at once, never waited on.
  const std::filesystem::path fifo = std::filesystem::path(dir) / "secret.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto f0 = std::chrono::steady_clock::now();
  auto from_fifo = read_secret("key", SecretSource::from_file(fifo));
  ASSERT_FALSE(from_fifo);
  EXPECT_TRUE(contains(from_fifo.error().message, "is not a regular file")) << from_fifo.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - f0, std::chrono::seconds(2));
  std::filesystem::remove_all(dir);
}

std::string jwt_with_exp(long exp) {
  const std::string payload = "{\"sub\":\"x\",\"exp\":" + std::to_string(exp) + "}";
  std::string b64 = base64_encode(payload);
  while (!b64.empty() && b64.back() == '=') b64.pop_back();
  for (char& c : b64) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return "eyJhbGciOiJSUzI1NiJ9." + b64 + ".c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJl";
}

TEST(Placeholder, AJsonWebTokenKeepsItsClaimsAndLosesItsSignature) {
  const auto secs =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const std::string token = jwt_with_exp(secs + 3600) + "QkFTRTY0VVJMc2lnbmF0dXJlX29mX2FuX1JTMjU2X3Rva2VuXy0";
  EXPECT_EQ(shape_of(token), "jwt");
  auto p = make_placeholder("codex", token);
  ASSERT_TRUE(p) << p.error().message;
  const std::size_t sig = token.rfind('.') + 1;
  EXPECT_EQ(p.value().size(), token.size());
  EXPECT_EQ(p.value().substr(0, sig), token.substr(0, sig)) << "header and claims kept";
  EXPECT_NE(p.value().substr(sig), token.substr(sig));
  EXPECT_EQ(jwt_expiry(p.value()), jwt_expiry(token));
  auto unsigned_token = make_placeholder("codex", jwt_with_exp(secs + 3600).substr(0, sig) + "abc");
  EXPECT_FALSE(unsigned_token);
}

TEST(SecretSource, ExpiredOrMisShapedSecretsAreRefused) {
  const auto now = std::chrono::system_clock::now();
  EXPECT_TRUE(check_secret("gh", kGithubSecret, "github-token", std::nullopt, now));
  auto wrong_shape = check_secret("gh", kAnthropicSecret, "github-token", std::nullopt, now);
  ASSERT_FALSE(wrong_shape);
  EXPECT_TRUE(contains(wrong_shape.error().message, "not shaped like a github-token"))
      << wrong_shape.error().message;
  EXPECT_FALSE(contains(wrong_shape.error().message, kAnthropicSecret));
  auto spaces = check_secret("gh", "ghp_abc def", "", std::nullopt, now);
  ASSERT_FALSE(spaces);
  EXPECT_TRUE(contains(spaces.error().message, "whitespace"));
  auto expired = check_secret("gh", kGithubSecret, "", now - std::chrono::hours(1), now);
  ASSERT_FALSE(expired);
  EXPECT_TRUE(contains(expired.error().message, "expired at"));
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  EXPECT_EQ(jwt_expiry(jwt_with_exp(secs - 60)), secs - 60);
  auto old_jwt = check_secret("codex", jwt_with_exp(secs - 60), "", std::nullopt, now);
  ASSERT_FALSE(old_jwt);
  EXPECT_TRUE(contains(old_jwt.error().message, "sign in again"));
  EXPECT_TRUE(check_secret("codex", jwt_with_exp(secs + 3600), "", std::nullopt, now));
  EXPECT_FALSE(jwt_expiry(kGithubSecret));
  EXPECT_FALSE(jwt_expiry("a.b.c"));
}

// A token's claims are base64url, padded or not; the standard alphabet's
// '+' and '/' are not base64url, so such a token has no expiry to read.
TEST(SecretSource, TheExpiryIsReadFromBase64UrlClaims) {
  // {"exp":1700000000,"n":"???>"}, encoded by Python's base64.urlsafe_b64encode.
  const std::string claims = "eyJleHAiOjE3MDAwMDAwMDAsIm4iOiI_Pz8-In0";
  EXPECT_EQ(jwt_expiry("eyJhbGciOiJSUzI1NiJ9." + claims + ".c2ln"), 1700000000);
  EXPECT_EQ(jwt_expiry("eyJhbGciOiJSUzI1NiJ9." + claims + "=.c2ln"), 1700000000);
  EXPECT_FALSE(jwt_expiry("eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjE3MDAwMDAwMDAsIm4iOiI/Pz8+In0.c2ln"));
  EXPECT_FALSE(jwt_expiry("eyJhbGciOiJSUzI1NiJ9." + claims + "AA.c2ln"));
  EXPECT_FALSE(jwt_expiry("eyJhbGciOiJSUzI1NiJ9.eyJleH AiOjF9.c2ln"));
}

TEST(Credentials, ResolveFailsClosedForTheWholeSet) {
  CredentialSpec ok;
  ok.name = "github";
  ok.source = SecretSource::from_value(kGithubSecret);
  ok.hosts = {"GitHub.com.", "api.github.com"};
  CredentialSpec broken = ok;
  broken.name = "broken";
  broken.source = SecretSource::from_command({"false"});
  auto set = CredentialSet::resolve({ok, broken});
  ASSERT_FALSE(set);
  EXPECT_TRUE(contains(set.error().message, "credential \"broken\""));
  auto good = CredentialSet::resolve({ok});
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_EQ(good.value().credentials()[0].hosts, (std::vector<std::string>{"github.com", "api.github.com"}));
  // Secrets and placeholders are registered with the redactor.
  const std::string ph = good.value().credentials()[0].placeholder;
  EXPECT_FALSE(contains(redact("x " + ph + " y"), ph));
  EXPECT_FALSE(contains(redact("x " + kGithubSecret + " y"), kGithubSecret));

  CredentialSpec bad_host = ok;
  bad_host.hosts = {"https://github.com/"};
  EXPECT_FALSE(CredentialSet::resolve({bad_host}));
  CredentialSpec no_host = ok;
  no_host.hosts = {};
  EXPECT_FALSE(CredentialSet::resolve({no_host}));
  CredentialSpec framing = ok;
  framing.headers = {"Content-Length"};
  EXPECT_FALSE(CredentialSet::resolve({framing}));
  EXPECT_FALSE(CredentialSet::resolve({ok, ok}));  // the same name twice
  EXPECT_FALSE(CredentialSet::from_resolved(
      {Credential{"x", kGithubSecret, kGithubSecret + "1", {"a.test"}, {}, {}}}));
}

CredentialSet test_set() {
  Credential gh{"github",
                kGithubSecret,
                make_placeholder("github", kGithubSecret).value(),
                {"github.com", "api.github.com"},
                {},
                {"GH_TOKEN"}};
  Credential ant{
      "anthropic",           kAnthropicSecret,      make_placeholder("anthropic", kAnthropicSecret).value(),
      {"api.anthropic.com"}, {"anthropic-api-key"}, {}};
  return CredentialSet::from_resolved({gh, ant}).value();
}

proxy::Request request(std::string target, std::vector<proxy::Header> headers) {
  proxy::Request r;
  r.method = "GET";
  r.target = std::move(target);
  r.version = "HTTP/1.1";
  r.headers = std::move(headers);
  return r;
}

TEST(Credentials, SwapsInBoundHeadersOnly) {
  const CredentialSet set = test_set();
  const std::string gh = set.credentials()[0].placeholder;
  const std::string ant = set.credentials()[1].placeholder;
  auto r = request("/user", {{"Authorization", "token " + gh}, {"X-Other", gh}, {"x-api-key", ant}});
  auto out = set.apply_to_head("api.github.com", r);
  // The anthropic key in x-api-key going to api.github.com is refused first.
  ASSERT_TRUE(out.exfiltration);
  EXPECT_EQ(out.exfiltration->credential, "anthropic");
  EXPECT_EQ(out.exfiltration->where, "header x-api-key");
  EXPECT_FALSE(contains(r.headers[0].value, kGithubSecret)) << "a refused request is left untouched";

  auto r2 = request("/user", {{"Authorization", "token " + gh}, {"X-Other", gh}});
  auto out2 = set.apply_to_head("api.github.com", r2);
  ASSERT_FALSE(out2.exfiltration);
  EXPECT_EQ(out2.substituted, (std::vector<std::string>{"github"}));
  EXPECT_EQ(r2.headers[0].value, "token " + kGithubSecret);
  EXPECT_EQ(r2.headers[1].value, gh) << "only credential headers are swapped";

  auto r3 = request("/v1/messages", {{"x-api-key", ant}, {"Anthropic-Api-Key", ant}});
  ASSERT_FALSE(set.apply_to_head("api.anthropic.com", r3).exfiltration);
  EXPECT_EQ(r3.headers[0].value, kAnthropicSecret);
  EXPECT_EQ(r3.headers[1].value, kAnthropicSecret);

  auto basic = request("/o/r.git/info/refs", {{"Authorization", basic_auth("x-access-token", gh)}});
  ASSERT_FALSE(set.apply_to_head("github.com", basic).exfiltration);
  EXPECT_EQ(basic.headers[0].value, basic_auth("x-access-token", kGithubSecret));
}

TEST(Credentials, FindsPlaceholdersGoingElsewhereInEveryForm) {
  const CredentialSet set = test_set();
  const std::string gh = set.credentials()[0].placeholder;
  std::string pct;
  for (const char c : gh) {
    char b[4];
    std::snprintf(b, sizeof b, "%%%02x", static_cast<unsigned char>(c));
    pct += b;
  }
  const std::vector<std::pair<proxy::Request, std::string>> cases = {
      {request("/?t=" + gh, {}), "request target"},
      {request("/?t=" + pct, {}), "request target"},
      {request("/", {{"Authorization", "Bearer " + gh}}), "header authorization"},
      {request("/", {{"Authorization", basic_auth("u", gh)}}), "header authorization"},
      {request("/", {{"Authorization", basic_auth("ab", gh)}}), "header authorization"},
      {request("/", {{"Cookie", "a=" + basic_auth("abc", gh).substr(6)}}), "header cookie"},
      {request("/", {{"X-Hex",
                      [&] {
                        std::string h;
                        for (const char c : gh) {
                          char b[3];
                          std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(c));
                          h += b;
                        }
                        return h;
                      }()}}),
       "header x-hex"},
      {request("/", {{"X-Real", kGithubSecret}}), "header x-real"},
  };
  for (auto [r, where] : cases) {
    const auto out = set.apply_to_head("evil.example", r);
    ASSERT_TRUE(out.exfiltration) << where << " " << r.target;
    EXPECT_EQ(out.exfiltration->where, where);
    EXPECT_EQ(out.exfiltration->credential, "github");
  }
  auto clean = request("/search?q=ghp_", {{"Authorization", "Bearer something-else-entirely"}});
  EXPECT_FALSE(set.apply_to_head("evil.example", clean).exfiltration);
  EXPECT_FALSE(set.find_outbound("github.com", gh, "x")) << "bound: not an exfiltration";
  EXPECT_TRUE(set.find_outbound("gist.github.com", gh, "x")) << "hosts are exact names";
}

TEST(Credentials, BodyScannerFindsAPlaceholderSplitAcrossPieces) {
  const CredentialSet set = test_set();
  const std::string gh = set.credentials()[0].placeholder;
  const std::string body = std::string(5000, 'a') + gh + std::string(100, 'b');
  for (std::size_t piece : {1u, 3u, 7u, 64u, 4096u}) {
    StreamScanner s = set.body_scanner("evil.example");
    int tag = -1;
    for (std::size_t at = 0; at < body.size() && tag < 0; at += piece)
      tag = s.feed(std::string_view(body).substr(at, piece));
    EXPECT_EQ(tag, 0) << "piece " << piece;
  }
  StreamScanner none = set.body_scanner("evil.example");
  EXPECT_EQ(none.feed(std::string(10000, 'x')), -1);
  EXPECT_TRUE(set.body_scanner("api.anthropic.com").find_in(gh) == 0)
      << "github's placeholder is foreign there";
}

TEST(Credentials, ResponseReplacerHidesAnEchoedSecretWithoutDelayingOtherBytes) {
  const CredentialSet set = test_set();
  const std::string gh = set.credentials()[0].placeholder;
  const std::string text = "data: {\"echo\":\"" + kGithubSecret + "\"}\n\n";
  for (std::size_t piece : {1u, 5u, 13u, 1000u}) {
    StreamReplacer r = set.response_replacer("api.github.com");
    std::string out;
    for (std::size_t at = 0; at < text.size(); at += piece) {
      std::string part = text.substr(at, piece);
      r.feed(part);
      out += part;
    }
    out += r.finish();
    EXPECT_EQ(out.size(), text.size());
    EXPECT_FALSE(contains(out, kGithubSecret)) << out;
    EXPECT_TRUE(contains(out, gh));
  }
  // An event that ends in "\n\n" is passed on whole at once: nothing held back.
  StreamReplacer r = set.response_replacer("api.github.com");
  std::string event = "data: {\"delta\":\"hi\"}\n\n";
  r.feed(event);
  EXPECT_EQ(event, "data: {\"delta\":\"hi\"}\n\n");
  // A header value, whole.
  std::string header = "token " + kGithubSecret;
  EXPECT_EQ(r.replace_in(header), 1u);
  EXPECT_EQ(header, "token " + gh);
}

}  // namespace
}  // namespace px::broker::test
