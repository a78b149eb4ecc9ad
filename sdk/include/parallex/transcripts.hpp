// Parallex plugin SDK — a transcript parser bound to a plugin.
//
// A parser in the shape of Parallex's own (plugins/transcripts/): a function
// that reads files or folders within a time window into sessions and
// warnings, and one that names where the harness keeps them under a home.
// Deriving from ReadsTranscripts gives a plugin its three transcript methods:
//
//   class MyPlugin final : public parallex::sdk::ReadsTranscripts<&my::parse, &my::roots> { ... };
//
// `Parse(paths, {since_ms, until_ms})` returns a result with `sessions` (JSON
// objects, <parallex/json.hpp>) and `warnings` (each with `path` and
// `message`); `Roots` is `roots(run_home)` or `roots(run_home, run_folder)`.
#pragma once

#include <parallex/json.hpp>
#include <parallex/plugin.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace parallex::sdk {

// Hands a parser's result to the host.
template <class Result>
void emit_transcripts(const Result& result, TranscriptOutput& out) {
  for (const auto& session : result.sessions) {
    if constexpr (std::is_convertible_v<decltype(session), std::string_view>)
      out.session(session);  // already JSON text
    else
      emit_session(out, session);
  }
  for (const auto& warning : result.warnings) out.warning(warning.path, warning.message);
}

template <auto Parse, auto Roots>
class ReadsTranscripts : public Plugin {
 public:
  bool has_transcripts() const final { return true; }
  void parse_transcripts(const TranscriptInput& in, TranscriptOutput& out) final {
    emit_transcripts(Parse(in.paths, {in.since_ms, in.until_ms}), out);
  }
  std::vector<std::string> transcript_roots_in(const TranscriptRootsInput& where) final {
    if constexpr (std::is_invocable_v<decltype(Roots), const std::string&, const std::string&>)
      return Roots(where.run_home, where.run_folder);
    else
      return Roots(where.run_home);
  }
};

}  // namespace parallex::sdk
