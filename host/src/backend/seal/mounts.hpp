#pragma once
// Mount namespace: the sealed command sees a new root holding only what the
// Policy grants (bound read-only or read-write at the same paths), its private
// temp dir at /tmp and /var/tmp, a minimal /dev and (from pidns) a fresh /proc.
// Denied paths inside granted trees are covered by read-only empty mounts.
//
// Every mount goes through fds: sources are cloned with open_tree before the
// view exists, and targets are reached one component at a time from the view's
// root without following symlinks, so a link planted in a writable tree cannot
// redirect a mount.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "common/unique_fd.hpp"
#include "policy/policy.hpp"
#include "run/notice.hpp"

namespace px::seal::mounts {

namespace fs = std::filesystem;

// One typed setup operation each (bubblewrap's habit), planned in the
// supervisor from the Policy and applied in the child in this order.
struct Bind {
  fs::path host;  // the source on the host
  fs::path view;  // where the command sees it
  bool writable = false;
  bool scratch = false;     // the run's temp dir: a tmpfs of its own, at /tmp and /var/tmp (host is empty)
  fs::path symlink_target;  // non-empty: the host path is a symlink, recreated in the view
  // A harness state dir that does not exist in the user's tree: the view gets
  // an empty directory of the run's own (`host` is its backing dir in the
  // run's private state), and what the run writes there is kept afterwards
  // (keep_new_state). Nothing is made in the user's tree before the run.
  bool fresh = false;
  // With fresh: a harness state file (the plugin said it is a file) rather
  // than a dir: `host` is an empty file of the run's own, kept afterwards only
  // if the run wrote into it.
  bool fresh_file = false;
  // A harness's folder in the user's home shown as an overlay: `host` is the
  // user's folder (the lower layer, never written), these the run's own upper
  // and work dirs (backend::HomeLayer::overlay). One that cannot be mounted is
  // bound read-only instead, with a note; a scratch folder's, its upper dir
  // alone (the run's own, empty: nothing of the user's is written).
  fs::path overlay_upper{}, overlay_work{};
  bool overlay_scratch = false;
  // A folder of the view's skeleton made a tmpfs of its own, writable as a
  // mount but granted nothing by Landlock: a harness that makes a temporary
  // file beside its copy there (a copy layer's folder) is refused with EACCES
  // and writes the copy in place, where a read-only mount's EROFS would make
  // it give up. Nothing written there could outlive the run anyway.
  bool writable_dir = false;
};

struct ViewPlan {
  std::vector<Bind> binds;  // parents before children
  // The run folder, beneath which the paths below are resolved once, without
  // following a link, and mounted through the descriptor that was checked.
  fs::path run_folder;
  // Directories bound onto themselves, writable: a mount point cannot be
  // renamed, removed or replaced, so `mv .git .g && git init` or `mv .claude
  // .c && mkdir .claude` fails with EBUSY. The run folder's .git and the
  // parent dirs of its protected paths; parents first.
  std::vector<fs::path> rename_proof;
  // Read-only paths inside the run folder (files other programs run or trust
  // later, .git's config and hooks): bound read-only onto themselves. One
  // that is (or passes through) a link leading out of the run folder is
  // protected as it is: the link bound onto itself, and what the run reaches
  // through it read-only.
  std::vector<fs::path> protected_paths;
  // The run folder's .git as the supervisor found it before the seal
  // (LaunchRequest::run_git_fd): the seal protects that very folder, or
  // refuses to start when the name .git reaches anything else.
  struct GitAtStart {
    bool folder = false;  // a .git folder (else none, a gitfile or a link)
    dev_t dev = 0;
    ino_t ino = 0;
  };
  GitAtStart git;
  std::vector<fs::path> read_only;  // other read-only carve-ins inside writable binds (an agent's rc files)
  // Folders whose entries are fixed (policy.hpp: FixedFolder) inside writable
  // binds, parents first: each bound read-only onto itself, its `open`
  // entries bound onto themselves first so that they keep their own access.
  struct Fixed {
    fs::path path;
    std::vector<fs::path> open;
  };
  std::vector<Fixed> fixed;
  std::vector<fs::path> hidden;    // denied paths inside binds: covered by empty read-only mounts
  std::vector<run::Notice> notes;  // grants left out, and why
  // Read-only paths that do not exist yet but must not be created by the run:
  // made empty first, so that they can be bound read-only. Only ever in trees
  // a run may change anyway: a `.git/hooks` dir in the run folder's existing
  // repository, a shell rc file in an agent's own home. Never in the user's
  // home, and never of a guessed type.
  struct Placeholder {
    fs::path path;
    bool directory = false;
  };
  std::vector<Placeholder> placeholders;
  // The user's caches shown read-only beneath folders of the run's /tmp
  // (policy.hpp: CacheLayer; overlay.hpp). One that cannot be mounted leaves
  // its folder empty, and a note says so: the run downloads again.
  struct CacheLayer {
    fs::path lower;  // the user's cache on the host
    fs::path view;   // a folder of the run's /tmp
  };
  std::vector<CacheLayer> cache_layers;
  // Files the seal writes for the run and binds read-only over the host's in
  // the view only (the run's /etc/resolv.conf and /etc/hosts).
  struct GeneratedFile {
    fs::path view;
    std::string content;
  };
  std::vector<GeneratedFile> generated;
};

// `backing_root`: a folder of the run's private state (not its temp dir,
// which the command sees at /tmp) under which fresh state dirs get their
// backing dirs; empty: missing state dirs are left out.
// `home_layers`: the harness's guarded files in the user's home
// (backend::HomeLayer), shown in place of what the grants would bind there.
// `run_git`: the run folder's .git folder (O_PATH), or -1 when it has none.
ViewPlan plan_view(const policy::Policy& policy, const fs::path& backing_root, int run_git,
                   const std::vector<backend::HomeLayer>& home_layers = {});

// The run folder's .git when it is a folder, opened once beneath the run
// folder without following a link (O_PATH); empty when it is none.
UniqueFd open_git_folder(const fs::path& run_folder);

// In the supervisor: creates plan.placeholders that are still missing, never
// through a symlink (O_EXCL|O_NOFOLLOW, parents resolved without symlinks),
// those in .git beneath `run_git` (never through the name .git), and the
// backing dirs of fresh binds.
void create_placeholders(ViewPlan& plan, int run_git);

// unshare(CLONE_NEWNS), then every mount private: nothing we mount leaks out,
// nothing the host mounts later leaks in.
Status enter_private_namespace();

// Builds the view on a new tmpfs and returns its root (attached in this
// namespace at a staging point, not yet the root). `notes` collects skips.
Result<UniqueFd> build_view(const ViewPlan& plan, std::vector<run::Notice>& notes);

// pivot_root into the view, detach the host's tree, make the view's own
// skeleton (and /dev's) read-only.
Status enter_view(UniqueFd view_root);

}  // namespace px::seal::mounts
