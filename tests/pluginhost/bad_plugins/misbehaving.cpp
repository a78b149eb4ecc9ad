// A plugin that fails the way a buggy plugin does, where and how
// $MISBEHAVE says ("HOW:WHERE"): HOW is crash (a real null-pointer write),
// abort, hang, exit or throw; WHERE is constructor, detect, contribute,
// project_files, home_files or parse_transcripts. "scratch-file:home_files" declares a JSON
// file scratch, which only a folder or a file taken whole may be; "forge:parse_transcripts"
// writes the host a text part and an answer that takes none, straight to the plugins' socket
// (fd 3), as only a hostile plugin would. It reads transcripts when $MISBEHAVE_TRANSCRIPTS is
// set: each path given comes back as a session, in order, but for two: /t/not-json comes back
// as a text that is not JSON, and at /t/crash it crashes, after the sessions before it were sent.
// It claims commands whose program is
// `misbehave`, so that it is the harness of a run only when asked to be.
#include <unistd.h>

#include <cstdlib>
#include <parallex/plugin.hpp>
#include <stdexcept>
#include <string>

namespace {

void misbehave(const std::string& where) {
  const char* spec = std::getenv("MISBEHAVE");
  if (!spec) return;
  const std::string s = spec;
  const auto colon = s.find(':');
  if (colon == std::string::npos || s.substr(colon + 1) != where) return;
  const std::string how = s.substr(0, colon);
  if (how == "crash") {
    // The pointer itself volatile: the compiler cannot see it is null and
    // turn the write into a trap (SIGILL); this is a real SIGSEGV.
    int* volatile nowhere = nullptr;
    *nowhere = 1;
  }
  if (how == "abort") std::abort();
  if (how == "hang")
    for (;;) ::pause();
  if (how == "exit") std::_Exit(3);
  if (how == "throw") throw std::runtime_error(where + " failed on purpose");
  if (how == "forge") {
    // A frame is a 4-byte length and its bytes: a part (a 0 byte, the text),
    // then the CBOR map {"ok": "x"}.
    const unsigned char part[] = {0, 0, 0, 2, 0, 'x'};
    const unsigned char answer[] = {0, 0, 0, 6, 0xA1, 0x62, 'o', 'k', 0x61, 'x'};
    if (::write(3, part, sizeof part) < 0 || ::write(3, answer, sizeof answer) < 0) std::_Exit(4);
  }
}

class Misbehaving final : public parallex::sdk::Plugin {
 public:
  Misbehaving() { misbehave("constructor"); }
  std::optional<parallex::sdk::Detection> detect(const parallex::sdk::Command& c) override {
    misbehave("detect");
    if (!c.argv.empty() && parallex::sdk::basename_of(c.argv[0]) == "misbehave")
      return parallex::sdk::Detection{95, "the program is misbehave"};
    return std::nullopt;
  }
  void contribute(const parallex::sdk::ContributeInput&, parallex::sdk::Contribution& out) override {
    misbehave("contribute");
    out.state_dir("~/.misbehaving", "its state");
  }
  std::vector<ProjectFile> project_files() override {
    misbehave("project_files");
    return {{".misbehaving.json", "hooks it runs"}};
  }
  bool has_transcripts() const override { return std::getenv("MISBEHAVE_TRANSCRIPTS") != nullptr; }
  void parse_transcripts(const parallex::sdk::TranscriptInput& in,
                         parallex::sdk::TranscriptOutput& out) override {
    misbehave("parse_transcripts");
    for (const auto& path : in.paths) {
      if (path == "/t/crash") {
        int* volatile nowhere = nullptr;  // as in misbehave(): a real SIGSEGV
        *nowhere = 1;
      }
      out.session(path == "/t/not-json" ? std::string("not json") : "{\"session_id\":\"" + path + "\"}");
    }
    out.warning("/nowhere", "nothing there");
  }
  std::vector<parallex::sdk::HomeFile> home_files(parallex::sdk::Platform) override {
    misbehave("home_files");
    const char* spec = std::getenv("MISBEHAVE");
    if (spec && std::string(spec) == "scratch-file:home_files")
      return {{"~/.misbehaving.json",
               false,
               parallex::sdk::HomeKind::scratch,
               parallex::sdk::HomeFormat::json,
               {},
               "a state file"}};
    return {parallex::sdk::HomeFile::data_dir("~/.misbehaving", "its state")};
  }
};

}  // namespace

PARALLEX_PLUGIN(Misbehaving, "misbehaving", "0.1.0", "Misbehaving", "Crashes, aborts or hangs where told")
