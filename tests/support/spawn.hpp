#pragma once
// Running programs from tests: a command waited for with its output kept, a
// background one killed with its process group, and the small file and PATH
// helpers that go with them.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace px::test {

struct Outcome {
  int status = -1;  // the exit status, or 128 + the signal
  std::string out;
  std::string err;
};

// Runs argv (looked up in PATH) with this process's environment plus `extra`
// ("NAME=value"), stdin from `input` (empty: nothing), stdout and stderr kept
// in files under `dir`; killed with its process group after `timeout`.
Outcome spawn_and_wait(const std::vector<std::string>& argv, const std::vector<std::string>& extra,
                       const std::filesystem::path& dir,
                       std::chrono::seconds timeout = std::chrono::seconds(120),
                       const std::string& input = {});

// A background process killed (with its process group) when destroyed.
class Background {
 public:
  explicit Background(const std::vector<std::string>& argv, const std::vector<std::string>& extra = {});
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

 private:
  pid_t pid_ = -1;
};

// What a shell command (sh -c) writes to its standard output, whole ("" when
// it cannot be started); its exit status is not looked at.
std::string shell_output(const std::string& command);

// The whole file ("" when it cannot be read).
std::string slurp(const std::filesystem::path& file);

// Whether `tool` is found in PATH.
bool have(const std::string& tool);

}  // namespace px::test
