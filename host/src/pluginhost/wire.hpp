#pragma once
// The plugins' process and the host talk in frames: a 4-byte length, then
// CBOR (nlohmann/json's binary form, which keeps every byte of a string as
// the plugin gave it, UTF-8 or not). Requests name an operation and a plugin;
// answers hold the typed result of the callback (types.hpp), an error, or a
// line of the plugin's log.
//
// The host reads an answer as untrusted input: a malformed one is the
// plugin's error, never a crash (decode_* check every field's type).
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "pluginhost/types.hpp"
#include "policy/contribution.hpp"
#include "policy/home_files.hpp"

namespace px::pluginhost::wire {

using Json = nlohmann::json;

// Larger answers are refused (a transcript set of several GB would not fit anyway).
inline constexpr std::uint32_t kMaxFrame = 1u << 30;

std::string encode(const Json& value);
// Not CBOR, or too deep: an error.
Result<Json> decode(std::string_view bytes);

Json to_json(const CommandLine& c);
Json to_json(const std::optional<Detection>& d);
Json to_json(const policy::HarnessContribution& c);
Json to_json(const std::vector<SignInStep>& steps);
Json to_json(TranscriptSessions&& t);  // the sessions moved, not copied
Json to_json(const std::vector<std::string>& strings);
Json to_json(const policy::ProjectFiles& f);
Json to_json(const policy::DeclaredHomeFiles& f);
Json to_json(const PluginInfo& info);

// Each: the value, or an error saying the answer was malformed.
Result<CommandLine> command_line(const Json& j);
Result<std::optional<Detection>> detection(const Json& j);
Result<policy::HarnessContribution> contribution(const Json& j);
Result<std::vector<SignInStep>> sign_in_steps(const Json& j);
// The sessions are moved out of `j` (megabytes of text, not copied).
Result<TranscriptSessions> transcript_sessions(Json&& j);
Result<std::vector<std::string>> strings(const Json& j);
Result<policy::ProjectFiles> project_files(const Json& j);
Result<policy::DeclaredHomeFiles> home_files(const Json& j);
Result<PluginInfo> plugin_info(const Json& j);

// One frame on a blocking descriptor: false when the other side is gone.
bool write_frame(int fd, std::string_view bytes);

// A text part of the answer on its way: a frame of kPart and the text as it
// is, not CBOR (a transcript's session is megabytes, and CBOR's reader takes
// a string a byte at a time). An answer is a CBOR map, whose first byte is
// never kPart. The answer that follows holds the parts (`parts`, in order).
inline constexpr char kPart = '\0';
bool write_part(int fd, std::string_view text);
// A frame read is a part: its text, moved out of `frame`, or seen in place.
bool is_part(const std::string& frame);
std::string part_text(std::string&& frame);
std::string_view part_view(const std::string& frame);

// The next frame into `out`, waiting until `deadline` at most. `closed`: end
// of file, an error, or a length over kMaxFrame.
enum class Read { frame, closed, timeout };
Read read_frame(
    int fd, std::string& out,
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

}  // namespace px::pluginhost::wire
