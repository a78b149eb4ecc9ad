// The run's CA: what it may vouch for, the leaves it mints, the bundle a run
// trusts, and the variables that point programs at it.
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include "broker/run_ca.hpp"
#include "broker/trust_bundle.hpp"
#include "broker_harness.hpp"
#include "contains.hpp"

namespace px::broker::test {
namespace {

using px::test::contains;

// Verifies `leaf` against `ca` alone, for `host`; the X509_V_ error.
int verify(X509* ca, X509* leaf, const std::string& host) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host.c_str(), host.size());
  const int ok = X509_verify_cert(ctx);
  const int err = ok == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return err;
}

std::string text_of(X509* x) {
  BIO* bio = BIO_new(BIO_s_mem());
  X509_print_ex(bio, x, 0, 0);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

TEST(RunCa, ConstrainedToTheTerminatedHostsAndNoAddress) {
  auto ca = RunCa::create({"GitHub.com", "api.anthropic.com"});
  ASSERT_TRUE(ca) << ca.error().message;
  const std::string text = text_of(ca.value()->certificate());
  EXPECT_TRUE(contains(text, "CA:TRUE, pathlen:0")) << text;
  EXPECT_TRUE(contains(text, "X509v3 Name Constraints: critical")) << text;
  EXPECT_TRUE(contains(text, "DNS:github.com")) << text;
  EXPECT_TRUE(contains(text, "DNS:api.anthropic.com")) << text;
  EXPECT_TRUE(contains(text, "IP:0.0.0.0/0.0.0.0")) << text;
  EXPECT_TRUE(contains(text, "ASN1 OID: prime256v1")) << text;
  EXPECT_EQ(ca.value()->hosts(), (std::vector<std::string>{"api.anthropic.com", "github.com"}));
  // Two runs, two CAs.
  auto other = RunCa::create({"github.com"});
  ASSERT_TRUE(other);
  EXPECT_NE(ca.value()->certificate_pem(), other.value()->certificate_pem());
  EXPECT_FALSE(RunCa::create({}));
  EXPECT_FALSE(RunCa::create({"github.com,permitted;DNS:evil.example"}));
}

TEST(RunCa, LeavesAreMintedOncePerHostAndVerify) {
  auto made = RunCa::create({"github.com", "api.github.com"});
  ASSERT_TRUE(made);
  RunCa& ca = *made.value();
  auto leaf = ca.leaf_for("github.com");
  ASSERT_TRUE(leaf) << leaf.error().message;
  EXPECT_EQ(ca.leaf_for("github.com").value().get(), leaf.value().get()) << "cached for the run";
  EXPECT_EQ(verify(ca.certificate(), leaf.value()->certificate.get(), "github.com"), X509_V_OK);
  EXPECT_EQ(verify(ca.certificate(), leaf.value()->certificate.get(), "api.github.com"),
            X509_V_ERR_HOSTNAME_MISMATCH);
  const std::string text = text_of(leaf.value()->certificate.get());
  EXPECT_TRUE(contains(text, "TLS Web Server Authentication")) << text;
  EXPECT_TRUE(contains(text, "CA:FALSE")) << text;
  // Not for a host the CA was not made for, and a leaf minted for one anyway
  // fails verification: the name constraints hold.
  EXPECT_FALSE(ca.leaf_for("evil.example"));
  auto rogue = ca.mint_unchecked_for_test("evil.example");
  ASSERT_TRUE(rogue);
  EXPECT_EQ(verify(ca.certificate(), rogue.value()->certificate.get(), "evil.example"),
            X509_V_ERR_PERMITTED_VIOLATION);
  auto sub = ca.mint_unchecked_for_test("gist.github.com");
  ASSERT_TRUE(sub);
  EXPECT_EQ(verify(ca.certificate(), sub.value()->certificate.get(), "gist.github.com"), X509_V_OK)
      << "a subdomain is inside the constraint; the broker still mints only exact hosts";
}

TEST(TrustBundle, SystemBundlePlusTheRunCaInPrivateState) {
  if (!std::filesystem::exists(kSystemBundle)) GTEST_SKIP() << "no system bundle at " << kSystemBundle;
  auto ca = RunCa::create({"github.com"});
  ASSERT_TRUE(ca);
  const auto dir = temp_dir("bundle");
  const std::string system_before = read_file(kSystemBundle);
  auto files = write_trust_files(dir, ca.value()->certificate_pem());
  ASSERT_TRUE(files) << files.error().message;
  const std::string bundle = read_file(files.value().bundle);
  EXPECT_EQ(bundle.rfind(system_before, 0), 0u) << "the bundle starts with the system's";
  EXPECT_TRUE(contains(bundle, ca.value()->certificate_pem()));
  EXPECT_EQ(read_file(files.value().ca), ca.value()->certificate_pem());
  EXPECT_EQ(read_file(kSystemBundle), system_before) << "the host's trust store is never changed";
  struct stat st {};
  ASSERT_EQ(::stat(files.value().bundle.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_FALSE(contains(bundle, "PRIVATE KEY"));
  // Never reused: a second write into the same folder is refused.
  EXPECT_FALSE(write_trust_files(dir, ca.value()->certificate_pem()));
  auto missing = write_trust_files(dir / "x", ca.value()->certificate_pem(), dir / "no-such-bundle.crt");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(contains(missing.error().message, "install ca-certificates"));
  std::filesystem::remove_all(dir);
}

TEST(TrustBundle, TheVariablesProgramsRead) {
  const auto env = trust_environment("/etc/ssl/certs/ca-certificates.crt");
  for (const char* name : {"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
                           "GIT_SSL_CAINFO", "PIP_CERT"}) {
    const auto it = std::find_if(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; });
    ASSERT_NE(it, env.end()) << name;
    EXPECT_EQ(it->second, "/etc/ssl/certs/ca-certificates.crt");
  }
}

TEST(Broker, ConfigurationErrorsAreClearAndNothingIsHalfMade) {
  const auto dir = temp_dir("config");
  BrokerConfig c;
  c.state_dir = dir;
  HostRequestRules pinned;
  pinned.host = "pinned.example";
  pinned.passthrough = true;
  CredentialSpec cred;
  cred.name = "github";
  cred.source = SecretSource::from_value(kGithubSecret);
  cred.hosts = {"pinned.example"};
  c.hosts = {pinned};
  c.credentials = {cred};
  auto contradiction = Broker::create(c);
  ASSERT_FALSE(contradiction);
  EXPECT_TRUE(contains(contradiction.error().message, "passthrough")) << contradiction.error().message;

  pinned.rules = {parse_request_rule("allow", "GET").value()};
  c.hosts = {pinned};
  c.credentials = {};
  EXPECT_FALSE(Broker::create(c));

  // A failing secret command: no broker, no CA files left behind.
  cred.hosts = {"github.com"};
  cred.source = SecretSource::from_command({"sh", "-c", "exit 3"});
  c.hosts = {};
  c.credentials = {cred};
  auto failed = Broker::create(c);
  ASSERT_FALSE(failed);
  EXPECT_TRUE(contains(failed.error().message, "exit status 3"));
  EXPECT_TRUE(std::filesystem::is_empty(dir));

  // Passthrough alone: nothing terminated, no CA, no variables.
  pinned.rules = {};
  c.hosts = {pinned};
  c.credentials = {};
  auto nothing = Broker::create(c);
  ASSERT_TRUE(nothing) << nothing.error().message;
  EXPECT_FALSE(nothing.value()->terminates("pinned.example"));
  EXPECT_TRUE(nothing.value()->environment().empty());
  EXPECT_TRUE(std::filesystem::is_empty(dir));

  // Credentials: their hosts are terminated, on any port; the run gets placeholders.
  cred.source = SecretSource::from_value(kGithubSecret);
  c.credentials = {cred};
  c.credentials[0].env = {"GH_TOKEN"};
  auto made = Broker::create(c);
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_TRUE(made.value()->terminates("github.com"));
  EXPECT_FALSE(made.value()->terminates("api.github.com"));
  EXPECT_FALSE(made.value()->terminates("pinned.example"));
  std::string gh_token;
  for (const auto& [k, v] : made.value()->environment()) {
    if (k == "GH_TOKEN") gh_token = v;
  }
  EXPECT_EQ(gh_token.size(), kGithubSecret.size());
  EXPECT_NE(gh_token, kGithubSecret);
  // Outside a terminated connection (the proxy asks): a CONNECT target that
  // carries the placeholder as a name label, a plain-HTTP head.
  const auto in_name =
      made.value()->check_outbound("evil.example", gh_token + ".evil.example:443", "CONNECT target");
  ASSERT_TRUE(in_name);
  EXPECT_EQ(in_name->credential, "github");
  EXPECT_FALSE(made.value()->check_outbound("github.com",
                                            "GET / HTTP/1.1\r\nAuthorization: Bearer " + gh_token, "head"));
  const auto report = made.value()->report();
  ASSERT_EQ(report.exfiltration.size(), 1u);
  EXPECT_EQ(report.exfiltration[0].where, "CONNECT target");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace px::broker::test
