#pragma once
// The expectation matrix (tests/policy/expectations/*.yaml): for a policy
// set-up, a list of operations and whether they must be allowed or denied.
// Every backend checks the same rows: the Policy's oracle and the Seatbelt
// profile (tests/policy/matrix_test.cpp), the Linux backend for real (a probe
// inside the sandbox tries each row).
//
// File format:
//   description: what the set-up shows
//   setup:
//     profiles: [developer]       # embedded profiles layered on the default one
//     agent: true                 # an agent run: $HOME is {agent_home}
//     grants: [{path: "{home}", access: ro}]   # --grant PATH[:ro|:rw]
//     network: {online: false, offline: false, allow: [github.com], local_servers: true}
//     files: ["{outside}/data/more.txt"]       # created besides the standard layout
//   rows:
//     - {op: read, path: "{run_folder}/src/main.c", expect: allowed}
//     - {op: connect, host: api.github.com, port: 443, expect: allowed}
// Ops: read, write, create_git (make a `.git` at path), connect (port defaults to 443).
// Placeholders: {run_folder} {home} {agent_home} {temp} {outside}; Layout::create
// makes real directories for them, with a standard set of files (see layout_files()).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "policy/compose.hpp"

namespace px::expectations {

namespace fs = std::filesystem;

enum class Op { read, write, create_git, connect };
const char* to_string(Op op);

struct Row {
  Op op = Op::read;
  std::string path;  // read, write, create_git (placeholders until resolved)
  std::string host;  // connect
  std::uint16_t port = 443;
  bool allowed = false;
  int line = 0;
  // "read {run_folder}/x -> allowed (file.yaml:12)"
  std::string describe(const fs::path& file) const;
};

struct Grant {
  std::string path;
  policy::Access access = policy::Access::read;
};

struct Setup {
  std::vector<std::string> profiles;  // layered after "default"
  bool agent = false;
  std::vector<Grant> grants;
  bool online = false;
  bool offline = false;
  std::vector<std::string> allow;
  std::optional<bool> local_servers;
  std::vector<std::string> files;
};

struct Expectations {
  fs::path file;
  std::string description;
  Setup setup;
  std::vector<Row> rows;
};

// Strict: an unknown key, a wrong type or a bad op is an error naming file, line and key.
Result<Expectations> load(const fs::path& file);

// tests/policy/expectations in the source tree.
fs::path expectations_dir();
// Every *.yaml there, sorted.
std::vector<fs::path> expectation_files(const fs::path& dir = expectations_dir());

// Real directories for the placeholders, under a fresh directory (removed by
// the destructor). `base` defaults to $TMPDIR or /tmp; a backend that mounts a
// private /tmp can choose another.
class Layout {
 public:
  static Result<Layout> create(const fs::path& base = {});
  Layout(Layout&& other) noexcept;
  Layout& operator=(Layout&&) = delete;
  Layout(const Layout&) = delete;
  ~Layout();

  fs::path root, home, agent_home, run_folder, temp, outside;

  // Replaces every placeholder; an unknown {name} is an error.
  Result<std::string> substitute(const std::string& text) const;
  // Creates the files a set-up lists (besides the standard layout).
  Status materialize(const Expectations& e) const;
  // The rows with placeholders replaced.
  Result<std::vector<Row>> resolve(const std::vector<Row>& rows) const;

 private:
  Layout() = default;
  bool owned_ = true;
};

// The standard files every layout has (relative to the placeholders, e.g.
// "{home}/.ssh/id_ed25519"), so rows can read existing files.
const std::vector<std::string>& layout_files();

// The inputs of px::policy::compose for this set-up: the embedded default
// profile, then setup.profiles, the agent, grants and network flags.
Result<policy::ComposeInputs> compose_inputs(const Expectations& e, const Layout& layout,
                                             policy::Platform platform = policy::Platform::linux_host);

}  // namespace px::expectations
