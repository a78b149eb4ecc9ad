#pragma once
// Landlock's refusals, read from the kernel audit log. Landlock (ABI >= 7)
// reports a denial only as audit records, so this is best effort: it needs the
// kernel audit on and CAP_AUDIT_READ to read the log's multicast. The records
// are matched to the run by the Landlock domain its command created.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backend/seal/refusals.hpp"
#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px::seal::audit {

enum class KernelAudit { on, off, unknown };
// AUDIT_GET over netlink; unknown without CAP_AUDIT_CONTROL.
KernelAudit kernel_audit();
// AUDIT_SET enabled: for tests, which restore what they found.
Status set_kernel_audit(bool on);

// One audit record: "audit(1700000000.123:42): key=value ..." of `type`.
struct Record {
  int type = 0;
  std::uint64_t serial = 0;
  std::map<std::string, std::string> fields;  // quoted and hex-encoded values decoded
};
std::optional<Record> parse_record(int type, const std::string& text);

class LandlockLog {
 public:
  // Subscribes to the audit log; the error says why refusals cannot be read.
  static Result<LandlockLog> subscribe();

  int fd() const { return sock_.get(); }
  // The process that called landlock_restrict_self (the command, in the
  // supervisor's pid namespace): its domain is the run's.
  void set_domain_creator(pid_t pid) { creator_ = pid; }
  // Reads what the socket holds, without blocking.
  void read_available();
  // After the seal exited: waits briefly for records still queued in the
  // kernel, then adds the run's Landlock refusals to `out`.
  void finish(Refusals& out);

  // For tests: feeds one record as if read from the socket.
  void take(const Record& record);

 private:
  struct Access {
    std::string domain, call;
    std::uint64_t serial;
  };
  bool ours_deallocated() const;

  UniqueFd sock_;
  pid_t creator_ = -1;
  std::set<std::string> our_domains_, deallocated_;
  std::vector<Access> access_;
  std::map<std::uint64_t, std::string> comm_by_serial_;
  std::uint64_t dropped_ = 0;
  bool overflowed_ = false;
};

}  // namespace px::seal::audit
