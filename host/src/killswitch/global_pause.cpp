#include "killswitch/global_pause.hpp"

#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "common/json_io.hpp"
#include "common/read_file.hpp"
#include "common/replace_file.hpp"
#include "killswitch/registry.hpp"

namespace px::killswitch {

fs::path pause_file(const fs::path& runtime_dir) {
  return runtime_dir / "paused";
}

Status set_global_pause(const fs::path& runtime_dir, const std::string& by) {
  PX_TRY(ensure_private_dir(runtime_dir));
  return replace_file(pause_file(runtime_dir),
                      to_json_text(nlohmann::json{{"since", utc_now_iso()}, {"by", by}}) + "\n");
}

void clear_global_pause(const fs::path& runtime_dir) {
  ::unlink(pause_file(runtime_dir).c_str());
}

std::optional<std::string> global_pause_since(const fs::path& runtime_dir) {
  const auto text =
      read_regular_file(pause_file(runtime_dir), {.max_bytes = 64 * 1024, .follow_links = false});
  if (!text && text.error().kind == ErrorKind::not_found) return std::nullopt;
  // Anything else there (unreadable, damaged) still holds the runs: a pause
  // is never lifted by a file that cannot be read.
  const auto j = text ? parse_json_input(text.value()) : nlohmann::json(nlohmann::json::value_t::discarded);
  if (j.is_object() && j.contains("since") && j["since"].is_string()) return j["since"].get<std::string>();
  return std::string("an unknown time");
}

}  // namespace px::killswitch
