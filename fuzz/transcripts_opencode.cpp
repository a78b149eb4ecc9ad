// libFuzzer target: opencode parser. An input starting with the SQLite header is written as
// opencode.db; any other input is split on "\n--\n" into a session file, a message file and
// part files of the JSON storage layout.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "parallex_transcripts/opencode.hpp"
#include "transcripts_fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& root = px_fuzz::scratch_dir();
  std::filesystem::remove_all(root + "/storage");
  std::filesystem::remove(root + "/opencode.db");
  std::string_view in(reinterpret_cast<const char*>(data), size);
  if (in.substr(0, 15) == "SQLite format 3") {
    px_fuzz::write_file(root + "/opencode.db", in);
  } else {
    int n = 0;
    while (true) {
      std::size_t cut = in.find("\n--\n");
      std::string_view piece = in.substr(0, cut);
      std::string path;
      if (n == 0)
        path = root + "/storage/session/global/ses_a.json";
      else if (n == 1)
        path = root + "/storage/message/ses_a/msg_a.json";
      else
        path = root + "/storage/part/msg_a/prt_" + std::to_string(n) + ".json";
      px_fuzz::write_file(path, piece);
      ++n;
      if (cut == std::string_view::npos || n > 64) break;
      in.remove_prefix(cut + 4);
    }
  }
  px_fuzz::check(parallex::transcripts::opencode::parse({root}));
  return 0;
}
