// Parallex plugin SDK — JSON for transcript sessions, with nlohmann/json.
//
// A session is one JSON object in the shape docs/transcripts.md gives. Build
// it as an nlohmann::json and hand it over with emit_session: strings are
// escaped by the library, and bytes that are not UTF-8 (a file name, a
// command's output) become U+FFFD instead of failing the session.
//
//   parallex::sdk::Json session{{"session_id", id}, {"cwd", cwd}, {"commands", Json::array()}};
//   session["commands"].push_back({{"command", line}, {"exit_code", 0}, {"status", "success"}});
//   parallex::sdk::emit_session(out, session);
//
// Needs nlohmann/json 3.4 or later (Debian: nlohmann-json3-dev, a dependency
// of parallex-dev); find_package(ParallexSDK) finds it for Parallex::sdk.
#pragma once

#include <nlohmann/json.hpp>
#include <parallex/plugin.hpp>
#include <string>

namespace parallex::sdk {

using Json = nlohmann::json;

// The session as the text the host reads: compact, invalid UTF-8 replaced.
inline std::string session_text(const Json& session) {
  return session.dump(-1, ' ', false, Json::error_handler_t::replace);
}

inline void emit_session(TranscriptOutput& out, const Json& session) {
  out.session(session_text(session));
}

}  // namespace parallex::sdk
