#pragma once
// The ports of this user's live `parallex ui` servers, so that a run's proxy
// never opens one to the run, Local servers or not (docs/ui.md, "A run can
// never reach it"). Each server keeps a file runtime/ui/<pid>.port holding
// its port and an flock on it for as long as it serves: a server that died
// (SIGKILL, a crash) leaves a file nobody holds, which is not a live port. The
// runtime folder is the user's (0700) and hidden from every run, so a run can
// neither read nor plant one; a file planted there anyway could only make the
// proxy refuse one port more, never open one.
#include <cstdint>
#include <filesystem>
#include <vector>

#include "common/error.hpp"
#include "common/unique_fd.hpp"

namespace px {

// Held by a UI server while it serves: the file is removed when this goes.
class UiPortFile {
 public:
  UiPortFile() = default;
  UiPortFile(UiPortFile&&) = default;
  UiPortFile& operator=(UiPortFile&&) = default;
  ~UiPortFile();
  // Written, locked and in place before it returns (the proxy sees the port
  // from then on).
  static Result<UiPortFile> publish(const std::filesystem::path& runtime_dir, std::uint16_t port);

 private:
  std::filesystem::path path_;
  UniqueFd fd_;  // holds the lock
};

// The ports of the live UI servers (their files locked); files left by dead
// ones are skipped.
std::vector<std::uint16_t> live_ui_ports(const std::filesystem::path& runtime_dir);

}  // namespace px
