#include "common/apply_patch.hpp"

namespace parallex::transcripts {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

}  // namespace

std::vector<PatchOp> parse_apply_patch(std::string_view patch) {
  std::vector<PatchOp> ops;
  std::size_t pos = 0;
  while (pos <= patch.size()) {
    std::size_t nl = patch.find('\n', pos);
    std::string_view line =
        patch.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? patch.size() + 1 : nl + 1;
    std::string_view t = trim(line);
    if (starts_with(t, "*** Add File:")) {
      ops.push_back({"create", std::string(trim(t.substr(13))), {}});
    } else if (starts_with(t, "*** Delete File:")) {
      ops.push_back({"delete", std::string(trim(t.substr(16))), {}});
    } else if (starts_with(t, "*** Update File:")) {
      ops.push_back({"modify", std::string(trim(t.substr(16))), {}});
    } else if (starts_with(t, "*** Move to:")) {
      if (!ops.empty() && ops.back().action == "modify") {
        ops.back().from = ops.back().path;
        ops.back().path = std::string(trim(t.substr(12)));
        ops.back().action = "move";
      }
    }
  }
  std::vector<PatchOp> kept;
  for (auto& op : ops)
    if (!op.path.empty()) kept.push_back(std::move(op));
  return kept;
}

bool extract_patch_invocation(std::string_view script, std::string& patch, std::string& cd_dir) {
  std::string_view s = trim(script);
  while (!s.empty() && (s.front() == '\n' || s.front() == ' ')) s.remove_prefix(1);
  cd_dir.clear();
  if (starts_with(s, "cd ")) {
    std::size_t amp = s.find("&&");
    if (amp == std::string_view::npos) return false;
    std::string_view dir = trim(s.substr(3, amp - 3));
    if (dir.size() >= 2 && (dir.front() == '\'' || dir.front() == '"') && dir.back() == dir.front())
      dir = dir.substr(1, dir.size() - 2);
    cd_dir = std::string(dir);
    s = trim(s.substr(amp + 2));
  }
  if (!starts_with(s, "apply_patch") && !starts_with(s, "applypatch")) return false;
  std::size_t begin = s.find("*** Begin Patch");
  if (begin == std::string_view::npos) return false;
  std::size_t end = s.find("*** End Patch", begin);
  patch =
      std::string(s.substr(begin, end == std::string_view::npos ? std::string_view::npos : end + 13 - begin));
  return true;
}

}  // namespace parallex::transcripts
