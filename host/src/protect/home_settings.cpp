#include "protect/home_settings.hpp"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/clock.hpp"
#include "common/paths.hpp"
#include "common/read_file.hpp"
#include "common/redact.hpp"
#include "common/sha256.hpp"

namespace px::protect {

using policy::HomeFile;
using policy::HomeFormat;
using policy::HomeKind;

namespace {

// A harness's file larger than this is not copied for a run: it stays
// read-only there (its settings are never that large; such a file is not one).
constexpr std::size_t kMaxCopy = 16u << 20;

std::optional<std::string> read_optional(const fs::path& file) {
  auto text = read_regular_file(file, {.max_bytes = kMaxCopy, .follow_links = false});
  if (!text) return std::nullopt;
  return std::move(text).value();
}

std::string home_relative(const fs::path& path) {
  const fs::path home = user_home();
  if (!home.empty() && is_within(path, home) && path != home)
    return "~/" + path.lexically_relative(home).string();
  return path.string();
}

Status write_bytes(const fs::path& file, const std::string& bytes, mode_t mode) {
  UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd) return Error::io("create " + file.string(), errno);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error::io("write " + file.string(), errno);
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return Error::io("fsync " + file.string(), errno);
  return ok();
}

// Makes the folders above `file` that are missing (0700), never through a link.
Status make_parents(const fs::path& file) {
  std::vector<fs::path> missing;
  for (fs::path dir = file.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return Error::invalid(dir.string() + " is not a folder");
      break;
    }
    missing.push_back(dir);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it)
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) return Error::io("create " + it->string(), errno);
  return ok();
}

// Replaces the user's `file` with `bytes` by a rename, keeping its mode (a
// new file gets `new_mode`), only if it still holds `expected` (none: absent)
// just before: another session that wrote it meanwhile is never overwritten
// unseen. Returns false when it changed (the caller reads it again and merges
// again).
Result<bool> replace_if_unchanged(const fs::path& file, const std::string& bytes,
                                  const std::optional<std::string>& expected, mode_t new_mode = 0600) {
  struct stat st {};
  mode_t mode = new_mode;
  if (::lstat(file.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode))
      return Error::invalid(file.string() +
                            " is not a regular file (a link or a folder): it was left as it is");
    mode = st.st_mode & 0777;
  }
  PX_TRY(make_parents(file));
  const fs::path temp = file.parent_path() /
                        ("." + file.filename().string() + ".parallex-" + std::to_string(::getpid()) + ".tmp");
  ::unlink(temp.c_str());
  if (auto written = write_bytes(temp, bytes, mode); !written) {
    ::unlink(temp.c_str());
    return written.error();
  }
  if (read_optional(file) != expected) {
    ::unlink(temp.c_str());
    return false;
  }
  if (::rename(temp.c_str(), file.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return Error::io("replace " + file.string(), err);
  }
  return true;
}

// Merges `data` into the user's JSON `file` as it is now, retrying when
// another writer got there first.
Status merge_json(const fs::path& file, const std::vector<policy::home::KeyChange>& data) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    const auto current = read_optional(file);
    PX_TRY_ASSIGN(auto doc, policy::home::read_document(current.value_or(""), HomeFormat::json));
    policy::home::apply_changes(doc, data);
    PX_TRY_ASSIGN(bool done, replace_if_unchanged(file, policy::home::render_json(doc), current));
    if (done) return ok();
  }
  return Error::conflict(file.string() + " kept changing while the run's data was merged into it");
}

std::vector<std::string> key_names(const std::vector<policy::home::KeyChange>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes)
    out.push_back(c.key.empty() ? "(the whole file)" : policy::describe_key(c.key));
  return out;
}

Status copy_file_to(const fs::path& from, const fs::path& to) {
  auto text = read_regular_file(from, {.max_bytes = kMaxCopy, .follow_links = false});
  if (!text) return text.error();
  PX_TRY(make_parents(to));
  ::unlink(to.c_str());
  return write_bytes(to, text.value(), 0600);
}

bool is_whiteout(const struct stat& st) {
  return S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0);
}

bool is_opaque(const fs::path& dir) {
  char value[4] = {};
  const ssize_t n = ::lgetxattr(dir.c_str(), "user.overlay.opaque", value, sizeof value);
  return n > 0 && value[0] == 'y';
}

