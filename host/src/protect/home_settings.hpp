#pragma once
// A harness's files in the user's own home, in a sealed run there: data
// lands, command-running settings never do unseen.
//
// The harness's plugin says which of its files (and which keys inside its
// JSON and TOML files) are its own data and which run or approve commands
// (policy/home_files.hpp). Before the run, for each guarded path the run may
// write (a setting, or a data file with keys that are):
//   - a file: the run gets a copy of its own, bound over the user's (made
//     from `{}` for a JSON file the user has none of, so that the harness's
//     first start leaves a valid file); the user's version is remembered;
//   - a folder: an overlay, the user's folder beneath a layer of the run's;
//   - inside a harness folder that did not exist: the seal's new folder is
//     the run's own, and what the run made there is handed here
//     (seal::hold_guarded_new_state);
//   - a folder missing inside a real folder the harness writes (~/.codex
//     exists, its skills/ does not): made empty, then an overlay as above;
//     removed at the end when still empty;
//   - a file missing there (its config.toml): what appears there is moved
//     aside at once and when the run ends (Landlock cannot refuse one name in
//     a writable folder);
//   - a scratch folder (what the harness writes and runs within a session:
//     its shell snapshots, the launcher links first on its PATH): an overlay
//     as for a folder of settings; what the run wrote there is dropped at the
//     end, never held nor landed.
// After the run, key by key: a data change is merged into the user's current
// file (which another session may have changed meanwhile: only the keys the
// run changed are written, the file is replaced whole by a rename, and it is
// read again just before); a change to a setting is held back in the run's
// record folder (home/), listed in run.json (`home_changes`) and shown with
// the one command that applies it: `parallex runs apply RUN-ID`.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "common/watch_thread.hpp"
#include "policy/home_documents.hpp"
#include "policy/policy.hpp"
#include "run/notice.hpp"
#include "run/record_parts.hpp"

namespace px::protect {

namespace fs = std::filesystem;

// One held-back change, as run.json lists it (`home_changes`).
using run::HeldChange;

class HomeSettings {
 public:
  // Before the run (its seal not yet forked): the layers for `policy`'s
  // guarded home files, made under `private_dir`/home. `record_dir` is where
  // held changes go at the end. Null when the run has none.
  static std::unique_ptr<HomeSettings> prepare(const policy::Policy& policy, const fs::path& private_dir,
                                               const fs::path& record_dir, std::vector<run::Notice>& notes);

  const std::vector<backend::HomeLayer>& layers() const { return layers_; }
  // Where the seal moves what the run made at guarded paths inside new state folders.
  const fs::path& held_dir() const { return held_dir_; }

  // While the run goes on: what appears at a guarded path that was missing
  // in a folder the run writes for real is moved aside at once (inotify),
  // into the record folder, so a session of the harness started meanwhile
  // outside the seal never reads it. Without inotify it waits for the end.
  void start_watch();
  void stop_watch();
  // The watch's inotify instance (its last close waits for the kernel), or -1.
  int watch_descriptor() const { return inotify_.get(); }

  struct Settled {
    std::vector<HeldChange> held;
    std::vector<std::string> landed;  // "~/.claude.json: 3 keys (numStartups, ...)"
    std::vector<run::Notice> notices;
  };
  // After the run, once nothing of it runs: data into the home, settings into
  // the record folder.
  Settled settle();

 private:
  HomeSettings() = default;
  struct Copy {
    const policy::HomeFile* file = nullptr;
    fs::path view;
    fs::path copy;
    std::optional<std::string> base;  // the user's file at the start; none when absent
  };
  struct Overlay {
    const policy::HomeFile* file = nullptr;
    fs::path view, upper;
    std::map<fs::path, std::string> bases;  // guarded JSON/TOML files inside it, as they were
  };
  struct Missing {
    const policy::HomeFile* file = nullptr;  // a guarded path absent in a folder the run writes
  };
  void settle_file(const policy::HomeFile& decl, const fs::path& path, const std::optional<std::string>& base,
                   const std::string& run_text, Settled& out);
  void settle_tree(const fs::path& root, const fs::path& view, bool overlay,
                   const std::map<fs::path, std::string>& bases, Settled& out);
  HeldChange& folder_entry(const policy::HomeFile& decl, const fs::path& path, Settled& out);
  fs::path next_held_path();
  void move_aside_missing(bool may_copy, std::vector<run::Notice>* notices);
  void make_missing_folders();

  const policy::Policy* policy_ = nullptr;
  fs::path root_;      // private_dir/home
  fs::path held_dir_;  // root_/held
  fs::path record_dir_;
  std::vector<backend::HomeLayer> layers_;
  std::vector<Copy> copies_;
  std::vector<Overlay> overlays_;
  std::vector<Missing> missing_;
  std::vector<fs::path> made_;  // guarded folders made for the run (removed at the end when empty)
  int held_count_ = 0;
  UniqueFd inotify_;
  std::mutex move_mu_;
  WatchThread watch_;  // last: stopped before what its callback uses goes

 public:
  ~HomeSettings();
  HomeSettings(const HomeSettings&) = delete;
  HomeSettings& operator=(const HomeSettings&) = delete;
};

// `parallex runs apply`: applies a held change of the run recorded in
// `record_dir` to the user's home. Returns what it did, in lines; an error
// names the file and why it was not changed (it changed since the run, in a
// way a merge cannot settle).
Result<std::vector<std::string>> apply_held_change(const fs::path& record_dir, HeldChange& change,
                                                   bool dry_run);
// What applying it would change, in a diff-like view (values redacted).
std::vector<std::string> preview_held_change(const fs::path& record_dir, const HeldChange& change);

}  // namespace px::protect
