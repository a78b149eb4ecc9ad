#pragma once
// The global pause: `parallex pause --all` writes runtime/paused, then tells
// every live supervisor to pause. The file only holds back NEW runs
// (wait_while_globally_paused); the runs already going are held paused by
// their supervisors until `parallex resume` asks them over their sockets, so
// deleting the file, or killing the pause command, resumes nothing.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "common/error.hpp"

namespace px::supervisor {

namespace fs = std::filesystem;

fs::path pause_file(const fs::path& runtime_dir);
// Writes the pause file (0600): {"since": ISO time, "by": who}.
Status set_global_pause(const fs::path& runtime_dir, const std::string& by);
void clear_global_pause(const fs::path& runtime_dir);
// The pause file's "since", or nullopt when there is no global pause.
std::optional<std::string> global_pause_since(const fs::path& runtime_dir);

// Called by the supervisor before it launches a run: returns at once when
// there is no global pause; else calls notice("...waiting...") once and blocks
// until the pause file is gone (inotify on the runtime dir), or until
// `max_wait` passed (then an error of kind conflict).
Status wait_while_globally_paused(const fs::path& runtime_dir,
                                  const std::function<void(const std::string&)>& notice,
                                  std::chrono::milliseconds max_wait = std::chrono::hours(24 * 365));

}  // namespace px::supervisor
