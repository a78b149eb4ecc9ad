#include "snapshot/statcache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>

#include "common/unique_fd.hpp"
#include "snapshot/manifest.hpp"
#include "snapshot/objects.hpp"
#include "snapshot/safe_fs.hpp"

namespace px::snapshot {
namespace {
constexpr std::int64_t kRacyMarginNs = 100'000'000;  // wider than any coarse timestamp tick
constexpr const char* kFile = "statcache";
}  // namespace

void StatCache::load(int store_dir, const std::string& source) {
  loaded_.clear();
  kept_.clear();
  next_.clear();
  auto text = read_file_at(store_dir, kFile, "the stat cache");
  if (!text) return;
  std::string_view t = text.value();
  std::string header = "parallex-statcache 1 " + escape_bytes(source) + "\n";
  if (t.substr(0, header.size()) != header) return;
  std::size_t pos = header.size();
  loaded_.reserve(t.size() / 100);
  while (pos < t.size()) {
    std::size_t end = t.find('\n', pos);
    if (end == std::string_view::npos) break;
    std::string_view l = t.substr(pos, end - pos);
    pos = end + 1;
    Item it;
    const char* p = l.data();
    const char* e = l.data() + l.size();
    auto num = [&](auto& v) {
      auto r = std::from_chars(p, e, v);
      if (r.ec != std::errc() || r.ptr >= e || *r.ptr != ' ') return false;
      p = r.ptr + 1;
      return true;
    };
    if (!num(it.dev) || !num(it.ino) || !num(it.size) || !num(it.mtime_ns) || !num(it.ctime_ns)) continue;
    if (e - p < 66 || p[64] != ' ') continue;
    it.hash.assign(p, 64);
    if (!Objects::valid_hash(it.hash)) continue;
    auto path = unescape_bytes(std::string_view(p + 65, static_cast<std::size_t>(e - p - 65)));
    if (!path) continue;
    loaded_.emplace(std::move(path).value(), std::move(it));
  }
}

namespace {
// The file looks untouched since its hash was taken.
template <class Item>
bool unchanged(const Item& i, const struct stat& st) {
  return i.dev == static_cast<std::uint64_t>(st.st_dev) && i.ino == static_cast<std::uint64_t>(st.st_ino) &&
         i.size == static_cast<std::uint64_t>(st.st_size) && i.mtime_ns == mtime_ns(st) &&
         i.ctime_ns == ctime_ns(st);
}
}  // namespace

const std::string* StatCache::lookup(const std::string& rel, const struct stat& st) const {
  auto it = loaded_.find(rel);
  return it != loaded_.end() && unchanged(it->second, st) ? &it->second.hash : nullptr;
}

const std::string* StatCache::reuse(const std::string& rel, const struct stat& st) {
  auto it = loaded_.find(rel);
  if (it == loaded_.end() || !unchanged(it->second, st)) return nullptr;
  kept_.push_back(&*it);
  return &it->second.hash;
}

void StatCache::put(const std::string& rel, const struct stat& st, const std::string& hash) {
  if (const std::string* known = lookup(rel, st); known && *known == hash) {
    kept_.push_back(&*loaded_.find(rel));
    return;
  }
  dirty_ = true;
  next_[rel] = Item{static_cast<std::uint64_t>(st.st_dev),
                    static_cast<std::uint64_t>(st.st_ino),
                    static_cast<std::uint64_t>(st.st_size),
                    mtime_ns(st),
                    ctime_ns(st),
                    hash};
}

Status StatCache::save(int store_dir, int tmp_dir, const std::string& source,
                       std::int64_t walk_start_ns) const {
  // Unchanged tree: the file on disk already says all of this.
  if (!dirty_ && next_.empty() && kept_.size() == loaded_.size()) return ok();
  std::string out = "parallex-statcache 1 " + escape_bytes(source) + "\n";
  out.reserve((next_.size() + kept_.size()) * 140);
  char buf[128];
  auto line = [&](const std::string& rel, const Item& i) {
    if (i.ctime_ns >= walk_start_ns - kRacyMarginNs) return;
    int n =
        std::snprintf(buf, sizeof buf, "%llu %llu %llu %lld %lld ", static_cast<unsigned long long>(i.dev),
                      static_cast<unsigned long long>(i.ino), static_cast<unsigned long long>(i.size),
                      static_cast<long long>(i.mtime_ns), static_cast<long long>(i.ctime_ns));
    out.append(buf, static_cast<std::size_t>(n));
    out += i.hash;
    out += ' ';
    out += escape_bytes(rel);
    out += '\n';
  };
  for (const auto* entry : kept_)
    if (!next_.count(entry->first)) line(entry->first, entry->second);
  for (const auto& [rel, i] : next_) line(rel, i);
  std::string tmp = "c-" + random_hex(8);
  UniqueFd fd(::openat(tmp_dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd) return Error::io("Could not write the snapshot stat cache", errno);
  std::size_t off = 0;
  while (off < out.size()) {
    ssize_t n = ::write(fd.get(), out.data() + off, out.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::unlinkat(tmp_dir, tmp.c_str(), 0);
      return Error::io("Could not write the snapshot stat cache", err);
    }
    off += static_cast<std::size_t>(n);
  }
  if (::renameat(tmp_dir, tmp.c_str(), store_dir, kFile) != 0) {
    int err = errno;
    ::unlinkat(tmp_dir, tmp.c_str(), 0);
    return Error::io("Could not write the snapshot stat cache", err);
  }
  return ok();
}

}  // namespace px::snapshot
