#include "snapshot/objects.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <openssl/evp.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "snapshot/fault.hpp"
#include "snapshot/safe_fs.hpp"

namespace px::snapshot {
namespace {

constexpr std::uint64_t kBlock = 64 * 1024;
constexpr std::uint64_t kChunk = 16 * kBlock;

bool all_zero(const char* p, std::size_t n) {
  std::uint64_t acc = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t v;
    std::memcpy(&v, p + i, 8);
    acc |= v;
    if (acc) return false;
  }
  for (; i < n; ++i) acc |= static_cast<unsigned char>(p[i]);
  return acc == 0;
}

// The encoding: "pxobj1", then per 64 KiB block either 'D'+bytes or, for a run
// of all-zero blocks, 'Z'+count; then 'E'+size. Integers are 8-byte little endian.
class CanonHasher {
 public:
  CanonHasher() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr);
    EVP_DigestUpdate(ctx_.get(), "pxobj1", 6);
  }
  void block(const char* p, std::size_t n) {
    if (all_zero(p, n)) {
      ++zero_run_;
      return;
    }
    flush();
    EVP_DigestUpdate(ctx_.get(), "D", 1);
    EVP_DigestUpdate(ctx_.get(), p, n);
  }
  void zero_blocks(std::uint64_t k) { zero_run_ += k; }
  std::string finish(std::uint64_t size) {
    flush();
    put('E', size);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    EVP_DigestFinal_ex(ctx_.get(), md, &len);
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
      out += hex[md[i] >> 4];
      out += hex[md[i] & 15];
    }
    return out;
  }

 private:
  void flush() {
    if (zero_run_ == 0) return;
    put('Z', zero_run_);
    zero_run_ = 0;
  }
  void put(char tag, std::uint64_t v) {
    unsigned char b[9];
    b[0] = static_cast<unsigned char>(tag);
    for (int i = 0; i < 8; ++i) b[1 + i] = static_cast<unsigned char>(v >> (8 * i));
    EVP_DigestUpdate(ctx_.get(), b, 9);
  }
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
  std::uint64_t zero_run_ = 0;
};

std::uint64_t blocks_in(std::uint64_t from, std::uint64_t to) {
  return (to - from + kBlock - 1) / kBlock;
}

std::atomic<bool> g_no_reflink{false};
std::atomic<bool> g_no_copy_range{false};

int copy_range_rw(int src, int dst, std::uint64_t off, std::uint64_t end) {
  std::vector<char> buf(kChunk);
  while (off < end) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, end - off));
    ssize_t n = ::pread(src, buf.data(), want, static_cast<off_t>(off));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return 0;  // source shrank; the caller notices
    std::size_t done = 0;
    while (done < static_cast<std::size_t>(n)) {
      ssize_t w = ::pwrite(dst, buf.data() + done, static_cast<std::size_t>(n) - done,
                           static_cast<off_t>(off + done));
      if (w < 0) {
        if (errno == EINTR) continue;
        return errno;
      }
      done += static_cast<std::size_t>(w);
    }
    off += static_cast<std::uint64_t>(n);
  }
  return 0;
}

int copy_range(int src, int dst, std::uint64_t off, std::uint64_t end) {
  while (off < end && !g_no_copy_range.load()) {
    loff_t in = static_cast<loff_t>(off), out = static_cast<loff_t>(off);
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(1ull << 30, end - off));
    ssize_t n = ::copy_file_range(src, &in, dst, &out, want, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS) {
        g_no_copy_range = true;
        break;
      }
      return errno;
    }
    if (n == 0) return 0;
    off += static_cast<std::uint64_t>(n);
  }
  return off < end ? copy_range_rw(src, dst, off, end) : 0;
}

}  // namespace

