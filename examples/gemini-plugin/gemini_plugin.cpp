// Parallex plugin for Gemini CLI (npm @google/gemini-cli): an example of a
// harness plugin written outside the Parallex tree, against the installed SDK.
//
// What only this plugin knows: how to recognise Gemini CLI on a command line,
// where it keeps its state (~/.gemini), which variables carry its credentials,
// and how its sandbox is switched off inside ours.
#include <parallex/plugin.hpp>

namespace {

class GeminiPlugin final : public parallex::sdk::Plugin {
 public:
  std::optional<parallex::sdk::Detection> detect(const parallex::sdk::Command& command) override {
    return parallex::sdk::detect_program(command, {{"gemini"}, {"@google/gemini-cli"}});
  }

  void contribute(const parallex::sdk::ContributeInput& in, parallex::sdk::Contribution& out) override {
    // ~/.gemini holds its settings, sign-in (oauth_creds.json) and chat history.
    out.read_write("~/.gemini", "Gemini CLI's settings, sign-in and history");
    out.keep_env("GEMINI_API_KEY", "Gemini CLI's API key");
    out.keep_env("GOOGLE_API_KEY", "Gemini CLI's API key (Vertex AI)");
    out.keep_env("GOOGLE_CLOUD_PROJECT", "the Google Cloud project Gemini CLI bills");
    // Gemini's own sandbox (docker/podman/seatbelt) cannot start inside ours.
    out.nested_sandbox_env("GEMINI_SANDBOX", "false", "Gemini CLI's own sandbox cannot nest inside the seal");
    out.suggested_host("generativelanguage.googleapis.com", "the Gemini API");
    if (in.platform == parallex::sdk::Platform::MacOS)
      out.read("~/Library/Application Support/gemini", "Gemini CLI's macOS support files");
  }
};

}  // namespace

PARALLEX_PLUGIN(GeminiPlugin, "gemini", "0.1.0", "Gemini CLI", "Runs Google's Gemini CLI (example third-party plugin)")
