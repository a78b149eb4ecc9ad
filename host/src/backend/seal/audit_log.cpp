#include "backend/seal/audit_log.hpp"

#include <linux/audit.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "backend/seal/sys.hpp"
#include "common/shown.hpp"

namespace px::seal::audit {

namespace {

// Newer than Debian 12's <linux/audit.h>.
constexpr int kLandlockAccess = 1423;
constexpr int kLandlockDomain = 1424;
constexpr int kSyscall = 1300;  // AUDIT_SYSCALL
// Bounds: a run that keeps hitting the seal must not grow the supervisor.
constexpr std::size_t kMaxAccess = 4096;
constexpr std::size_t kMaxComms = 4096;

UniqueFd audit_socket() {
  return UniqueFd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT));
}

constexpr std::size_t kHeader = (sizeof(nlmsghdr) + 3) & ~std::size_t{3};  // NLMSG_HDRLEN, without its casts

// Calls f(header, payload, payload size) for each netlink message in buf[0, n).
template <class F>
void for_each_message(const char* buf, std::size_t n, F f) {
  std::size_t off = 0;
  while (off + kHeader <= n) {
    nlmsghdr h{};
    std::memcpy(&h, buf + off, sizeof h);
    if (h.nlmsg_len < kHeader || off + h.nlmsg_len > n) return;
    f(h, buf + off + kHeader, h.nlmsg_len - kHeader);
    off += (h.nlmsg_len + 3) & ~std::uint32_t{3};
  }
}

// Sends one request and reads the answer of `want` type (or the ack).
Result<std::vector<char>> exchange(int sock, std::uint16_t type, const void* payload, std::size_t size,
                                   std::uint16_t want) {
  std::vector<char> msg(kHeader + ((size + 3) & ~std::size_t{3}), 0);
  nlmsghdr hdr{};
  hdr.nlmsg_len = static_cast<std::uint32_t>(kHeader + size);
  hdr.nlmsg_type = type;
  hdr.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  hdr.nlmsg_seq = 1;
  std::memcpy(msg.data(), &hdr, sizeof hdr);
  if (size) std::memcpy(msg.data() + kHeader, payload, size);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(sock, msg.data(), hdr.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0)
    return sys_error("send an audit request");
  std::vector<char> buf(8192);
  for (int i = 0; i < 4; ++i) {
    pollfd p{sock, POLLIN, 0};
    if (::poll(&p, 1, 500) <= 0) return Error::io("the kernel did not answer an audit request", 0);
    const ssize_t n = ::recv(sock, buf.data(), buf.size(), 0);
    if (n < 0) return sys_error("read the audit answer");
    bool answered = false;
    int error = 0;
    std::vector<char> answer;
    for_each_message(buf.data(), static_cast<std::size_t>(n),
                     [&](const nlmsghdr& h, const char* data, std::size_t len) {
                       if (answered) return;
                       if (h.nlmsg_type == NLMSG_ERROR && len >= sizeof(nlmsgerr)) {
                         nlmsgerr err{};
                         std::memcpy(&err, data, sizeof err);
                         error = -err.error;
                         answered = error != 0 || want == NLMSG_ERROR;
                       } else if (h.nlmsg_type == want) {
                         answer.assign(data, data + len);
                         answered = true;
                       }
                     });
    if (answered && error) return sys_error("audit request", error);
    if (answered) return answer;
  }
  return Error::io("no audit answer", 0);
}

bool all_hex(const std::string& s) {
  if (s.empty() || s.size() % 2) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

std::string unhex(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i + 1 < s.size(); i += 2)
    out += static_cast<char>(std::stoi(s.substr(i, 2), nullptr, 16));
  return out;
}

// "fs.read_file /etc/shadow", "net.connect_tcp daddr=1.1.1.1 dest=443": the
// blockers, then the object (the path, else the other fields but dev and ino).
std::string describe_access(const Record& r) {
  auto get = [&](const char* k) {
    const auto it = r.fields.find(k);
    return it == r.fields.end() ? std::string() : it->second;
  };
  std::string call = get("blockers");
  if (const std::string path = get("path"); !path.empty()) return call + " " + shown(path);
  for (const auto& [k, v] : r.fields) {
    if (k == "domain" || k == "blockers" || k == "dev" || k == "ino") continue;
    call += " " + k + "=" + shown(v);
  }
  return call;
}

}  // namespace

KernelAudit kernel_audit() {
  const UniqueFd sock = audit_socket();
  if (!sock) return KernelAudit::unknown;
  auto answer = exchange(sock.get(), AUDIT_GET, nullptr, 0, AUDIT_GET);
  if (!answer || answer.value().size() < offsetof(audit_status, enabled) + sizeof(std::uint32_t))
    return KernelAudit::unknown;
  audit_status status{};
  std::memcpy(&status, answer.value().data(), std::min(answer.value().size(), sizeof status));
  return status.enabled ? KernelAudit::on : KernelAudit::off;
}

Status set_kernel_audit(bool on) {
  const UniqueFd sock = audit_socket();
  if (!sock) return sys_error("open a netlink audit socket");
  audit_status status{};
  status.mask = AUDIT_STATUS_ENABLED;
  status.enabled = on ? 1 : 0;
  PX_TRY(exchange(sock.get(), AUDIT_SET, &status, sizeof status, NLMSG_ERROR));
  return ok();
}

