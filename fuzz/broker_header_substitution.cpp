// libFuzzer target for brokered credentials on what a client sends: the input
// is a request head (and whatever follows, as a body), sent once to the host
// the credential is bound to and once to another host. To the bound host, the
// secret may appear only where a placeholder was; to the other host, a request
// that carries the placeholder is always refused. The body scanner and the
// response replacer run over the rest in pieces.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "broker/credentials.hpp"
#include "proxy/request_parser.hpp"

namespace {

const std::string kSecret = "ghp_FUZZs3cretFUZZs3cretFUZZs3cret012345";
// Fixed (not drawn) so that a corpus can hold it.
const std::string kPlaceholder = "ghp_Pl4ceh0lderPl4ceh0lderPl4ceh0lder987";

const px::broker::CredentialSet& credentials() {
  static const px::broker::CredentialSet set =
      px::broker::CredentialSet::from_resolved(
          {px::broker::Credential{"github", kSecret, kPlaceholder, {"github.com"}, {"x-token"}, {}}})
          .value();
  return set;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace px;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  proxy::Request request;
  const auto parsed = proxy::parse_request_head(input, proxy::HeadLimits{}, request);
  if (parsed.state == proxy::ParseState::good) {
    const bool carried = input.substr(0, request.head_size).find(kPlaceholder) != std::string_view::npos;
    proxy::Request bound = request;
    const auto out = credentials().apply_to_head("github.com", bound);
    if (out.exfiltration) __builtin_trap();  // bound: never an exfiltration
    std::string after;
    for (const auto& h : bound.headers) after += h.value;
    std::string before;
    for (const auto& h : request.headers) before += h.value;
    if (after.find(kSecret) != std::string::npos && before.find(kSecret) == std::string::npos &&
        out.substituted.empty()) {
      __builtin_trap();  // a secret appeared without a substitution being reported
    }
    proxy::Request elsewhere = request;
    const auto refused = credentials().apply_to_head("evil.example", elsewhere);
    if (carried && !refused.exfiltration) __builtin_trap();
    if (!refused.substituted.empty()) __builtin_trap();
  }
  // The rest, in pieces of the first byte's size.
  const std::size_t piece = size > 0 ? (static_cast<unsigned char>(input[0]) % 61) + 1 : 1;
  auto scanner = credentials().body_scanner("evil.example");
  auto replacer = credentials().response_replacer("github.com");
  std::string replaced;
  int found = -1;
  for (std::size_t at = 0; at < input.size(); at += piece) {
    const auto part = input.substr(at, piece);
    if (found < 0) found = scanner.feed(part);
    std::string piece_out(part);
    replacer.feed(piece_out);
    replaced += piece_out;
  }
  replaced += replacer.finish();
  if (replaced.size() != input.size()) __builtin_trap();
  if (replaced.find(kSecret) != std::string::npos) __builtin_trap();
  if (input.find(kPlaceholder) != std::string_view::npos && found < 0) __builtin_trap();
  return 0;
}
