#pragma once
// The run's certificate authority: an EC P-256 key made in memory (never
// written anywhere), a CA certificate whose name constraints permit only the
// run's terminated hosts (and no IP address), and leaf certificates minted on
// demand per host name and kept for the run. Destroyed with the broker.
#include <openssl/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace px::broker {

struct X509Free {
  void operator()(X509* x) const;
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const;
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

struct Leaf {
  X509Ptr certificate;
  EVP_PKEY* key = nullptr;  // the run's leaf key, owned by the RunCa
};

class RunCa {
 public:
  // `hosts`: the terminated host names (normalized). The CA may vouch for
  // these names and their subdomains only; leaves are minted for these exact
  // names only.
  static Result<std::unique_ptr<RunCa>> create(std::vector<std::string> hosts,
                                               std::chrono::seconds validity = std::chrono::hours(24 * 30));
  ~RunCa();
  RunCa(const RunCa&) = delete;
  RunCa& operator=(const RunCa&) = delete;

  // The CA certificate, PEM.
  const std::string& certificate_pem() const { return ca_pem_; }
  X509* certificate() const { return ca_cert_.get(); }
  // A leaf for `host`, minted on first use and cached. Refused for a host the
  // CA was not made for.
  Result<std::shared_ptr<const Leaf>> leaf_for(std::string_view host);
  const std::vector<std::string>& hosts() const { return hosts_; }

  // Tests only: a leaf for any name, signed by this CA, so that the tests can
  // show that clients refuse a name outside the constraints.
  Result<std::shared_ptr<const Leaf>> mint_unchecked_for_test(std::string_view host);

 private:
  RunCa() = default;
  Result<std::shared_ptr<const Leaf>> mint(std::string_view host);

  std::vector<std::string> hosts_;
  PkeyPtr ca_key_;
  PkeyPtr leaf_key_;  // one key for every leaf of the run: minting is a signature, not a key generation
  X509Ptr ca_cert_;
  std::string ca_pem_;
  std::chrono::system_clock::time_point not_after_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Leaf>, std::less<>> leaves_;  // under mutex_
};

// A fresh EC P-256 key.
Result<PkeyPtr> make_ec_key();
// PEM of a certificate.
std::string to_pem(X509* certificate);

}  // namespace px::broker
