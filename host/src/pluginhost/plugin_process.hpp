#pragma once
// Plugins run in a process of their own, never in the host: a crash, an
// abort, an exit or a hang in a plugin's code (its constructor, detect,
// contribute, any callback) ends or stops that process, and the host says
// which plugin did it in which callback and goes on with the others.
//
// The process is a fork of the host made on the first call; it loads the
// plugin files it is told, serves one request at a time over a socket pair
// (wire.hpp), and ends when the host closes its end or dies (PDEATHSIG). Each
// call has a time limit (PARALLEX_PLUGIN_TIMEOUT seconds; 10 by default, 300
// for reading transcripts); past it the process is killed. After a crash or
// a hang the plugin is broken for the rest of the command: its calls fail at
// once with the same reason, and the next call to another plugin starts a new
// process that loads every plugin but the broken ones.
//
// Safety of the fork: the host may run other threads (the MCP server's). The
// child calls only what glibc keeps usable after a fork (malloc, the dynamic
// loader, stdio, whose locks it resets), the plugin's own code (never loaded
// in the host, so no lock of a plugin is held across the fork), and write(2);
// it never logs through spdlog, whose lock another thread may have held. A
// lock held all the same would be a hang, and a hang is bounded by the limit.
// The child closes every descriptor of the host but the socket, reads
// /dev/null, and writes to stderr (its stdout too: a plugin printing must
// not corrupt the host's output, a `--json` answer).
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "pluginhost/types.hpp"
#include "pluginhost/wire.hpp"

namespace px::pluginhost {

class PluginProcess {
 public:
  PluginProcess() = default;
  ~PluginProcess();
  PluginProcess(const PluginProcess&) = delete;
  PluginProcess& operator=(const PluginProcess&) = delete;

  // Loads `file` as plugin `index` (an index the caller chooses, once each).
  // An error names the file: a load error, or a crash while loading.
  Result<PluginInfo> load(std::size_t index, const std::filesystem::path& file);
  // A call of plugin `index` (loaded), `op` with `args`; the answer's value.
  // Answers are kept: the same call again is answered without the process
  // (but transcripts, which change, are read again). The answer's text parts
  // (wire::write_part) go to `on_part` as they arrive when there is one, else
  // into the answer's "parts".
  Result<wire::Json> call(std::size_t index, Stage stage, const std::string& op, wire::Json args,
                          const SessionSink& on_part = {});
  // Why plugin `index` is broken (it crashed or hung), if it is.
  std::optional<std::string> broken(std::size_t index) const;

  // The time limit of one call in `stage`.
  static std::chrono::milliseconds time_limit(Stage stage);

 private:
  struct Plugin {
    std::filesystem::path file;
    std::string name;  // empty until loaded
    std::optional<std::string> broken;
  };
  Status start();
  void stop();
  // Forgets a process that ended while idle (see reap_if_gone in the .cpp).
  void reap_if_gone();
  // One request, its answer (or why there is none: the process is then gone).
  Result<wire::Json> exchange(const wire::Json& request, std::size_t index, Stage stage,
                              const SessionSink& on_part = {});
  std::string who(std::size_t index) const;

  mutable std::mutex mu_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::map<std::size_t, Plugin> plugins_;
  std::map<std::string, Result<wire::Json>> answers_;  // by encoded request
};

}  // namespace px::pluginhost
