#pragma once
// Codex's apply_patch format ("*** Begin Patch" ... "*** End Patch"), used by Codex
// and by opencode's patch/apply_patch tools.
#include <string>
#include <string_view>
#include <vector>

namespace parallex::transcripts {

struct PatchOp {
  std::string action;  // create | delete | modify | move
  std::string path;    // as written in the patch (relative to the tool's cwd)
  std::string from;    // move only: the source path
};

// File operations of a patch, in patch order.
std::vector<PatchOp> parse_apply_patch(std::string_view patch);

// A shell script that is an apply_patch invocation (`apply_patch <<'EOF' ...`, optionally
// after `cd DIR &&`): returns true and the patch text, plus DIR when present.
bool extract_patch_invocation(std::string_view script, std::string& patch, std::string& cd_dir);

}  // namespace parallex::transcripts