// A small line diff (longest common subsequence) for a preview.
std::vector<std::string> line_diff(const std::string& before, const std::string& after) {
  auto split = [](const std::string& s) {
    std::vector<std::string> lines;
    std::istringstream in(s);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  };
  const auto a = split(before), b = split(after);
  if (a.size() * b.size() > 4'000'000) return {"  (too large to show line by line)"};
  std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (std::size_t i = a.size(); i-- > 0;)
    for (std::size_t j = b.size(); j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<std::string> out;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      ++i, ++j;
    } else if (j < b.size() && (i == a.size() || lcs[i][j + 1] >= lcs[i + 1][j])) {
      out.push_back("+ " + redact(b[j++]));
    } else {
      out.push_back("- " + redact(a[i++]));
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<HomeSettings> HomeSettings::prepare(const policy::Policy& policy, const fs::path& private_dir,
                                                    const fs::path& record_dir,
                                                    std::vector<run::Notice>& notes) {
  if (policy.home_files().empty() || private_dir.empty()) return nullptr;
  std::unique_ptr<HomeSettings> h(new HomeSettings());
  h->policy_ = &policy;
  h->root_ = private_dir / "home";
  h->held_dir_ = h->root_ / "held";
  h->record_dir_ = record_dir;
  std::error_code ec;
  fs::create_directories(h->held_dir_, ec);
  if (ec) {
    notes.push_back({run::NoticeKind::seal,
                     "the harness's settings in your home are read-only in this run: " + h->root_.string() +
                         " could not be made (" + ec.message() + ")"});
    for (const auto& f : policy.home_files())
      if (f.guarded()) h->layers_.push_back({backend::HomeLayer::Kind::read_only, f.path, {}, {}, {}});
    return h;
  }
  ::chmod(h->root_.c_str(), 0700);
  h->make_missing_folders();
  // Folders shown as overlays take what lies inside them along: a file there
  // is the overlay's (its JSON or TOML keys settled from the upper layer), so
  // the harness may replace it by a rename as it likes.
  std::vector<fs::path> overlaid;
  for (const auto& f : policy.home_files()) {
    struct stat st {};
    if (f.guarded() && f.directory && policy.may_write(f.path) && ::lstat(f.path.c_str(), &st) == 0 &&
        S_ISDIR(st.st_mode))
      overlaid.push_back(f.path);
  }
  const auto inside_an_overlay = [&](const fs::path& p) {
    return std::any_of(overlaid.begin(), overlaid.end(),
                       [&](const fs::path& o) { return o != p && is_within(p, o); });
  };
  int n = 0;
  for (const auto& f : policy.home_files()) {
    if (!f.guarded() || !policy.may_write(f.path) || inside_an_overlay(f.path)) continue;
    const fs::path dir = h->root_ / std::to_string(n++);
    struct stat st {};
    const bool exists = ::lstat(f.path.c_str(), &st) == 0;
    const auto read_only = [&](const std::string& why) {
      h->layers_.push_back({backend::HomeLayer::Kind::read_only, f.path, {}, {}, {}});
      notes.push_back({run::NoticeKind::seal, home_relative(f.path) + " is read-only in this run: " + why});
    };
    if (exists && S_ISREG(st.st_mode) && !f.directory) {
      auto base = read_optional(f.path);
      if (!base) {
        read_only("it could not be read to make the run's copy (larger than 16 MiB, or unreadable)");
        continue;
      }
      if (!fs::create_directories(dir, ec) && ec) {
        read_only("its copy could not be made (" + ec.message() + ")");
        continue;
      }
      const fs::path copy = dir / f.path.filename();
      if (auto w = write_bytes(copy, *base, 0600); !w) {
        read_only(w.error().message);
        continue;
      }
      h->copies_.push_back({&f, f.path, copy, std::move(base)});
      h->layers_.push_back({backend::HomeLayer::Kind::copy, f.path, copy, {}, {}});
    } else if (exists && S_ISDIR(st.st_mode) && f.directory) {
      Overlay o{&f, f.path, dir / "upper", {}};
      fs::create_directories(dir / "upper", ec);
      if (!ec) fs::create_directories(dir / "work", ec);
      if (ec) {
        read_only("its layer could not be made (" + ec.message() + ")");
        continue;
      }
      for (const auto& inner : policy.home_files())
        if (inner.guarded() && !inner.directory && inner.format != HomeFormat::whole &&
            inner.path != f.path && is_within(inner.path, f.path))
          if (auto base = read_optional(inner.path)) o.bases[inner.path] = std::move(*base);
      h->layers_.push_back({backend::HomeLayer::Kind::overlay,
                            f.path,
                            {},
                            dir / "upper",
                            dir / "work",
                            f.kind == HomeKind::scratch});
      h->overlays_.push_back(std::move(o));
    } else if (exists) {
      // A link (a dotfiles manager's) or a file where a folder is declared:
      // the run gets it read-only rather than a copy that could not be put back.
      read_only(S_ISLNK(st.st_mode)
                    ? "it is a symbolic link (the run's writes could not be put back through it)"
                    : "it is not the " + std::string(f.directory ? "folder" : "file") +
                          " the harness keeps there");
    } else {
      const fs::path parent = f.path.parent_path();
      struct stat pst {};
      const bool parent_exists = ::lstat(parent.c_str(), &pst) == 0;
      if (parent_exists && S_ISDIR(pst.st_mode) && policy.may_write(parent)) {
        // In a folder the harness writes for real (its databases must be
        // shared with its other sessions): moved aside at the run's end.
        h->missing_.push_back({&f});
      } else if (!parent_exists && policy.may_write(parent)) {
        // Inside a state folder that is new: the seal's own, handed back whole.
      } else if (!f.directory && f.format == HomeFormat::json) {
        // A JSON file the user has none of: the run starts from an empty one,
        // so the harness can write it (and its first start leaves a valid file).
        if (!fs::create_directories(dir, ec) && ec) continue;
        const fs::path copy = dir / f.path.filename();
        if (!write_bytes(copy, "{}\n", 0600)) continue;
        h->copies_.push_back({&f, f.path, copy, std::nullopt});
        h->layers_.push_back({backend::HomeLayer::Kind::copy, f.path, copy, {}, {}});
      }
    }
  }
  if (h->layers_.empty() && h->missing_.empty() &&
      std::none_of(policy.home_files().begin(), policy.home_files().end(),
                   [](const HomeFile& f) { return f.guarded(); }))
    return nullptr;
  return h;
}

HomeSettings::~HomeSettings() {
  stop_watch();
}

void HomeSettings::make_missing_folders() {
  // A guarded folder the harness has not made yet, in a folder the run writes
  // for real (~/.codex is there, ~/.codex/skills or ~/.codex/tmp is not): made
  // empty now, so that the run's own layer has a place, and removed at the end
  // when it is still empty. Moved aside the moment it appeared instead (as a
  // missing file is), what the harness wrote there would vanish under it
  // mid-session; under its overlay, a mount point, the run can neither write
  // the user's folder nor put another in its place. Parents first: a folder
  // inside one made here rides on that one's overlay.
  std::vector<const HomeFile*> folders;
  for (const auto& f : policy_->home_files())
    if (f.guarded() && f.directory && policy_->may_write(f.path)) folders.push_back(&f);
  std::sort(folders.begin(), folders.end(), [](const HomeFile* a, const HomeFile* b) {
    return std::distance(a->path.begin(), a->path.end()) < std::distance(b->path.begin(), b->path.end());
  });
  for (const HomeFile* f : folders) {
    const bool inside_guarded = std::any_of(folders.begin(), folders.end(), [&](const HomeFile* g) {
      return g != f && is_within(f->path, g->path) && ::access(g->path.c_str(), F_OK) == 0;
    });
    struct stat st {};
    if (inside_guarded || ::lstat(f->path.c_str(), &st) == 0 || errno != ENOENT) continue;
    const fs::path parent = f->path.parent_path();
    if (::lstat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || !policy_->may_write(parent)) continue;
    if (::mkdir(f->path.c_str(), 0700) == 0) made_.push_back(f->path);
  }
}

void HomeSettings::move_aside_missing(bool may_copy, std::vector<run::Notice>* notices) {
  std::lock_guard lock(move_mu_);
  for (const auto& m : missing_) {
    struct stat st {};
    if (::lstat(m.file->path.c_str(), &st) != 0) continue;
    // Into the record folder: on the home's filesystem as a rule, so a
    // rename, which takes what the run made whole, even while it runs.
    const fs::path to = record_dir_ / "home-moved" / m.file->path.relative_path();
    std::error_code ec;
    fs::create_directories(to.parent_path(), ec);
    fs::rename(m.file->path, to, ec);
    if (!ec) continue;
    if (!may_copy) continue;  // another filesystem: copied at the end, when nothing of the run writes
    ec.clear();
    fs::copy(m.file->path, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
    std::error_code rm;
    if (!ec) fs::remove_all(m.file->path, rm);
    if ((ec || rm) && notices)
      notices->push_back({run::NoticeKind::alert,
                          "the run made " + home_relative(m.file->path) + " (" + m.file->reason +
                              ") and it could not be moved aside: " + (ec ? ec.message() : rm.message()) +
                              ". Review it before you start the harness outside a seal"});
  }
}

void HomeSettings::start_watch() {
  if (missing_.empty()) return;
  inotify_ = UniqueFd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify_) return;
  for (const auto& m : missing_)
    ::inotify_add_watch(inotify_.get(), m.file->path.parent_path().c_str(),
                        IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW);
  // No last drain: the end of the run moves aside what is left (settle).
  const auto started = watch_.start(inotify_.get(), [this] {
    alignas(inotify_event) char buf[4096];
    while (::read(inotify_.get(), buf, sizeof buf) > 0) {
    }
    move_aside_missing(/*may_copy=*/false, nullptr);
  });
  if (!started) inotify_.reset();
}

void HomeSettings::stop_watch() {
  watch_.stop();
}

fs::path HomeSettings::next_held_path() {
  return record_dir_ / "home" / std::to_string(held_count_++);
}

HeldChange& HomeSettings::folder_entry(const HomeFile& decl, const fs::path& path, Settled& out) {
  (void)path;
  for (auto& c : out.held)
    if (c.path == decl.path && c.kind == "folder") return c;
  HeldChange c;
  c.path = decl.path;
  c.kind = "folder";
  struct stat st {};
  const bool made = std::find(made_.begin(), made_.end(), decl.path) != made_.end();
  c.what = !made && ::lstat(decl.path.c_str(), &st) == 0 ? "changed" : "new";
  c.reason = decl.reason;
  c.origin = decl.origin.describe();
  c.held = next_held_path().string();
  out.held.push_back(std::move(c));
  return out.held.back();
}

void HomeSettings::settle_file(const HomeFile& decl, const fs::path& path,
                               const std::optional<std::string>& base, const std::string& run_text,
                               Settled& out) {
  HeldChange c;
  c.path = path;
  c.kind = "file";
  c.what = base ? "changed" : "new";
  c.format = policy::to_string(decl.format);
  c.reason = decl.reason;
  c.origin = decl.origin.describe();
  if (base) c.base_sha256 = sha256_hex(*base);
  const auto hold_whole = [&](const std::string& note) {
    const fs::path held = next_held_path();
    std::error_code ec;
    fs::create_directories(held.parent_path(), ec);
    if (auto w = write_bytes(held, run_text, 0600); !w) {
      out.notices.push_back({run::NoticeKind::alert, "what the run wrote to " + home_relative(path) +
                                                         " was not kept: " + w.error().message});
      return;
    }
    c.held = held.string();
    c.note = note;
    out.held.push_back(std::move(c));
  };
  if (decl.format == HomeFormat::whole) {
    if (decl.kind == HomeKind::settings) return hold_whole("");
    auto written = replace_if_unchanged(path, run_text, read_optional(path));
    if (!written || !written.value())
      out.notices.push_back(
          {run::NoticeKind::alert, "what the run wrote to " + home_relative(path) + " did not land: " +
                                       (written ? "it changed meanwhile" : written.error().message)});
    else
      out.landed.push_back(home_relative(path));
    return;
  }
  auto before = policy::home::read_document(base.value_or(""), decl.format);
  auto after = policy::home::read_document(run_text, decl.format);
  if (!before || !after)
    return hold_whole("held back whole: " + std::string(!after ? "what the run wrote" : "your file") +
                      " is " + (!after ? after.error().message : before.error().message));
  const auto changes = policy::home::diff_documents(before.value(), after.value(), decl);
  std::vector<policy::home::KeyChange> data, held;
  for (const auto& k : changes) (k.kind == HomeKind::data ? data : held).push_back(k);
  std::string note;
  if (!data.empty()) {
    const auto current = read_optional(path);
    const bool unchanged = current == base;
    Status landed = ok();
    if (held.empty() && unchanged) {
      // Only data, and the file as the run found it: the harness's own text.
      auto written = replace_if_unchanged(path, run_text, current);
      if (!written)
        landed = written.error();
      else if (!written.value())
        landed = Error::conflict("it changed meanwhile");
    } else if (decl.format == HomeFormat::json) {
      landed = merge_json(path, data);
    } else {
      landed =
          Error::conflict(held.empty() ? "it changed during the run, and a TOML file is only replaced whole"
                                       : "a TOML file is only replaced whole, and it holds settings too");
    }
    if (landed) {
      c.landed = key_names(data);
      out.landed.push_back(home_relative(path) + " (" + std::to_string(data.size()) + " key" +
                           (data.size() == 1 ? "" : "s") + ")");
    } else {
      note = "its data keys were held back too: " + landed.error().message;
      held.insert(held.end(), data.begin(), data.end());
    }
  }
  if (held.empty()) return;
  c.keys = key_names(held);
  c.note = note;
  // What the held keys do, in their rules' words (the file's own reason speaks of its data).
  std::string reasons;
  for (const auto& k : held)
    if (!k.reason.empty() && reasons.find(k.reason) == std::string::npos)
      reasons += (reasons.empty() ? "" : "; ") + k.reason;
  if (!reasons.empty()) c.reason = reasons;
  const fs::path stored = next_held_path();
  std::error_code ec;
  fs::create_directories(stored.parent_path(), ec);
  nlohmann::json list = nlohmann::json::array();
  for (const auto& k : held) list.push_back(policy::home::to_json(k));
  if (!write_bytes(stored.string() + ".keys.json", list.dump(2), 0600) ||
      !write_bytes(stored, run_text, 0600)) {
    out.notices.push_back(
        {run::NoticeKind::alert, "what the run wrote to " + home_relative(path) +
                                     " was not kept: the record folder could not be written"});
    return;
  }
  c.held = stored.string();
  c.changes = stored.string() + ".keys.json";
  out.held.push_back(std::move(c));
}

void HomeSettings::settle_tree(const fs::path& root, const fs::path& view, bool overlay,
                               const std::map<fs::path, std::string>& bases, Settled& out) {
  const auto& files = policy_->home_files();
  std::error_code ec;
  std::vector<std::pair<fs::path, fs::path>> todo{{root, view}};
  while (!todo.empty()) {
    auto [dir, at] = todo.back();
    todo.pop_back();
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path entry = it->path();
      const fs::path path = at / entry.filename();
      struct stat st {};
      if (::lstat(entry.c_str(), &st) != 0) continue;
      const HomeFile* decl = policy::home_file_for(files, path);
      const bool removal = overlay && is_whiteout(st);
      if (S_ISDIR(st.st_mode)) {
        if (overlay && is_opaque(entry) && decl && decl->guarded() && decl->kind != HomeKind::scratch) {
          HeldChange& c = folder_entry(*decl, path, out);
          c.files.push_back("-" + path.lexically_relative(decl->path).string());
        }
        todo.push_back({entry, path});
        continue;
      }
      if (!decl) continue;                            // outside every declared path: nothing of the harness's
      if (decl->kind == HomeKind::scratch) continue;  // the run's own: dropped with its layer
      if (decl->path == path && !decl->directory && (S_ISREG(st.st_mode) || removal)) {
        if (removal) {
          HeldChange c;
          c.path = path;
          c.kind = "file";
          c.what = "removed";
          c.format = policy::to_string(decl->format);
          c.reason = decl->reason;
          c.origin = decl->origin.describe();
          if (const auto b = bases.find(path); b != bases.end()) c.base_sha256 = sha256_hex(b->second);
          if (decl->guarded())
            out.held.push_back(std::move(c));
          else if (::unlink(path.c_str()) == 0)
            out.landed.push_back(home_relative(path) + " (removed)");
          continue;
        }
        auto text = read_regular_file(entry, {.max_bytes = kMaxCopy, .follow_links = false});
        if (!text) continue;
        std::optional<std::string> base;
        if (const auto b = bases.find(path); b != bases.end()) base = b->second;
        settle_file(*decl, path, base, text.value(), out);
        continue;
      }
      if (!decl->guarded()) {
        // The harness's own data inside a folder of settings (opencode's .gitignore).
        if (removal) {
          ::unlink(path.c_str());
        } else if (S_ISREG(st.st_mode)) {
          struct stat existing {};
          if (overlay || ::lstat(path.c_str(), &existing) != 0) (void)copy_file_to(entry, path);
        } else if (S_ISLNK(st.st_mode)) {
          char target[4096] = {};
          const ssize_t n = ::readlink(entry.c_str(), target, sizeof target - 1);
          if (n > 0 && make_parents(path)) (void)!::symlink(target, path.c_str());
        }
        out.landed.push_back(home_relative(path));
        continue;
      }
      HeldChange& c = folder_entry(*decl, path, out);
      const std::string rel = path.lexically_relative(decl->path).string();
      if (removal) {
        c.files.push_back("-" + rel);
      } else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
        const fs::path keep = fs::path(c.held) / rel;
        std::error_code copy_ec;
        fs::create_directories(keep.parent_path(), copy_ec);
        fs::copy(entry, keep, fs::copy_options::copy_symlinks | fs::copy_options::overwrite_existing,
                 copy_ec);
        if (!copy_ec) c.files.push_back(rel);
      }
    }
  }
}

