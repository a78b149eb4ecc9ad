#pragma once
// What the plugin host and a plugin's answers are made of: plain data, the
// same in the plugins' process and in the host (wire.hpp carries it across).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace px::pluginhost {

struct CommandLine {
  std::vector<std::string> argv;
  std::string resolved_path;
  std::string resolved_real;
};

struct Detection {
  int confidence = 0;
  std::string reason;
};

struct SignInStep {
  enum class Kind { copy_file, instruction } kind = Kind::instruction;
  std::string from, to, text;
};

struct TranscriptSessions {
  std::vector<std::string> sessions;                          // JSON objects as the plugin emitted them
  std::vector<std::pair<std::string, std::string>> warnings;  // path, message
};
// Takes each session's JSON text as the plugin gives it, valid during the call
// only, instead of the result's keeping them all.
using SessionSink = std::function<void(std::string_view)>;

// What a plugin is, read from its descriptor when it loads.
struct PluginInfo {
  std::string name, version, description, harness;
  int abi_major = 0, abi_minor = 0;
  bool has_transcripts = false;
  bool has_sign_in = false;
};

// The callback a call is in, as messages name it ("crashed in detect").
enum class Stage {
  load,
  detect,
  contribute,
  project_files,
  home_files,
  sign_in,
  transcript_roots,
  parse_transcripts
};
const char* to_string(Stage stage);

}  // namespace px::pluginhost
