#pragma once
// Files other programs run later (policy::Policy::project_files(): an
// editor's tasks, a harness's hooks and MCP servers, direnv's .envrc) that a
// run made where there were none, and what it left in any git dir that
// would make git outside the seal run a program or act outside the run
// folder (a hook, a config naming a program, a gitfile naming a git dir
// elsewhere, a rebase's todo list, an object whose contents are not what its
// name says): moved aside into the run's record folder (`quarantine/`),
// never deleted, and reported.
//
// Those that exist when the run starts are read-only in its view (the seal
// binds them onto themselves), so a run cannot change them. Those that do not
// exist cannot be mounted without making them in the user's tree; Landlock
// cannot refuse one name in a writable folder. So the supervisor remembers
// what is there before the run (Quarantine), moves aside what appears at
// those paths while the run goes on (ProjectWatch, at once), when it is
// paused, and when it ends, however it ends.
//
// Every path is reached from the run folder (or, for a workspace's git dir
// and the main repository's objects, from a descriptor of that folder opened
// when the run started) without following a link: a link the run planted on
// the way to a protected path is what gets moved aside, never what it points
// to.
#include <sys/stat.h>
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "policy/policy.hpp"
#include "protect/walk_cache.hpp"
#include "run/record_parts.hpp"

namespace px::protect {

namespace fs = std::filesystem;

// What was moved aside, as the record lists it (`quarantined`).
using run::Quarantined;
// "moved aside .vscode/tasks.json (made by the run; VS Code ...): it held ... It is in ..."
std::string describe(const Quarantined& q, const fs::path& run_folder);

class Quarantine {
 public:
  // Before the run: what is at each protected path of `policy`, and in the
  // run folder's .git, now. Moved files go to `record_dir`/quarantine.
  Quarantine(const policy::Policy& policy, fs::path record_dir);

  // Moves aside what was made since. `git`: also what changed in .git (only
  // when no process of the run can be halfway through writing there: paused
  // or ended). `may_copy`: a move across filesystems copies then removes the
  // original (only then: a process still writing would lose its writes).
  std::vector<Quarantined> sweep(const std::string& when, bool git, bool may_copy);

  // The watch saw a .git made or moved into the run folder (or lost events):
  // in a run that started without a .git folder, the one there now is held
  // at once (and the end says that something came and went at .git).
  void git_event();

  // The folders to watch for a protected path appearing: the nearest
  // existing folder on the way to each absent one.
  std::vector<fs::path> watch_dirs() const;

  // Everything moved so far, with what it held (read from the copy).
  std::vector<Quarantined> moved() const;

  // What sweep() compares with, as bytes (CBOR), and the run folder's
  // descriptor it resolves from: what the run's watchdog is handed, to sweep
  // after a supervisor that was killed (protect/sweep_after_death.hpp).
  // With `kept_files` they hold the small git files kept to put back, which
  // may name credentials (a remote's URL): handed over in memory, never
  // written to disk. Without, what a later parallex finds on disk
  // (protect/unswept.hpp): a changed file is then moved aside, not put back.
  std::vector<std::uint8_t> state(bool kept_files = true) const;
  int run_dir() const { return run_dir_; }
  // The run folder's .git when it was a folder as the run started, opened
  // once then (O_PATH) and never looked up by its name again: the seal
  // protects this very folder (LaunchRequest::run_git), and every check of
  // .git reaches it through this descriptor. -1 when there was none.
  int git_dir() const { return git_dir_; }
  bool had_git_dir() const { return had_git_dir_; }
  const fs::path& run_folder() const { return run_folder_; }
  const fs::path& record_dir() const { return record_dir_; }
  // A Quarantine as state() described it, resolving from `run_dir` (the
  // descriptor the first one opened, so the same folder whatever was renamed
  // since). An error names what is wrong with the state.
  static Result<std::unique_ptr<Quarantine>> restore(const std::vector<std::uint8_t>& state,
                                                     UniqueFd run_dir);

 private:
  struct Identity {
    bool exists = false;
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    std::int64_t ctime_ns = 0;  // the inode's change time: no process can set it
    bool link = false;
    std::string link_target;
    bool operator==(const Identity& o) const {
      return exists == o.exists && dev == o.dev && ino == o.ino && size == o.size && ctime_ns == o.ctime_ns;
    }
  };
  struct Protected {
    fs::path rel;  // relative to the run folder
    std::string reason;
    Identity start;
    bool parent_ok_at_start = false;  // reached without a link when the run started
  };

  // A folder outside the run folder that the run may write and git reads
  // from: a workspace's own git dir (<repo>/.git/worktrees/NAME: its
  // modules, its rebase state) and the main repository's objects. Files in
  // it are named by their absolute path (a "key"); those of the run folder by
  // their path relative to it.
  struct Outside {
    fs::path path;
    int fd = -1;  // opened when the run started (or, restored, again by its path: the same device and inode)
    dev_t dev = 0;
    ino_t ino = 0;
  };

