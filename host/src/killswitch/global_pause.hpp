#pragma once
// The global pause: `parallex pause --all` writes runtime/paused, then tells
// every live supervisor to pause. The file pauses NEW runs from their start
// (RunControl::attach); the runs already going are held paused by
// their supervisors until `parallex resume` asks them over their sockets, so
// deleting the file, or killing the pause command, resumes nothing.
#include <filesystem>
#include <optional>
#include <string>

#include "common/error.hpp"

namespace px::killswitch {

namespace fs = std::filesystem;

fs::path pause_file(const fs::path& runtime_dir);
// Writes the pause file (0600): {"since": ISO time, "by": who}.
Status set_global_pause(const fs::path& runtime_dir, const std::string& by);
void clear_global_pause(const fs::path& runtime_dir);
// The pause file's "since", or nullopt when there is no global pause.
std::optional<std::string> global_pause_since(const fs::path& runtime_dir);

}  // namespace px::killswitch