HomeSettings::Settled HomeSettings::settle() {
  Settled out;
  for (const auto& c : copies_) {
    if (c.file->kind == HomeKind::scratch) continue;  // the run's own: dropped with its copy
    auto text = read_regular_file(c.copy, {.max_bytes = kMaxCopy, .follow_links = false});
    if (!text) {
      out.notices.push_back({run::NoticeKind::alert, "what the run wrote to " + home_relative(c.view) +
                                                         " could not be read back: " + text.error().message});
      continue;
    }
    if (c.base ? text.value() == *c.base : text.value() == "{}\n") continue;
    settle_file(*c.file, c.view, c.base, text.value(), out);
  }
  for (const auto& o : overlays_) settle_tree(o.upper, o.view, /*overlay=*/true, o.bases, out);
  // overlayfs leaves its work dir's inner folder mode 0: made removable.
  for (const auto& l : layers_)
    if (l.kind == backend::HomeLayer::Kind::overlay) ::chmod((l.work / "work").c_str(), 0700);
  // Guarded paths that were missing in a folder the run wrote for real.
  stop_watch();
  move_aside_missing(/*may_copy=*/true, &out.notices);
  settle_tree(record_dir_ / "home-moved", "/", /*overlay=*/false, {}, out);
  std::error_code rm;
  fs::remove_all(record_dir_ / "home-moved", rm);
  settle_tree(held_dir_, "/", /*overlay=*/false, {}, out);
  // Children first; only when nothing else wrote there meanwhile.
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) ::rmdir(it->c_str());
  for (const auto& c : out.held) {
    std::string what = home_relative(c.path);
    if (!c.keys.empty()) {
      what += ": ";
      for (std::size_t i = 0; i < c.keys.size() && i < 4; ++i) what += (i ? ", " : "") + c.keys[i];
      if (c.keys.size() > 4) what += ", and " + std::to_string(c.keys.size() - 4) + " more";
    } else if (!c.files.empty()) {
      what += " (" + std::to_string(c.files.size()) + " file" + (c.files.size() == 1 ? "" : "s") + ")";
    } else {
      what += " (" + c.what + ")";
    }
    out.notices.push_back({run::NoticeKind::alert, redact("held back " + what + ": " + c.reason)});
  }
  return out;
}

