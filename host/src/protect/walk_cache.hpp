#pragma once
// What the last walk of a run folder for repositories (repository_walk.hpp)
// found in each folder it read: its sub-folders and whether it holds a .git
// (a folder, or a gitfile or link), with the folder's identity and change time when it was read. A
// later walk takes a folder from here instead of reading it again when its
// change time says nothing in it changed since.
//
// Why the change time is enough: a folder's entries cannot change without its
// inode's change time changing (making, removing or renaming an entry in it
// sets its parent's ctime), and no process can set a change time (utimensat
// sets the access and modification times only). So the cache can only tell a
// walk what was in a folder at a moment the folder's ctime says is still the
// present; a cache that lies about a folder whose ctime moved is not trusted,
// and one that lies about a folder that did not change can only come from a
// writer of Parallex's own state, which every run is denied (policy/own_state).
// The one trap is the clock's granularity, handled in unchanged().
//
// One file per run folder in Parallex's state dir (`walk/`), named by a hash
// of the folder's path, holding the folder's path and identity: a file for
// another folder, an older format, a torn or corrupt file is ignored (every
// folder is read) and replaced when the walk is saved.
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/error.hpp"

namespace px::protect {

namespace fs = std::filesystem;

// Now, by the clock the kernel stamps change times with
// (CLOCK_REALTIME_COARSE): what a change time is compared with.
std::int64_t change_clock_now_ns();

class WalkCache {
 public:
  struct Folder {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::int64_t ctime_ns = 0;         // the folder's change time when it was read
    std::int64_t read_ns = 0;          // when (CLOCK_REALTIME_COARSE, taken before its stat)
    bool repository = false;           // holds a .git folder
    bool gitfile = false;              // holds a .git that is not a folder (a gitfile, a link)
    std::vector<std::string> folders;  // its sub-folders but .git, in the order read
    bool operator==(const Folder&) const = default;
  };

  // At most this many folders are kept (a run can make 100,000): a walk
  // visits at most this many (each one, even from the cache, costs a stat).
  static constexpr std::size_t kMaxFolders = 16384;
  // At most this many run folders' files are kept in the folder of the
  // caches: saving one forgets those written longest ago.
  static constexpr std::size_t kMaxFiles = 256;

  // A cache that trusts nothing and keeps nothing: every folder is read.
  WalkCache() = default;
  // The cache of the run folder `run_dir` (a descriptor; its path
  // `run_folder`), kept in the folder `dir`: what its file holds when the
  // file was written for this very folder, else empty. Off (nothing trusted,
  // nothing saved) on a filesystem whose change times it does not rely on
  // (see trusts_change_times()). Makes the parents of `dir` (Parallex's
  // state folder on a fresh home), which save() does not.
  static WalkCache load(const fs::path& dir, const fs::path& run_folder, int run_dir);
  // As load(), without reading the file: a walk that must not rely on what
  // was written before it (after the run's supervisor died) still leaves a
  // cache for the next run.
  static WalkCache fresh(const fs::path& dir, const fs::path& run_folder, int run_dir);

  bool enabled() const { return enabled_; }
  const fs::path& file() const { return file_; }

  // The folder at `rel` ("" the run folder itself) as a walk last read it,
  // when `st` (its stat now, taken through the descriptor the walk holds)
  // says nothing in it changed since; else null.
  const Folder* unchanged(const std::string& rel, const struct stat& st) const;
  // What the cache holds for `rel`, trusted or not (unchanged() says).
  const Folder* known(const std::string& rel) const;
  // A walk starts: folders it does not visit may be forgotten at its end.
  void begin_walk();
  // What a walk found in `rel`, read now.
  void read(const std::string& rel, Folder folder);
  // A walk took `rel` from the cache.
  void visited(const std::string& rel);
  // A walk ends. `complete`: it visited every folder of the run folder, so
  // those it did not visit are gone and forgotten.
  void end_walk(bool complete);
  // Writes the file when what it holds changed since it was loaded or last
  // saved, or when the file is no longer the one read or written (whoever
  // replaced it, the cache says what this supervisor saw): a temporary file
  // renamed over it. An error names the file. Nothing is written, and no
  // error, when the parent of the cache's folder is gone.
  Status save();

  std::size_t size() const { return folders_.size(); }

  // The gitlinks of the run folder's index as last read, when `st` (the
  // index's stat now) says it is the same file, unchanged since (the same
  // rule as a folder's); else null. Reading the index means loading libgit2.
  const std::vector<std::string>* gitlinks(const struct stat& st) const;
  // The gitlinks of the index whose stat (taken before it was read, at
  // `read_ns`) is `st`.
  void set_gitlinks(const struct stat& st, std::int64_t read_ns, std::vector<std::string> paths);

  // Whether the filesystem holding `fd` keeps change times the cache can
  // rely on: local filesystems that set a folder's ctime on every change of
  // its entries (ext4, xfs, btrfs, tmpfs, f2fs, bcachefs, zfs).
  static bool trusts_change_times(int fd);
  // Whether a folder's link count on the filesystem of `fd` is 2 plus one per
  // folder in it (ext4, xfs, tmpfs; btrfs says 1 for every folder). No
  // process sets a folder's link count (folders cannot be hard-linked): it
  // changes only as folders are made and removed in it.
  static bool counts_subfolders(int fd);

 private:
  struct Entry {
    Folder folder;
    std::uint64_t walk = 0;  // the last walk that visited it
  };
  static WalkCache empty(const fs::path& dir, const fs::path& run_folder, int run_dir);
  bool parse(const std::string& bytes);
  std::string serialize() const;
  static void forget_least_recent(int dir);

  bool enabled_ = false;
  bool dirty_ = false;
  fs::path dir_;
  fs::path file_;
  std::string run_folder_;
  std::uint64_t run_dev_ = 0;
  std::uint64_t run_ino_ = 0;
  std::uint64_t walk_ = 0;
  std::unordered_map<std::string, Entry> folders_;
  bool has_gitlinks_ = false;
  Folder index_;  // the index's identity; `folders` holds its gitlinks
  static constexpr std::size_t kMaxGitlinks = 65536;
  struct stat file_stat_ {};  // the file as read or written; st_ino 0 when none
};

}  // namespace px::protect
