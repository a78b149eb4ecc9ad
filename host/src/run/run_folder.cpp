#include "run/run_folder.hpp"

#include <sys/stat.h>

#include <string>

#include "common/paths.hpp"

namespace px::run {
namespace {

// Folders the system runs or reads its configuration from, with everything
// under them. /root counts only above the user's own home (root's projects in
// /root/src are root's own).
constexpr const char* kSystemTrees[] = {"/etc",  "/usr",  "/var", "/boot",  "/efi",   "/opt",    "/srv",
                                        "/bin",  "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/dev",
                                        "/proc", "/sys",  "/run", "/snap",  "/nix",   "/root"};
// Shared folders whose subfolders are anyone's projects, but which as a whole
// hold every user's files (and other programs' sockets and temp files).
constexpr const char* kSharedFolders[] = {"/", "/tmp", "/home", "/mnt", "/media", "/var/tmp", "/dev/shm"};
// Under a system tree, still anyone's own (a project checked out in /var/tmp/x).
constexpr const char* kOwnUnder[] = {"/var/tmp"};

// Start-up files of a login, and folders of files the system runs, as they
// sit directly in a home or in /etc.
constexpr const char* kStartupFiles[] = {".bashrc",
                                         ".bash_profile",
                                         ".bash_login",
                                         ".bash_logout",
                                         ".profile",
                                         ".zshrc",
                                         ".zprofile",
                                         ".zshenv",
                                         ".zlogin",
                                         ".login",
                                         ".cshrc",
                                         ".tcshrc",
                                         ".xprofile",
                                         ".xsession",
                                         ".xinitrc",
                                         ".config/autostart",
                                         ".config/systemd",
                                         ".config/fish/config.fish",
                                         ".ssh/authorized_keys",
                                         ".ssh/rc",
                                         "cron.d",
                                         "crontab",
                                         "profile.d",
                                         "rc.local",
                                         "sudoers",
                                         "sudoers.d",
                                         "systemd/system",
                                         "init.d",
                                         "ld.so.preload"};

}  // namespace

Status check_run_folder_place(const fs::path& folder, const fs::path& home, bool allowed,
                              std::vector<Notice>& notices) {
  const fs::path f = normal_absolute(folder);
  // Below the user's own home (as $HOME says, or as the user database does:
  // root's projects in /root/src with HOME set elsewhere) is the user's own.
  for (const fs::path& h : {home, account_home()})
    if (!h.empty() && h != "/" && is_within(f, normal_absolute(h)) && f != normal_absolute(h)) return ok();
  std::string why;
  for (const char* shared : kSharedFolders)
    if (f == shared) why = "a folder every user's files (and other programs' sockets and temp files) are in";
  if (why.empty()) {
    bool own = false;
    for (const char* under : kOwnUnder)
      if (is_within(f, under) && f != under) own = true;
    for (const char* tree : kSystemTrees)
      if (!own && why.empty() && is_within(f, tree))
        why = (f == tree ? std::string("a system folder") : "inside the system folder " + std::string(tree)) +
              ", whose files the system or a login runs outside any seal";
  }
  if (why.empty()) return ok();
  if (allowed) {
    notices.push_back({NoticeKind::weaker_seal, "the run works in " + f.string() + ", " + why + " (" +
                                                    kAllowSystemFolderFlag + "): it may write there"});
    return ok();
  }
  return Error::policy(
      "the run would work in " + f.string() + ", " + why +
      ", and may write the folder it works in: `cd` into a project first, give one with --in "
      "DIR, or pass " +
      kAllowSystemFolderFlag + " if the run must work there");
}

std::vector<Notice> run_folder_startup_files(const fs::path& folder) {
  std::vector<Notice> out;
  std::string found;
  for (const char* name : kStartupFiles) {
    struct stat st {};
    if (::lstat((folder / name).c_str(), &st) == 0) found += (found.empty() ? "" : ", ") + std::string(name);
  }
  if (!found.empty())
    out.push_back({NoticeKind::alert, "the run folder " + folder.string() + " holds " + found +
                                          ", which a login or the system runs outside any seal; the run may "
                                          "change what is there (is this a home or a system folder?)"});
  return out;
}

}  // namespace px::run
