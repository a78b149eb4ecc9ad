#pragma once
// What in a git dir makes git run a program: the rules the supervisor checks
// a run's leftovers in .git against (protect/quarantine.hpp), and the
// small readers they need. Text only: nothing here touches the filesystem.
//
// A config is judged by an allowlist: the keys git writes when it clones,
// initialises a submodule or adds a worktree (core's plain settings, remotes,
// branches, submodules' URLs), with URLs that name no transport program
// (ext::, fd::). Anything else — core.fsmonitor, core.hooksPath,
// core.sshCommand, filter/diff/merge drivers, credential helpers, aliases,
// include and includeIf, submodule.*.update — names or may name a program,
// and an unknown key is treated as one.
#include <string>
#include <string_view>
#include <vector>

namespace px {

struct GitConfigEntry {
  std::string key;  // "section.subsection.name", section and name lowercased
  std::string value;
  int line = 0;
};

// Parses git's config syntax ([section "sub"], [section.sub], name = value,
// continuation lines, comments). `ok` false: a line git would not read, or
// that this reader does not understand (then nothing in the file is trusted).
std::vector<GitConfigEntry> parse_git_config(std::string_view text, bool& ok);

// The entries of `text` that may make git run a program, one "key (line N)"
// each; empty when the config is safe to leave.
std::vector<std::string> unsafe_git_config(std::string_view text);

// The lines of a gitattributes file that select a filter, diff or merge
// driver (other than git's built-in diff patterns): a driver runs a program
// its config names.
std::vector<std::string> unsafe_git_attributes(std::string_view text);

// A submodule's URL as `git submodule init` writes it: a relative URL
// ("../lib.git") resolved against the superproject's remote URL (or, without
// one, its folder); anything else as it is.
std::string resolve_submodule_url(std::string_view url, std::string_view remote_url);

}  // namespace px
