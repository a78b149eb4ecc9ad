// libFuzzer target: Codex rollout JSONL parser on arbitrary file contents.
#include <cstddef>
#include <cstdint>

#include "parallex_transcripts/codex.hpp"
#include "transcripts_fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string file = px_fuzz::scratch_dir() + "/sessions/2026/01/01/rollout-2026-01-01T00-00-00-0190.jsonl";
  px_fuzz::write_file(file, {reinterpret_cast<const char*>(data), size});
  px_fuzz::check(parallex::transcripts::codex::parse({px_fuzz::scratch_dir()}));
  return 0;
}
