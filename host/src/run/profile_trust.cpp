#include "run/profile_trust.hpp"

#include <git2.h>

#include <memory>

#include "common/libgit2.hpp"
#include "common/paths.hpp"

namespace px::run {

namespace fs = std::filesystem;

GitState git_state(const fs::path& file) {
  libgit2_init();
  git_repository* raw = nullptr;
  const std::string dir = file.parent_path().string();
  if (git_repository_open_ext(&raw, dir.c_str(), 0, nullptr) != 0) {
    git_error_clear();
    return GitState::outside;
  }
  std::unique_ptr<git_repository, void (*)(git_repository*)> repo(raw, git_repository_free);
  const char* workdir = git_repository_workdir(repo.get());
  if (!workdir) return GitState::outside;
  std::error_code ec;
  const fs::path root = fs::canonical(workdir, ec);
  if (ec || !is_within(file, root)) return GitState::outside;
  const std::string relative = file.lexically_relative(root).generic_string();
  unsigned int flags = 0;
  if (git_status_file(&flags, repo.get(), relative.c_str()) != 0) {
    git_error_clear();
    return GitState::untracked_or_changed;  // in neither the index nor HEAD
  }
  return flags == GIT_STATUS_CURRENT ? GitState::tracked_unchanged : GitState::untracked_or_changed;
}

namespace {

// Where the run may write that holds `file`, or empty.
fs::path writable_root_of(const fs::path& file, const policy::Policy& policy) {
  for (const auto& g : policy.grants())
    if (g.access == policy::Access::write && is_within(file, g.path)) return g.path;
  return {};
}

std::string at_line(int line) {
  return line > 0 ? " (line " + std::to_string(line) + ")" : "";
}

// What a profile adds that a run could use to reach further, one item each.
std::vector<std::string> widenings(const policy::Profile& p) {
  std::vector<std::string> out;
  for (const auto& e : p.write) out.push_back("write " + e.value + at_line(e.line));
  for (const auto& e : p.dangerously_writable)
    out.push_back("dangerously_writable " + e.value + at_line(e.line));
  if (p.dangerously_allow_home)
    out.push_back("dangerously_allow_home" + at_line(p.dangerously_allow_home_line));
  for (const auto& e : p.read) out.push_back("read " + e.value + at_line(e.line));
  if (p.network_mode && *p.network_mode == policy::NetworkMode::online)
    out.push_back("network online" + at_line(p.network_mode_line));
  for (const auto& h : p.hosts) out.push_back("allow " + h.value + at_line(h.line));
  for (const auto& port : p.ports) out.push_back("port " + port.value + at_line(port.line));
  if (p.local_servers.value_or(false)) out.push_back("local servers" + at_line(p.local_servers_line));
  for (const auto& e : p.env_pass) out.push_back("pass " + e.value + at_line(e.line));
  for (const auto& e : p.env_keep) out.push_back("keep " + e.value + at_line(e.line));
  if (p.forbid_new_git && !*p.forbid_new_git)
    out.push_back("forbid_new_git: false" + at_line(p.forbid_new_git_line));
  return out;
}

}  // namespace

Status check_profile_files(const std::vector<policy::Profile>& profiles, const policy::Policy& policy,
                           std::vector<Notice>& notices) {
  for (const auto& p : profiles) {
    if (p.source_file.empty()) continue;
    const fs::path root = writable_root_of(p.source_file, policy);
    const GitState git = git_state(p.source_file);
    if (git == GitState::tracked_unchanged || (root.empty() && git == GitState::outside)) continue;
    const std::string where = p.source_file.string() +
                              (root.empty() ? " lies in a git working tree, where runs work,"
                                            : " lies in " + root.string() + ", which a run may write,") +
                              " and git does not track it as it is";
    for (const auto& c : p.broker.credentials) {
      if (c.off || c.amends) continue;
      const bool command = c.spec.source.kind == broker::SecretSource::Kind::command;
      return Error::policy(
          where + ": its credential \"" + c.spec.name + "\"" + at_line(c.line) + " " +
          (command ? "names a command that parallex would run outside the seal, as you"
                   : "would send a secret of yours to the hosts the file names") +
          ", and a run may have written that. Keep the profile where runs cannot write (for example "
          "~/.config/parallex/profiles/NAME.yaml, then --profile NAME), or commit it after you have read it");
    }
    const auto wider = widenings(p);
    if (wider.empty()) continue;
    std::string list;
    for (const auto& w : wider) list += (list.empty() ? "" : ", ") + w;
    notices.push_back(
        {NoticeKind::alert, where + "; a run may have written what it adds to this run: " + list +
                                ". Read it, then commit it or keep it where runs cannot write"});
  }
  return ok();
}

}  // namespace px::run
