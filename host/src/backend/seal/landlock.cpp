#include "backend/seal/landlock.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "backend/seal/sys.hpp"

// Defined here, not taken from <linux/landlock.h>: the build host's header is
// older (ABI 1-3) than the kernels we run on.
namespace {
constexpr long kSysCreateRuleset = 444;
constexpr long kSysAddRule = 445;
constexpr long kSysRestrictSelf = 446;
constexpr std::uint32_t kCreateRulesetVersion = 1U << 0;

constexpr std::uint64_t kExecute = 1ULL << 0, kWriteFile = 1ULL << 1, kReadFile = 1ULL << 2,
                        kReadDir = 1ULL << 3, kRemoveDir = 1ULL << 4, kRemoveFile = 1ULL << 5,
                        kMakeChar = 1ULL << 6, kMakeDir = 1ULL << 7, kMakeReg = 1ULL << 8,
                        kMakeSock = 1ULL << 9, kMakeFifo = 1ULL << 10, kMakeBlock = 1ULL << 11,
                        kMakeSym = 1ULL << 12, kRefer = 1ULL << 13 /* ABI 2 */,
                        kTruncate = 1ULL << 14 /* ABI 3 */, kIoctlDev = 1ULL << 15 /* ABI 5 */;
constexpr std::uint64_t kBindTcp = 1ULL << 0, kConnectTcp = 1ULL << 1;             // ABI 4
constexpr std::uint64_t kScopeAbstractUnix = 1ULL << 0, kScopeSignal = 1ULL << 1;  // ABI 6
constexpr std::uint32_t kRulePathBeneath = 1, kRuleNetPort = 2;
constexpr std::uint32_t kRestrictLogNewExecOn = 1U << 1;  // ABI 7

struct RulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};
struct __attribute__((packed)) PathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};
struct NetPortAttr {
  std::uint64_t allowed_access;
  std::uint64_t port;
};

int create_ruleset(const RulesetAttr* attr, std::size_t size, std::uint32_t flags) {
  return static_cast<int>(::syscall(kSysCreateRuleset, attr, size, flags));
}

std::uint64_t fs_rights(int abi) {
  std::uint64_t all = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir | kRemoveFile | kMakeChar |
                      kMakeDir | kMakeReg | kMakeSock | kMakeFifo | kMakeBlock | kMakeSym;
  if (abi >= 2) all |= kRefer;
  if (abi >= 3) all |= kTruncate;
  if (abi >= 5) all |= kIoctlDev;
  return all;
}

}  // namespace

namespace px::seal::landlock {

int abi_version() {
  const int abi = create_ruleset(nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : abi;
}

bool supports_scopes() {
  if (abi_version() < 6) return false;
  RulesetAttr attr{kReadFile, 0, kScopeAbstractUnix | kScopeSignal};
  UniqueFd fd(create_ruleset(&attr, sizeof attr, 0));
  return fd.valid();
}

bool supports_tcp() {
  if (abi_version() < 4) return false;
  RulesetAttr attr{kReadFile, kBindTcp | kConnectTcp, 0};
  UniqueFd fd(create_ruleset(&attr, sizeof attr, 0));
  return fd.valid();
}

Result<Ruleset> prepare(const Plan& plan) {
  Ruleset out;
  out.abi = abi_version();
  if (out.abi == 0)
    return Error::unsupported("Landlock is not available in this kernel (landlock_create_ruleset failed)");
  const std::uint64_t handled = fs_rights(out.abi);
  RulesetAttr attr{handled, 0, 0};
  std::size_t attr_size = sizeof(std::uint64_t);  // ABI 1-3 know only the fs field
  if (out.abi >= 4 && plan.tcp_connect_ports) {
    attr.handled_access_net = kBindTcp | kConnectTcp;
    attr_size = 2 * sizeof(std::uint64_t);
  } else if (plan.tcp_connect_ports) {
    out.notes.push_back({run::NoticeKind::weaker_seal,
                         "Landlock ABI " + std::to_string(out.abi) +
                             " cannot limit TCP (needs 4); the network namespace still holds"});
  }
  if (out.abi >= 6) {
    if (plan.scope_abstract_unix) attr.scoped |= kScopeAbstractUnix;
    if (plan.scope_signals) attr.scoped |= kScopeSignal;
    attr_size = sizeof attr;
  } else {
    out.notes.push_back(
        {run::NoticeKind::weaker_seal,
         "Landlock ABI " + std::to_string(out.abi) +
             " cannot scope signals and abstract sockets (needs 6); the pid and network namespaces still hold"});
  }
  out.fd = UniqueFd(create_ruleset(&attr, attr_size, 0));
  if (!out.fd) return sys_error("landlock_create_ruleset (ABI " + std::to_string(out.abi) + ")");

  const std::uint64_t read = kExecute | kReadFile | kReadDir;
  const std::uint64_t write = handled & ~(kMakeChar | kMakeBlock);
  const std::uint64_t device = (kReadFile | kWriteFile | kReadDir | kTruncate | kIoctlDev) & handled;
  for (const auto& rule : plan.paths) {
    // No symlink anywhere in the path: a link planted in a writable tree must
    // not turn a narrow grant into a grant of its target.
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    UniqueFd fd(sys_openat2(AT_FDCWD, rule.path.c_str(), how));
    if (!fd) {
      if (errno != ENOENT && errno != ELOOP)
        out.notes.push_back(
            {run::NoticeKind::seal, "no Landlock rule for " + rule.path.string() + ": " + errno_name(errno)});
      continue;
    }
    std::uint64_t rights = rule.grant == Grant::read    ? read
                           : rule.grant == Grant::write ? write
                           : rule.grant == Grant::list  ? kReadDir
                                                        : device;
    struct stat st {};
    if (::fstat(fd.get(), &st) == 0 && !S_ISDIR(st.st_mode))
      // Directory-only rights on a file are rejected by the kernel (EINVAL).
      rights &= kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;
    PathBeneathAttr pb{rights, fd.get()};
    if (::syscall(kSysAddRule, out.fd.get(), kRulePathBeneath, &pb, 0) != 0)
      return sys_error("landlock_add_rule " + rule.path.string());
  }
  if (attr.handled_access_net != 0) {
    for (std::uint16_t port : *plan.tcp_connect_ports) {
      NetPortAttr np{kConnectTcp, port};
      if (::syscall(kSysAddRule, out.fd.get(), kRuleNetPort, &np, 0) != 0)
        return sys_error("landlock_add_rule connect TCP " + std::to_string(port));
    }
  }
  return out;
}

Status restrict_self(Ruleset& ruleset) {
  const std::uint32_t flags = ruleset.abi >= 7 ? kRestrictLogNewExecOn : 0;
  if (::syscall(kSysRestrictSelf, ruleset.fd.get(), flags) != 0) return sys_error("landlock_restrict_self");
  ruleset.fd.reset();
  return ok();
}

}  // namespace px::seal::landlock