Result<HashOutcome> hash_fd(int fd, std::uint64_t size, const std::function<void(std::uint64_t)>* on_bytes) {
  CanonHasher h;
  HashOutcome out;
  std::vector<char> buf(kChunk);
  std::uint64_t off = 0;
  bool seek_ok = true;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  while (off < size) {
    std::uint64_t data = off;
    if (seek_ok) {
      off_t d = ::lseek(fd, static_cast<off_t>(off), SEEK_DATA);
      if (d < 0 && errno == ENXIO) {
        data = size;
      } else if (d < 0) {
        seek_ok = false;
      } else {
        data = std::min<std::uint64_t>(static_cast<std::uint64_t>(d), size);
      }
    }
    std::uint64_t zero_end = data >= size ? size : data / kBlock * kBlock;
    if (zero_end > off) {
      h.zero_blocks(blocks_in(off, zero_end));
      off = zero_end;
    }
    if (off >= size) break;
    std::uint64_t data_end = size;
    if (seek_ok) {
      off_t e = ::lseek(fd, static_cast<off_t>(off), SEEK_HOLE);
      if (e >= 0) {
        std::uint64_t hole = static_cast<std::uint64_t>(e);
        data_end = std::min(size, (hole + kBlock - 1) / kBlock * kBlock);
        if (data_end <= off) data_end = std::min(size, off + kBlock);
      }
    }
    while (off < data_end) {
      std::size_t want = static_cast<std::size_t>(std::min(kChunk, data_end - off));
      std::size_t got = 0;
      while (got < want) {
        ssize_t n = ::pread(fd, buf.data() + got, want - got, static_cast<off_t>(off + got));
        if (n < 0) {
          if (errno == EINTR) continue;
          return Error::io("read", errno);
        }
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
      }
      if (got < want) {  // shrank under us: hash zeros for the rest so the caller can compare
        out.short_read = true;
        std::memset(buf.data() + got, 0, want - got);
      }
      for (std::size_t b = 0; b < want; b += kBlock)
        h.block(buf.data() + b, std::min<std::size_t>(kBlock, want - b));
      off += want;
      if (on_bytes != nullptr && *on_bytes) (*on_bytes)(want);
    }
  }
  out.hash = h.finish(size);
  return out;
}

std::string hash_bytes(std::string_view data) {
  CanonHasher h;
  for (std::size_t b = 0; b < data.size(); b += kBlock)
    h.block(data.data() + b, std::min<std::size_t>(kBlock, data.size() - b));
  return h.finish(data.size());
}

int copy_content(int src, int dst, std::uint64_t size) {
  if (size == 0) return ::ftruncate(dst, 0) == 0 ? 0 : errno;
  if (!g_no_reflink.load()) {
    if (::ioctl(dst, FICLONE, src) == 0) {
      struct stat st {};
      if (::fstat(dst, &st) == 0 && static_cast<std::uint64_t>(st.st_size) == size) return 0;
      // The source grew or shrank: fall through and copy exactly `size` bytes.
      if (::ftruncate(dst, 0) != 0) return errno;
    } else if (errno == EOPNOTSUPP || errno == EXDEV || errno == EINVAL || errno == ENOTTY ||
               errno == ENOSYS) {
      g_no_reflink = true;
    }
  }
  std::uint64_t off = 0;
  bool seek_ok = true;
  while (off < size) {
    std::uint64_t data = off, end = size;
    if (seek_ok) {
      off_t d = ::lseek(src, static_cast<off_t>(off), SEEK_DATA);
      if (d < 0 && errno == ENXIO) break;
      if (d < 0) {
        seek_ok = false;
      } else {
        data = static_cast<std::uint64_t>(d);
        off_t e = ::lseek(src, d, SEEK_HOLE);
        if (e >= 0) end = std::min<std::uint64_t>(size, static_cast<std::uint64_t>(e));
      }
    }
    if (data >= size) break;
    if (int err = copy_range(src, dst, data, end)) return err;
    off = end;
  }
  return ::ftruncate(dst, static_cast<off_t>(size)) == 0 ? 0 : errno;
}

