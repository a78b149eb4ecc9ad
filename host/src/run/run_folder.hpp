#pragma once
// Where a run may work. A sealed run may write the folder it works in, so
// that folder must not be one whose files the system, or a login of any
// user, runs outside every seal: a file a run leaves in /etc/cron.d or
// /etc/profile.d runs later as root. System folders are refused like the
// home folder (a flag insists); a folder that holds a login's or the
// system's start-up files is said before the run starts.
#include <filesystem>
#include <vector>

#include "common/error.hpp"
#include "run/notice.hpp"

namespace px::run {

namespace fs = std::filesystem;

// The flag that lets a run work in a system folder anyway.
inline constexpr const char* kAllowSystemFolderFlag = "--allow-system-folder";

// `folder` (canonical) is a system folder or lies in one: refused unless
// `allowed` (then said in `notices`). `home`: the user's home, inside which
// nothing is a system folder (root's projects in /root/src).
Status check_run_folder_place(const fs::path& folder, const fs::path& home, bool allowed,
                              std::vector<Notice>& notices);
// A notice for each file or folder directly in `folder` that a login or the
// system runs (.bashrc, .profile, cron.d, profile.d, ...).
std::vector<Notice> run_folder_startup_files(const fs::path& folder);

}  // namespace px::run
