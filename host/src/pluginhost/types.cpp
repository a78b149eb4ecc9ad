#include "pluginhost/types.hpp"

namespace px::pluginhost {

const char* to_string(Stage stage) {
  switch (stage) {
    case Stage::load:
      return "loading";
    case Stage::detect:
      return "detect";
    case Stage::contribute:
      return "contribute";
    case Stage::project_files:
      return "project_files";
    case Stage::home_files:
      return "home_files";
    case Stage::sign_in:
      return "carry_sign_in";
    case Stage::transcript_roots:
      return "transcript_roots";
    case Stage::parse_transcripts:
      return "parse_transcripts";
  }
  return "a callback";
}

}  // namespace px::pluginhost
