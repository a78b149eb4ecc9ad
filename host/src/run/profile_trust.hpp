#pragma once
// A profile file that a run could have written decides what the next run
// may do: its `credentials:` name commands the supervisor runs outside the
// seal and hosts a secret is sent to, and its other sections can widen the
// network and the writable paths. Every profile file a run loads is
// read-only in that run (policy/compose.cpp); this checks the ones that lie
// where the run may write (its folder, a writable grant) before it starts.
//
// The rule: a profile file in this run's reach (its folder, a writable
// grant) or in any git working tree (a project's folder, where other runs
// work: `.parallex/px.yaml` named by the project's config) is trusted only
// when git tracks it and it is unchanged (the working file is what the index
// and HEAD hold: what was committed, and can be read in a commit). Untrusted,
// a profile with credentials is refused (a command would run outside the
// seal, a secret would go to hosts the file names); one that widens the run
// is loaded, and the run says at its start what it widens, line by line.
#include <vector>

#include "common/error.hpp"
#include "policy/policy.hpp"
#include "policy/profile.hpp"
#include "run/notice.hpp"

namespace px::run {

Status check_profile_files(const std::vector<policy::Profile>& profiles, const policy::Policy& policy,
                           std::vector<Notice>& notices);

// What git says of `file` in the working tree around it (libgit2: no hook,
// filter or fsmonitor runs).
enum class GitState { outside, tracked_unchanged, untracked_or_changed };
GitState git_state(const std::filesystem::path& file);

}  // namespace px::run
