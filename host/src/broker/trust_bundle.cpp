#include "broker/trust_bundle.hpp"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <fstream>
#include <sstream>

#include "common/unique_fd.hpp"

namespace px::broker {

std::vector<std::filesystem::path> system_bundle_paths() {
  std::vector<std::filesystem::path> out, seen;
  for (const char* p : kSystemBundlePaths) {
    std::error_code ec;
    const auto real = std::filesystem::canonical(p, ec);
    if (ec || !std::filesystem::is_regular_file(real, ec)) continue;
    if (std::find(seen.begin(), seen.end(), real) != seen.end()) continue;
    seen.push_back(real);
    out.push_back(p);
  }
  return out;
}
namespace {

Status write_new(const std::filesystem::path& path, const std::string& content) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd) return Error::io("create " + path.string(), errno);
  // The umask must not make the bundle unreadable to the run's own identity.
  if (::fchmod(fd.get(), 0644) != 0) return Error::io("chmod " + path.string(), errno);
  std::size_t off = 0;
  while (off < content.size()) {
    const ssize_t n = ::write(fd.get(), content.data() + off, content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error::io("write " + path.string(), errno);
    off += static_cast<std::size_t>(n);
  }
  return ok();
}

}  // namespace

std::pair<std::string, std::size_t> pem_certificates(std::string_view pem) {
  std::pair<std::string, std::size_t> out{{}, 0};
  if (pem.empty() || pem.size() > static_cast<std::size_t>(INT_MAX)) return out;
  BIO* in = BIO_new(BIO_s_mem());
  BIO* written = BIO_new(BIO_s_mem());
  if (in != nullptr && written != nullptr && BIO_write(in, pem.data(), static_cast<int>(pem.size())) > 0) {
    // Each call finds the next CERTIFICATE block, passing over any other (a key).
    while (X509* cert = PEM_read_bio_X509(in, nullptr, nullptr, nullptr)) {
      if (PEM_write_bio_X509(written, cert) == 1) ++out.second;
      X509_free(cert);
    }
    ERR_clear_error();  // the end of the text reads as an error
    char buf[4096];
    for (int n; (n = BIO_read(written, buf, sizeof buf)) > 0;)
      out.first.append(buf, static_cast<std::size_t>(n));
  }
  if (in != nullptr) BIO_free(in);
  if (written != nullptr) BIO_free(written);
  return out;
}

Result<TrustFiles> write_trust_files(const std::filesystem::path& state_dir, const std::string& ca_pem,
                                     const std::filesystem::path& system_bundle,
                                     const std::string& extra_pem) {
  std::ifstream in(system_bundle, std::ios::binary);
  if (!in) {
    return Error::not_found("the system CA bundle " + system_bundle.string() +
                            " cannot be read; install ca-certificates (the run's bundle starts from it).");
  }
  std::ostringstream system;
  system << in.rdbuf();
  std::string bundle = system.str();
  if (bundle.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    return Error::invalid("the system CA bundle " + system_bundle.string() + " holds no certificate.");
  }
  if (!bundle.empty() && bundle.back() != '\n') bundle += '\n';
  bundle += "# Parallex: this run's CA (terminates the hosts of its credentials and request rules)\n";
  bundle += ca_pem;
  if (!extra_pem.empty()) {
    if (bundle.back() != '\n') bundle += '\n';
    bundle += "# Parallex: the CAs you named for this run (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, ...)\n";
    bundle += extra_pem;
  }
  TrustFiles files{state_dir / "run-ca-bundle.crt", state_dir / "run-ca.crt"};
  PX_TRY(write_new(files.bundle, bundle));
  PX_TRY(write_new(files.ca, ca_pem));
  return files;
}

const std::vector<std::string>& trust_variables() {
  // CODEX_CA_CERTIFICATE: Codex (Rust, rustls) reads it before SSL_CERT_FILE,
  // and either replaces its roots: hence a whole bundle, never the CA alone.
  static const std::vector<std::string> names{
      "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS",  "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",    "GIT_SSL_CAINFO",
      "PIP_CERT",      "CODEX_CA_CERTIFICATE", "AWS_CA_BUNDLE",      "CARGO_HTTP_CAINFO", "DENO_CERT"};
  return names;
}

std::vector<std::pair<std::string, std::string>> trust_environment(const std::string& bundle_in_view) {
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& name : trust_variables()) env.emplace_back(name, bundle_in_view);
  return env;
}

}  // namespace px::broker