std::optional<Record> parse_record(int type, const std::string& text) {
  // audit(SECONDS.MILLIS:SERIAL): fields
  if (text.rfind("audit(", 0) != 0) return std::nullopt;
  const auto colon = text.find(':', 6), close = text.find("):", 6);
  if (colon == std::string::npos || close == std::string::npos || colon > close) return std::nullopt;
  Record r;
  r.type = type;
  try {
    r.serial = std::stoull(text.substr(colon + 1, close - colon - 1));
  } catch (...) {
    return std::nullopt;
  }
  std::size_t i = close + 2;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    const auto eq = text.find('=', i);
    if (eq == std::string::npos) break;
    const std::string key = text.substr(i, eq - i);
    std::string value;
    i = eq + 1;
    if (i < text.size() && text[i] == '"') {
      const auto end = text.find('"', i + 1);
      value = text.substr(i + 1, (end == std::string::npos ? text.size() : end) - i - 1);
      i = end == std::string::npos ? text.size() : end + 1;
    } else {
      const auto end = text.find(' ', i);
      value = text.substr(i, (end == std::string::npos ? text.size() : end) - i);
      i = end == std::string::npos ? text.size() : end;
      // Untrusted strings the kernel could not quote come hex-encoded.
      if ((key == "path" || key == "comm" || key == "exe" || key == "name" || key == "ocomm") &&
          all_hex(value))
        value = unhex(value);
    }
    if (key.find(' ') == std::string::npos && !key.empty()) r.fields[key] = value;
  }
  return r;
}

Result<LandlockLog> LandlockLog::subscribe() {
  LandlockLog log;
  log.sock_ = audit_socket();
  if (!log.sock_) return sys_error("open a netlink audit socket");
  // Records arrive while the supervisor is busy elsewhere: room for bursts.
  const int bytes = 4 << 20;
  if (::setsockopt(log.sock_.get(), SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0)
    ::setsockopt(log.sock_.get(), SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = 1U << (AUDIT_NLGRP_READLOG - 1);
  if (::bind(log.sock_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return sys_error("subscribe to the kernel audit log (needs CAP_AUDIT_READ)");
  return log;
}

void LandlockLog::take(const Record& r) {
  const auto field = [&](const char* k) {
    const auto it = r.fields.find(k);
    return it == r.fields.end() ? std::string() : it->second;
  };
  if (r.type == kLandlockAccess) {
    if (access_.size() >= kMaxAccess) {
      ++dropped_;
      return;
    }
    access_.push_back({field("domain"), describe_access(r), r.serial});
  } else if (r.type == kLandlockDomain) {
    if (field("status") == "allocated" && creator_ > 0 && field("pid") == std::to_string(creator_))
      our_domains_.insert(field("domain"));
    if (field("status") == "deallocated") deallocated_.insert(field("domain"));
  } else if (r.type == kSyscall && comm_by_serial_.size() < kMaxComms) {
    if (const std::string comm = field("comm"); !comm.empty()) comm_by_serial_[r.serial] = shown(comm);
  }
}

void LandlockLog::read_available() {
  // One record per datagram; the kernel caps a record near 9 KiB.
  std::vector<char> buf(16384);
  for (;;) {
    const ssize_t n = ::recv(sock_.get(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == ENOBUFS) {
        overflowed_ = true;
        continue;
      }
      return;
    }
    if (static_cast<std::size_t>(n) < kHeader) continue;
    nlmsghdr h{};
    std::memcpy(&h, buf.data(), sizeof h);
    const int type = h.nlmsg_type;
    if (type != kLandlockAccess && type != kLandlockDomain && type != kSyscall) continue;
    // The payload runs to the datagram's end (audit's nlmsg_len has not always counted the header).
    std::string text(buf.data() + kHeader, static_cast<std::size_t>(n) - kHeader);
    text.resize(std::strlen(text.c_str()));
    if (auto record = parse_record(type, text)) take(*record);
  }
}

bool LandlockLog::ours_deallocated() const {
  for (const auto& d : our_domains_)
    if (!deallocated_.count(d)) return false;
  return true;
}

void LandlockLog::finish(Refusals& out) {
  // kauditd sends asynchronously: drain until quiet, and while a domain of the
  // run is known, until the kernel says it was freed (its last record).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(250);
  while (sock_) {
    read_available();
    const bool done = ours_deallocated();
    if (std::chrono::steady_clock::now() >= deadline) break;
    pollfd p{sock_.get(), POLLIN, 0};
    if (::poll(&p, 1, done ? 5 : 50) == 0 && done) break;
  }
  for (const Access& a : access_) {
    if (!our_domains_.count(a.domain)) continue;
    const auto comm = comm_by_serial_.find(a.serial);
    out.add("landlock", a.call, comm == comm_by_serial_.end() ? std::string() : comm->second);
  }
  if (dropped_ || overflowed_)
    out.not_collected.push_back(
        "some Landlock refusals were lost: the kernel audit log ran faster than it was read");
}

}  // namespace px::seal::audit
