#include "supervisor/git_reads.hpp"

#include <git2/sys/odb_backend.h>
#include <sys/stat.h>

#include <cstring>
#include <memory>

#include "common/git2.hpp"

namespace px::supervisor {

namespace {

constexpr off_t kMaxIndexBytes = 128 << 20;  // larger than any index git writes for a tree a run could hold
constexpr std::size_t kMaxNamed = 5;         // mismatched objects named in a report

void init() {
  static const int once = git2::git_libgit2_init();
  (void)once;
}

std::string last_error() {
  const git_error* e = git2::git_error_last();
  std::string out = e && e->message ? e->message : "libgit2 gave no reason";
  git2::git_error_clear();
  return out;
}

std::string fd_path(int fd) {
  return "/proc/self/fd/" + std::to_string(fd);
}

std::string hex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1] = {};
  git2::git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

struct OdbFree {
  void operator()(git_odb* o) const { git2::git_odb_free(o); }
};
struct ObjectFree {
  void operator()(git_odb_object* o) const { git2::git_odb_object_free(o); }
};
using Odb = std::unique_ptr<git_odb, OdbFree>;
using OdbObject = std::unique_ptr<git_odb_object, ObjectFree>;

// An object database of the one backend `backend` (a loose folder, a pack).
Odb odb_of(git_odb_backend* backend) {
  git_odb* odb = nullptr;
  if (!backend || git2::git_odb_new(&odb) != 0) return nullptr;
  Odb owned(odb);
  if (git2::git_odb_add_backend(odb, backend, 1) != 0) {
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
  const int rc = git2::git_odb_read(&raw, odb, &id);
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
  const std::size_t size = git2::git_odb_object_size(raw);
  if (git2::git_odb_hash(&actual, git2::git_odb_object_data(raw), size, git2::git_odb_object_type(raw)) !=
      0) {
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
  init();
  git_index* index = nullptr;
  if (git2::git_index_open(&index, fd_path(index_fd).c_str()) != 0)
    return Error::invalid("libgit2 cannot read the index: " + last_error());
  std::vector<std::string> out;
  const std::size_t count = git2::git_index_entrycount(index);
  for (std::size_t i = 0; i < count; ++i) {
    const git_index_entry* e = git2::git_index_get_byindex(index, i);
    if (e && e->mode == GIT_FILEMODE_COMMIT && e->path) out.emplace_back(e->path);
  }
  git2::git_index_free(index);
  return out;
}

ObjectCheck check_loose_object(int objects_fd, const std::string& name) {
  ObjectCheck check;
  git_oid id{};
  if (name.size() != GIT_OID_HEXSZ || git2::git_oid_fromstr(&id, name.c_str()) != 0) {
    git2::git_error_clear();
    check.problem = "its name is not an object id";
    return check;
  }
  init();
  git_odb_backend* backend = nullptr;
  if (git2::git_odb_backend_loose(&backend, fd_path(objects_fd).c_str(), -1, 0, 0, 0) != 0) backend = nullptr;
  const Odb odb = odb_of(backend);
  if (!odb) {
    check.problem = "libgit2 cannot open the objects folder: " + last_error();
    return check;
  }
  check_one(odb.get(), id, check);
  check.checked = check.problem.empty();
  return check;
}

ObjectCheck check_pack(int pack_fd, const std::string& idx_name, std::uint64_t max_bytes) {
  ObjectCheck check;
  init();
  git_odb_backend* backend = nullptr;
  if (git2::git_odb_backend_one_pack(&backend, (fd_path(pack_fd) + "/" + idx_name).c_str()) != 0)
    backend = nullptr;
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
  if (git2::git_odb_foreach(odb.get(), collect, &ids) != 0) {
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

}  // namespace px::supervisor
