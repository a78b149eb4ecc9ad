// libFuzzer target over the host's reading of a plugin's session text: any
// bytes a plugin sends. What it prints is one JSON object with no control
// byte in it, and the same object nlohmann's parser reads from the input with
// every string masked.
#include "report/session_text.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/json_io.hpp"
#include "common/redact.hpp"

namespace {

using Json = nlohmann::ordered_json;

void mask(Json& v) {
  if (v.is_string())
    v = px::redact(v.get_ref<const std::string&>());
  else if (v.is_structured())
    for (auto& child : v) mask(child);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static px::report::SessionMasker masker;  // reused, as the command reuses it
  const auto out = masker.masked(text, (size & 1) != 0 ? 2 : 0);
  if (!out) return 0;
  const std::string_view printed = out.value();
  for (const char c : printed)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n') std::abort();
  const Json read = px::parse_json_input<Json>(printed);
  if (read.is_discarded() || !read.is_object()) std::abort();
  Json want = px::parse_json_input<Json>(text);
  // nlohmann reads some texts simdjson refuses, never the other way round.
  if (want.is_discarded() || !want.is_object()) std::abort();
  mask(want);
  if (read != want) std::abort();
  return 0;
}
