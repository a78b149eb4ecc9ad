#include "protect/git_reads.hpp"

#include <fcntl.h>
#include <git2.h>
#include <git2/sys/odb_backend.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "common/libgit2.hpp"
#include "common/unique_fd.hpp"

namespace px::protect {

namespace {

constexpr off_t kMaxIndexBytes = 128 << 20;  // larger than any index git writes for a tree a run could hold
constexpr std::size_t kMaxNamed = 5;         // mismatched objects named in a report

std::string last_error() {
  const git_error* e = git_error_last();
  std::string out = e && e->message ? e->message : "libgit2 gave no reason";
  git_error_clear();
  return out;
}

std::string fd_path(int fd) {
  return "/proc/self/fd/" + std::to_string(fd);
}

std::string hex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

struct OdbFree {
  void operator()(git_odb* o) const { git_odb_free(o); }
};
struct ObjectFree {
  void operator()(git_odb_object* o) const { git_odb_object_free(o); }
};
using Odb = std::unique_ptr<git_odb, OdbFree>;
using OdbObject = std::unique_ptr<git_odb_object, ObjectFree>;

// An object database of the one backend `backend` (a loose folder, a pack).
Odb odb_of(git_odb_backend* backend) {
  git_odb* odb = nullptr;
  if (!backend || git_odb_new(&odb) != 0) return nullptr;
  Odb owned(odb);
  if (git_odb_add_backend(odb, backend, 1) != 0) {
    backend->free(backend);
    return nullptr;
  }
  return owned;
}

// Reads `id` and hashes what it holds. libgit2 compares the two itself on
// reading (strict hash verification, on by default) and fails with
// GIT_EMISMATCH; the hash here says the same whatever that option is.
// Adds to `check`; the object's size, or 0.
std::size_t check_one(git_odb* odb, const git_oid& id, ObjectCheck& check) {
  git_odb_object* raw = nullptr;
  const int rc = git_odb_read(&raw, odb, &id);
  if (rc == GIT_EMISMATCH) {
    if (check.mismatched.size() < kMaxNamed) check.mismatched.push_back(hex(id) + ": " + last_error());
    return 0;
  }
  if (rc != 0) {
    if (check.problem.empty()) check.problem = "the object " + hex(id) + " cannot be read: " + last_error();
    return 0;
  }
  OdbObject object(raw);
  git_oid actual{};
  const std::size_t size = git_odb_object_size(raw);
  if (git_odb_hash(&actual, git_odb_object_data(raw), size, git_odb_object_type(raw)) != 0) {
    if (check.problem.empty()) check.problem = "the object " + hex(id) + " cannot be hashed: " + last_error();
    return size;
  }
  if (std::memcmp(actual.id, id.id, GIT_OID_RAWSZ) != 0 && check.mismatched.size() < kMaxNamed)
    check.mismatched.push_back(hex(id) + " holds the object " + hex(actual));
  return size;
}

}  // namespace

Result<std::vector<std::string>> index_gitlinks(int index_fd) {
  struct stat st {};
  if (::fstat(index_fd, &st) != 0 || !S_ISREG(st.st_mode))
    return Error::invalid("the index is not a file git can read");
  if (st.st_size > kMaxIndexBytes)
    return Error::invalid("the index is larger than " + std::to_string(kMaxIndexBytes >> 20) + " MiB");
  libgit2_init();
  git_index* index = nullptr;
  if (git_index_open(&index, fd_path(index_fd).c_str()) != 0)
    return Error::invalid("libgit2 cannot read the index: " + last_error());
  std::vector<std::string> out;
  const std::size_t count = git_index_entrycount(index);
  for (std::size_t i = 0; i < count; ++i) {
    const git_index_entry* e = git_index_get_byindex(index, i);
    if (e && e->mode == GIT_FILEMODE_COMMIT && e->path) out.emplace_back(e->path);
  }
  git_index_free(index);
  return out;
}

namespace {

// "<type> <size>" of a loose object's header: its type, and the size it
// declares; nullopt for what git would not read.
std::optional<std::pair<std::string, std::uint64_t>> parse_header(const std::string& header) {
  const auto space = header.find(' ');
  if (space == std::string::npos || space + 1 >= header.size() || header.size() - space > 20)
    return std::nullopt;
  std::string type = header.substr(0, space);
  if (type != "blob" && type != "tree" && type != "commit" && type != "tag") return std::nullopt;
  std::uint64_t size = 0;
  for (std::size_t i = space + 1; i < header.size(); ++i) {
    if (header[i] < '0' || header[i] > '9') return std::nullopt;
    size = size * 10 + static_cast<std::uint64_t>(header[i] - '0');
  }
  return std::pair{std::move(type), size};
}

struct ZStream {
  z_stream zs{};
  bool open = false;
  ~ZStream() {
    if (open) inflateEnd(&zs);
  }
};

struct Digest {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Digest() {
    if (md) EVP_MD_CTX_free(md);
  }
};

}  // namespace

ObjectCheck check_loose_object(int objects_fd, const std::string& name, std::uint64_t max_bytes) {
  ObjectCheck check;
  const auto hex_digit = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  if (name.size() != 40 || !std::all_of(name.begin(), name.end(), hex_digit)) {
    check.problem = "its name is not an object id";
    return check;
  }
  UniqueFd dir(
      ::openat(objects_fd, name.substr(0, 2).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  UniqueFd file(
      dir ? ::openat(dir.get(), name.substr(2).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1);
  struct stat st {};
  if (!file || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    check.problem = "it is not a file that can be read";
    return check;
  }
  // Inflated as git does (zlib), and hashed as git names it: SHA-1 of
  // "<type> <size>\0<contents>", the header included.
  ZStream z;
  if (inflateInit(&z.zs) != Z_OK) {
    check.problem = "zlib cannot start";
    return check;
  }
  z.open = true;
  Digest digest;
  if (!digest.md || EVP_DigestInit_ex(digest.md, EVP_sha1(), nullptr) != 1) {
    check.problem = "SHA-1 is not available";
    return check;
  }
  std::string header;  // "<type> <size>" until its NUL
  std::optional<std::pair<std::string, std::uint64_t>> parsed;
  std::uint64_t contents = 0;  // bytes after the header
  unsigned char in[16384], out[65536];
  int rc = Z_OK;
  std::string bad;  // why git would not read it
  while (rc != Z_STREAM_END && bad.empty()) {
    const ssize_t n = ::read(file.get(), in, sizeof in);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      bad = "its compressed stream ends early";
      break;
    }
    z.zs.next_in = in;
    z.zs.avail_in = static_cast<unsigned>(n);
    while (z.zs.avail_in > 0 && rc != Z_STREAM_END && bad.empty()) {
      z.zs.next_out = out;
      z.zs.avail_out = sizeof out;
      rc = inflate(&z.zs, Z_NO_FLUSH);
      const std::size_t got = sizeof out - z.zs.avail_out;
      if ((rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) || (rc == Z_BUF_ERROR && got == 0)) {
        bad = "zlib cannot inflate it";
        break;
      }
      EVP_DigestUpdate(digest.md, out, got);
      std::size_t at = 0;
      for (; !parsed && at < got; ++at) {
        if (out[at] != 0) {
          header += static_cast<char>(out[at]);
          if (header.size() > 32) bad = "its header is not one git writes";
          if (!bad.empty()) break;
          continue;
        }
        parsed = parse_header(header);
        if (!parsed) {
          bad = "its header is not one git writes";
          break;
        }
        // Never inflated past what its header declares, nor past the
        // sweep's bound: a small file can inflate to gigabytes.
        if (parsed->second > max_bytes) {
          check.too_large = true;
          check.read = contents;
          check.problem =
              "it declares " + std::to_string(parsed->second >> 20) + " MiB, more than a sweep reads";
          return check;
        }
      }
      if (!bad.empty()) break;
      contents += got - at;
      if (parsed && contents > parsed->second) bad = "it holds more than its header declares";
    }
  }
  if (bad.empty() && !parsed) bad = "it has no header";
  if (bad.empty() && contents != parsed->second) bad = "it holds less than its header declares";
  unsigned char sum[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (bad.empty() && (EVP_DigestFinal_ex(digest.md, sum, &length) != 1 || length != 20)) bad = "SHA-1 failed";
  if (!bad.empty()) {
    check.problem = "it is not an object git can read: " + bad;
    return check;
  }
  std::string actual;
  static const char* const digits = "0123456789abcdef";
  for (unsigned i = 0; i < length; ++i) {
    actual += digits[sum[i] >> 4];
    actual += digits[sum[i] & 15];
  }
  if (actual != name) check.mismatched.push_back(name + " holds the " + parsed->first + " " + actual);
  check.read = contents;
  check.checked = true;
  return check;
}

ObjectCheck check_pack(int pack_fd, const std::string& idx_name, std::uint64_t max_bytes) {
  ObjectCheck check;
  libgit2_init();
  git_odb_backend* backend = nullptr;
  if (git_odb_backend_one_pack(&backend, (fd_path(pack_fd) + "/" + idx_name).c_str()) != 0) backend = nullptr;
  const Odb odb = odb_of(backend);
  if (!odb) {
    check.problem = "libgit2 cannot read the pack: " + last_error();
    return check;
  }
  std::vector<git_oid> ids;
  const auto collect = [](const git_oid* id, void* payload) {
    static_cast<std::vector<git_oid>*>(payload)->push_back(*id);
    return 0;
  };
  if (git_odb_foreach(odb.get(), collect, &ids) != 0) {
    check.problem = "libgit2 cannot list the pack's objects: " + last_error();
    return check;
  }
  std::uint64_t read = 0;
  for (const auto& id : ids) {
    if (read > max_bytes) {
      check.problem = "it holds more than " + std::to_string(max_bytes >> 20) + " MiB of objects";
      return check;
    }
    read += check_one(odb.get(), id, check);
  }
  check.checked = check.problem.empty();
  return check;
}

}  // namespace px::protect