std::vector<std::string> preview_held_change(const fs::path& record_dir, const HeldChange& change) {
  (void)record_dir;
  std::vector<std::string> lines;
  if (change.kind == "folder") {
    for (const auto& f : change.files)
      lines.push_back(f.rfind('-', 0) == 0 ? "- " + (change.path / f.substr(1)).string()
                                           : "+ " + (change.path / f).string());
    return lines;
  }
  if (change.what == "removed") return {"- " + change.path.string() + " (the run removed it)"};
  if (!change.changes.empty()) {
    std::ifstream in(change.changes);
    const auto list = nlohmann::json::parse(in, nullptr, false);
    std::vector<policy::home::KeyChange> keys;
    if (list.is_array())
      for (const auto& k : list) keys.push_back(policy::home::key_change_from_json(k));
    for (auto& line : policy::home::describe_changes(keys)) lines.push_back(redact(line));
    return lines;
  }
  const auto current = read_optional(change.path).value_or("");
  const auto held = read_optional(change.held).value_or("");
  return line_diff(current, held);
}

Result<std::vector<std::string>> apply_held_change(const fs::path& record_dir, HeldChange& change,
                                                   bool dry_run) {
  (void)record_dir;
  std::vector<std::string> lines;
  const std::string where = home_relative(change.path);
  if (!change.applied_at.empty())
    return std::vector<std::string>{where + ": applied already (" + change.applied_at + ")"};
  if (change.kind == "folder") {
    for (const auto& f : change.files) {
      const bool remove = f.rfind('-', 0) == 0;
      const fs::path rel = remove ? fs::path(f.substr(1)) : fs::path(f);
      for (const auto& part : rel)
        if (part == "..") return Error::invalid(where + ": the record names " + f + ", which climbs out");
      const fs::path target = change.path / rel;
      lines.push_back((remove ? "removed " : "wrote ") + home_relative(target));
      if (dry_run) continue;
      std::error_code ec;
      if (remove) {
        fs::remove_all(target, ec);
        continue;
      }
      const fs::path from = fs::path(change.held) / rel;
      PX_TRY(make_parents(target));
      struct stat st {};
      if (::lstat(from.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
        fs::remove(target, ec);
        fs::copy_symlink(from, target, ec);
      } else {
        auto text = read_regular_file(from, {.max_bytes = kMaxCopy, .follow_links = false});
        if (!text) return text.error();
        // A new file keeps what the run gave it to run (a hook's script, a downloaded program):
        // its execute bits, never write for others.
        const mode_t mode = ::lstat(from.c_str(), &st) == 0 ? ((st.st_mode & 0755) | 0600) : 0600;
        auto written = replace_if_unchanged(target, text.value(), read_optional(target), mode);
        if (!written) return written.error();
      }
      if (ec) return Error::io("write " + target.string(), ec.value());
    }
  } else if (change.what == "removed") {
    lines.push_back("removed " + where);
    if (!dry_run && ::unlink(change.path.c_str()) != 0 && errno != ENOENT)
      return Error::io("remove " + change.path.string(), errno);
  } else if (!change.changes.empty() && change.format == "json") {
    std::ifstream in(change.changes);
    const auto list = nlohmann::json::parse(in, nullptr, false);
    if (!list.is_array()) return Error::invalid(change.changes + " is damaged; the change cannot be applied");
    std::vector<policy::home::KeyChange> keys;
    for (const auto& k : list) keys.push_back(policy::home::key_change_from_json(k));
    for (const auto& k : keys) lines.push_back("set " + where + ": " + policy::describe_key(k.key));
    if (!dry_run) PX_TRY(merge_json(change.path, keys));
  } else {
    // TOML and whole files are replaced by the run's version, and only over
    // the file the run started from: a later edit of yours is never lost.
    const auto current = read_optional(change.path);
    const std::string now = current ? sha256_hex(*current) : "";
    if (now != change.base_sha256)
      return Error::conflict(where +
                             " changed since the run, so the run's version was not written over it. It is " +
                             change.held + "; merge what you want of it by hand");
    auto held = read_regular_file(change.held, {.max_bytes = kMaxCopy, .follow_links = false});
    if (!held) return held.error();
    lines.push_back("wrote " + where);
    if (!dry_run) {
      PX_TRY_ASSIGN(bool done, replace_if_unchanged(change.path, held.value(), current));
      if (!done) return Error::conflict(where + " changed while it was written; run the command again");
    }
  }
  if (!dry_run) change.applied_at = iso_utc_now();
  return lines;
}

}  // namespace px::protect