  Quarantine() = default;
  void sweep_project_file(Protected& p, const std::string& when, bool may_copy,
                          std::vector<Quarantined>& out);
  void sweep_git(const std::string& when, bool may_copy, std::vector<Quarantined>& out);
  void check_git_dir(const fs::path& rel, const std::string& what, const std::string& when, bool may_copy,
                     std::vector<Quarantined>& out, int depth);
  void check_git_file(const fs::path& rel, const std::string& why_if_unsafe, const std::string& kind,
                      const std::string& when, bool may_copy, std::vector<Quarantined>& out);
  void check_worktrees(const fs::path& git_dir, const std::string& when, bool may_copy,
                       std::vector<Quarantined>& out);
  void check_in_progress(const fs::path& git_dir, const std::string& what, const std::string& when,
                         bool may_copy, std::vector<Quarantined>& out);
  void check_dot_git(const fs::path& dir, const std::string& when, bool may_copy,
                     std::vector<Quarantined>& out);
  void check_gitlinks(const fs::path& git_dir, bool walk_complete, const std::string& when, bool may_copy,
                      std::vector<Quarantined>& out);
  void check_objects(const fs::path& objects, const std::string& when, bool may_copy,
                     std::vector<Quarantined>& out);
  std::optional<fs::path> git_dir_named(const fs::path& dir, const std::string& target) const;
  std::vector<fs::path> module_git_dirs(const fs::path& git_dir) const;
  bool unchanged(const fs::path& rel) const;
  void remember_git();
  void remember_git_dir(const fs::path& rel, int depth);
  void remember_in_progress(const fs::path& git_dir);
  void remember(const fs::path& rel, bool keep_original = true);
  void find_outside(const policy::Policy& policy);
  // `key` (relative to the run folder, or absolute in a folder of outside_),
  // opened without following a link; an invalid descriptor when it cannot be.
  UniqueFd open_at(const fs::path& key, int flags) const;
  // `key` as the user reads it: an absolute path.
  fs::path shown(const fs::path& key) const;
  void open_git_dir();
  // A run that started without a .git folder: one that is there now (made by
  // the run, or moved in from outside) is held from this sweep on. Whether it
  // holds one.
  bool note_appeared_git();
  // The .git folders the end's checks reach, each by its descriptor: the
  // start's (or those that appeared since), and what the name reaches now if
  // it is another (`named` holds it).
  std::vector<int> git_dirs_to_check(UniqueFd& named) const;
  // `rel` beneath the run folder (common/beneath.hpp), .git and what is
  // in it through git_dir_ when there is one.
  UniqueFd at(const fs::path& rel, int flags) const;
  // Moves `name` into the record. With `checked` (what the caller's check
  // saw there), only that very file: one swapped in since by something
  // outside the run is left in place (put back if the swap fell between the
  // look and the move), to be checked again at the next sweep.
  std::optional<Quarantined> move_aside(int parent, const std::string& name, const fs::path& rel,
                                        const std::string& why, const std::string& when, bool may_copy,
                                        const struct stat* checked = nullptr);

  fs::path run_folder_;
  fs::path record_dir_;
  int run_dir_ = -1;  // the run folder, opened without following links
  std::vector<Outside> outside_;
  fs::path own_git_dir_;  // the run folder's git dir when it lies outside (a workspace's), else empty
  fs::path objects_;      // the objects folder of the run folder's repository (".git/objects", or outside)
  std::set<fs::path> checked_;  // git dirs checked in the current sweep
  int git_dir_ = -1;            // its .git folder as the run started (git_dir())
  // .git folders that appeared during a run that started without one, each
  // held from the first sweep that saw it (the watch's, a pause's, the end's):
  // what the run wrote there is checked whatever renames it since. At most 8.
  std::vector<UniqueFd> appeared_git_;
  int checking_git_ = -1;   // while sweep_git checks one: the folder at() reaches ".git/..." through
  bool git_moved_ = false;  // something was seen at .git during a run that started without a folder there
  std::vector<Protected> protected_;
  bool had_git_dir_ = false;
  std::int64_t start_ns_ = 0;  // when the run started (CLOCK_REALTIME_COARSE: the clock change times use)
  std::map<fs::path, Identity> git_start_;  // files of .git that are checked, as they were
  std::vector<fs::path> submodule_paths_;   // from .gitmodules at the start
  std::vector<fs::path> nested_;            // other repositories in the run folder (their .git's parent)
  WalkCache walk_cache_;                    // what the walks for repositories read last (walk_cache.hpp)
  struct Original {
    std::string text;
    mode_t mode = 0644;
  };
  std::map<fs::path, Original> git_originals_;  // small git files as they were, to put back
  // Puts back the original of `rel` after what the run made there was moved
  // aside; says so, or "" when there was none (or it could not be written).
  std::string put_back(const fs::path& rel);
  std::vector<Quarantined> moved_;
  mutable std::mutex mu_;

 public:
  ~Quarantine();
  Quarantine(const Quarantine&) = delete;
  Quarantine& operator=(const Quarantine&) = delete;
};

}  // namespace px::protect
