#include "backend/seal/new_state.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/paths.hpp"
#include "common/tree_copy.hpp"
#include "common/unique_fd.hpp"

namespace px::seal {

namespace {

// Opens `target` as a directory, making the missing components (0700) below
// its deepest existing ancestor. The existing ancestors are the user's own
// (the run could not write there); the components made here are opened
// without following links.
UniqueFd open_or_make_dir(const fs::path& target) {
  fs::path existing = target;
  std::vector<std::string> missing;
  while (!existing.empty() && existing != existing.root_path() && ::access(existing.c_str(), F_OK) != 0) {
    missing.push_back(existing.filename().string());
    existing = existing.parent_path();
  }
  UniqueFd cur(::open(existing.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (auto it = missing.rbegin(); cur && it != missing.rend(); ++it) {
    if (::mkdirat(cur.get(), it->c_str(), 0700) != 0 && errno != EEXIST) return UniqueFd();
    cur = UniqueFd(::openat(cur.get(), it->c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  return cur;
}

// A state file the run wrote (the backing file holds bytes): made at the
// target, 0600 whatever mode the run gave it (data, never a program), only
// if nothing is there by now.
void keep_new_file(const NewStateDir& d, std::vector<std::string>& notes) {
  UniqueFd file(::open(d.backing.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!file || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return;
  ::fchmod(file.get(), 0600);
  UniqueFd from(::open(d.backing.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  UniqueFd to = open_or_make_dir(d.target.parent_path());
  CopyCounts counts;
  if (from && to)
    copy_entry(from.get(), d.backing.filename().string(), to.get(), d.target.filename().string(), counts);
  notes.push_back(
      counts.kept
          ? "kept what the run wrote to " + d.target.string() + " (it did not exist before the run)"
          : "what the run wrote to " + d.target.string() + " (which did not exist before it) was not kept: " +
                (to ? "something is there by now" : "its folder cannot be made"));
}

}  // namespace

std::vector<std::string> keep_new_state(const std::vector<NewStateDir>& dirs) {
  std::vector<std::string> notes;
  for (const auto& d : dirs) {
    struct stat st {};
    if (::lstat(d.backing.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      keep_new_file(d, notes);
      continue;
    }
    UniqueFd backing(::open(d.backing.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!backing || is_empty_dir(backing.get())) continue;
    UniqueFd target = open_or_make_dir(d.target);
    if (!target) {
      notes.push_back("what the run wrote in " + d.target.string() +
                      " (which did not exist before it) was not kept: " + "the folder cannot be made (" +
                      std::string(std::strerror(errno)) + ")");
      continue;
    }
    CopyCounts counts;
    copy_entries(backing.get(), target.get(), counts);
    // Said by what was kept: a run that made only folders kept no file ("0 files" said nothing).
    std::string line = counts.kept == 0
                           ? "kept the folders the run made in " + d.target.string() +
                                 " (it did not exist before the run), and no file"
                           : "kept what the run wrote in " + d.target.string() +
                                 " (it did not exist before the run): " + std::to_string(counts.kept) +
                                 " file" + (counts.kept == 1 ? "" : "s");
    if (counts.skipped)
      line += "; " + std::to_string(counts.skipped) + " left out (already there, or not a file)";
    notes.push_back(line);
  }
  return notes;
}

std::vector<std::string> hold_guarded_new_state(const std::vector<NewStateDir>& dirs,
                                                const std::vector<policy::HomeFile>& home_files,
                                                const fs::path& held_dir) {
  std::vector<std::string> notes;
  std::vector<const policy::HomeFile*> guarded;
  for (const auto& f : home_files)
    if (f.guarded()) guarded.push_back(&f);
  // Parents first: a guarded folder moves with what lies inside it.
  std::sort(guarded.begin(), guarded.end(), [](const policy::HomeFile* a, const policy::HomeFile* b) {
    return std::distance(a->path.begin(), a->path.end()) < std::distance(b->path.begin(), b->path.end());
  });
  for (const auto& d : dirs) {
    std::vector<fs::path> moved;
    for (const policy::HomeFile* g : guarded) {
      if (!is_within(g->path, d.target)) continue;
      if (std::any_of(moved.begin(), moved.end(), [&](const fs::path& m) { return is_within(g->path, m); }))
        continue;
      fs::path rel = g->path.lexically_relative(d.target);
      // A link the run made on the way is what moves, never what it names.
      fs::path walked;
      for (const auto& part : rel) {
        if (part == ".") break;
        walked /= part;
        struct stat st {};
        if (::lstat((d.backing / walked).c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
          rel = walked;
          break;
        }
      }
      const fs::path from = rel == "." ? d.backing : d.backing / rel;
      struct stat st {};
      if (::lstat(from.c_str(), &st) != 0) continue;
      const fs::path to = held_dir / (rel == "." ? d.target : d.target / rel).relative_path();
      std::error_code ec;
      fs::create_directories(to.parent_path(), ec);
      if (!ec && rel == "." && S_ISREG(st.st_mode)) {
        // A fresh state file that is itself guarded: the file moves.
        fs::rename(from, to, ec);
      } else if (!ec && rel == ".") {
        // The whole backing dir is a setting: its entries move, the dir stays
        // (the seal's own bookkeeping removes it).
        fs::create_directories(to, ec);
        for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec))
          fs::rename(it->path(), to / it->path().filename(), ec);
      } else if (!ec) {
        fs::rename(from, to, ec);
      }
      if (ec) {
        notes.push_back("what the run wrote at " + (d.target / rel).lexically_normal().string() +
                        " was not kept: it could not be held back (" + ec.message() + ")");
        fs::remove_all(from, ec);
      }
      moved.push_back(rel == "." ? d.target : d.target / rel);
    }
  }
  return notes;
}

}  // namespace px::seal