bool Objects::valid_hash(std::string_view hash) {
  return hash.size() == 64 && std::all_of(hash.begin(), hash.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string Objects::rel_path(std::string_view hash) const {
  std::string p(hash.substr(0, 2));
  p += '/';
  p += hash.substr(2);
  return p;
}

bool Objects::exists(std::string_view hash) const {
  struct stat st {};
  return ::fstatat(objects_, rel_path(hash).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

Status Objects::ensure_fanout(std::string_view hash) {
  unsigned idx = static_cast<unsigned>(std::stoul(std::string(hash.substr(0, 2)), nullptr, 16));
  if (fanout_ready_[idx]) return ok();
  std::string dir(hash.substr(0, 2));
  if (::mkdirat(objects_, dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Error::io("Could not create the object folder " + dir + " in the snapshot store", errno);
  fanout_ready_[idx] = true;
  return ok();
}

Result<std::string> Objects::commit_tmp(const std::string& tmp, std::string_view hash,
                                        const std::string& display) {
  if (auto st = ensure_fanout(hash); !st) {
    ::unlinkat(tmp_, tmp.c_str(), 0);
    return st.error();
  }
  fault_point("object-tmp-written");
  if (::renameat(tmp_, tmp.c_str(), objects_, rel_path(hash).c_str()) != 0) {
    int err = errno;
    ::unlinkat(tmp_, tmp.c_str(), 0);
    return Error::io("Could not store " + display + " in the snapshot store", err);
  }
  fault_point("object-stored");
  return std::string(hash);
}

Result<Objects::Stored> Objects::put_file(int src, const struct stat& st0, const std::string& display,
                                          const std::function<void(std::uint64_t)>* on_bytes) {
  Stored out;
  struct stat st = st0;
  auto same = [](const struct stat& a, const struct stat& b) {
    return a.st_size == b.st_size && mtime_ns(a) == mtime_ns(b) && ctime_ns(a) == ctime_ns(b);
  };
  HashOutcome h;
  for (int attempt = 0;; ++attempt) {
    auto r = hash_fd(src, static_cast<std::uint64_t>(st.st_size), on_bytes);
    if (!r) {
      out.read_error = r.error().message;
      return out;
    }
    h = std::move(r).value();
    struct stat after {};
    if (::fstat(src, &after) != 0) return Error::io("Could not stat " + display, errno);
    if (same(st, after) && !h.short_read) break;
    st = after;
    if (attempt == 2) {
      out.changed = true;
      break;
    }
  }
  if (exists(h.hash)) {
    out.hash = h.hash;
    return out;
  }
  std::string tmp = "obj-" + random_hex(8);
  UniqueFd dst(::openat(tmp_, tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!dst)
    return Error::io("Could not create a temporary object for " + display + " in the snapshot store", errno);
  auto size = static_cast<std::uint64_t>(st.st_size);
  if (int err = copy_content(src, dst.get(), size)) {
    ::unlinkat(tmp_, tmp.c_str(), 0);
    return Error::io("Could not copy " + display + " into the snapshot store", err);
  }
  struct stat after {};
  if (::fstat(src, &after) != 0 || !same(st, after) || out.changed) {
    // The copy may differ from what was hashed; the copy is what we keep, so name it by its own content.
    auto r = hash_fd(dst.get(), size, nullptr);
    if (!r) {
      ::unlinkat(tmp_, tmp.c_str(), 0);
      return Error::io("Could not re-read the stored copy of " + display, errno);
    }
    h = std::move(r).value();
    out.changed = true;
  }
  struct stat dst_st {};
  ::fstat(dst.get(), &dst_st);
  dst.reset();
  PX_TRY_ASSIGN(auto committed, commit_tmp(tmp, h.hash, display));
  out.hash = std::move(committed);
  out.new_bytes = static_cast<std::uint64_t>(dst_st.st_blocks) * 512;
  return out;
}

Result<Objects::Stored> Objects::put_bytes(std::string_view data, const std::string& display) {
  Stored out;
  out.hash = hash_bytes(data);
  if (exists(out.hash)) return out;
  std::string tmp = "obj-" + random_hex(8);
  UniqueFd fd(::openat(tmp_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd)
    return Error::io("Could not create a temporary object for " + display + " in the snapshot store", errno);
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd.get(), data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::unlinkat(tmp_, tmp.c_str(), 0);
      return Error::io("Could not write " + display + " into the snapshot store", err);
    }
    off += static_cast<std::size_t>(n);
  }
  fd.reset();
  PX_TRY(commit_tmp(tmp, out.hash, display));
  out.new_bytes = data.size();
  return out;
}

Result<UniqueFd> Objects::open(std::string_view hash, const std::string& display) const {
  if (!valid_hash(hash)) return Error::invalid("The snapshot names a malformed object for " + display + ".");
  UniqueFd fd(::openat(objects_, rel_path(hash).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    int err = errno;
    if (err == ENOENT)
      return Error::not_found("Object " + std::string(hash) + " for " + display +
                              " is missing from the snapshot store; nothing was changed.");
    return Error::io("Could not open object " + std::string(hash) + " for " + display, err);
  }
  return fd;
}

Status Objects::verify(std::string_view hash, std::uint64_t size, const std::string& display) const {
  PX_TRY_ASSIGN(auto fd, open(hash, display));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error::io("Could not stat object for " + display, errno);
  auto r = hash_fd(fd.get(), static_cast<std::uint64_t>(st.st_size), nullptr);
  if (!r) return Error::io("Could not read object " + std::string(hash) + " for " + display, errno);
  if (r.value().hash != hash || static_cast<std::uint64_t>(st.st_size) != size)
    return Error::conflict(
        "Object " + std::string(hash) + " for " + display +
        " does not match its hash: the snapshot store was changed or damaged. Nothing was restored.");
  return ok();
}

Result<std::string> Objects::read_verified(std::string_view hash, const std::string& display) const {
  PX_TRY_ASSIGN(auto fd, open(hash, display));
  std::string data;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::io("Could not read object for " + display, errno);
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  if (hash_bytes(data) != hash)
    return Error::conflict("The manifest of " + display +
                           " does not match its hash: the snapshot store was changed or damaged.");
  return data;
}

}  // namespace px::snapshot
