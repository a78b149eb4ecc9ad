#pragma once
// How a run comes to trust its CA without anything else new: a bundle = the
// system bundle + the run's CA certificate, written to the run's private
// state. The seal mounts it over the system bundle path inside the run's view
// only; the host's trust store is never changed. Programs that carry roots of
// their own read the variables below.
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.hpp"

namespace px::broker {

// Debian's (and Ubuntu's) bundle; other distributions' paths are in docs/broker.md.
inline constexpr const char* kSystemBundle = "/etc/ssl/certs/ca-certificates.crt";
// Where distributions keep the system bundle: Debian and Ubuntu, Fedora and
// RHEL, Alpine and Arch (and macOS), openSUSE.
inline constexpr const char* kSystemBundlePaths[] = {kSystemBundle, "/etc/pki/tls/certs/ca-bundle.crt",
                                                     "/etc/ssl/cert.pem", "/etc/ssl/ca-bundle.pem"};

// The system bundle paths that exist on this machine, in the order above
// (a link to another of them is left out: covering the file covers the link).
std::vector<std::filesystem::path> system_bundle_paths();

struct TrustFiles {
  std::filesystem::path bundle;  // system bundle + run CA (mode 0644: certificates only, no key)
  std::filesystem::path ca;      // the run CA alone
};

// Writes both files into `state_dir` (which must exist). `system_bundle` is
// read, never written. Files are created fresh (O_EXCL): a run never reuses
// another run's bundle. `extra_pem`: the user's own CAs (certificates only,
// from pem_certificates), after the run's CA.
Result<TrustFiles> write_trust_files(const std::filesystem::path& state_dir, const std::string& ca_pem,
                                     const std::filesystem::path& system_bundle = kSystemBundle,
                                     const std::string& extra_pem = {});

// The certificates in a PEM text (a file a user names in NODE_EXTRA_CA_CERTS
// or SSL_CERT_FILE), each read and written again by OpenSSL, and how many:
// nothing but certificates comes out, whatever else the text holds (a private
// key beside them stays out).
std::pair<std::string, std::size_t> pem_certificates(std::string_view pem);

// The variables that make programs read the bundle at `bundle_in_view` (the
// path the run sees, by default the system bundle path the seal mounts it
// over): SSL_CERT_FILE (OpenSSL, Go, rustls-native-certs), NODE_EXTRA_CA_CERTS,
// REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, GIT_SSL_CAINFO, PIP_CERT, and a few more.
std::vector<std::pair<std::string, std::string>> trust_environment(
    const std::string& bundle_in_view = kSystemBundle);

// The names trust_environment() sets: where a user names CAs of their own,
// which the run's bundle then holds too.
const std::vector<std::string>& trust_variables();

}  // namespace px::broker
