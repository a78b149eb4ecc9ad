// libFuzzer target: Claude Code JSONL parser on arbitrary file contents.
#include <cstddef>
#include <cstdint>

#include "parallex_transcripts/claude_code.hpp"
#include "transcripts_fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string file = px_fuzz::scratch_dir() + "/projects/p/s.jsonl";
  px_fuzz::write_file(file, {reinterpret_cast<const char*>(data), size});
  px_fuzz::check(parallex::transcripts::claude_code::parse({px_fuzz::scratch_dir()}));
  return 0;
}
