// Where profiles come from: the ones built into the binary (parsed when
// parallex was built, decoded here) and the user's files (parsed here).
#include "common/paths.hpp"
#include "common/read_file.hpp"
#include "policy/profile.hpp"
#include "policy/profile_json.hpp"

namespace px::policy {

namespace {
// A profile is a page of YAML; anything larger is not one.
constexpr std::size_t kMaxProfileBytes = 1 << 20;
}  // namespace

Result<Profile> load_profile(const std::string& name_or_file) {
  const bool is_path = name_or_file.find('/') != std::string::npos || name_or_file.ends_with(".yaml") ||
                       name_or_file.ends_with(".yml");
  if (!is_path) {
    // Built in: parsed (and checked) at build time; the binary holds the
    // result, so a run does not pay for the YAML parser.
    for (const auto& e : embedded_profiles())
      if (name_or_file == e.name)
        return profile_from_cbor(e.parsed, e.parsed_size, std::string(e.name) + ".yaml");
  }
  fs::path file = name_or_file;
  if (!is_path) file = parallex_config_dir() / "profiles" / (name_or_file + ".yaml");
  auto text = read_regular_file(file, {.max_bytes = kMaxProfileBytes});
  if (!text) {
    std::string names;
    for (const auto& e : embedded_profiles()) names += (names.empty() ? "" : ", ") + std::string(e.name);
    if (text.error().kind == ErrorKind::not_found || !is_path)
      return Error::not_found("no profile '" + name_or_file + "': it is not a built-in profile (" + names +
                              ") and " + text.error().message);
    return Error::invalid("the profile " + text.error().message + "; give a profile's YAML file or a name (" +
                          names + ")");
  }
  PX_TRY_ASSIGN(auto profile, parse_profile(text.value(), file.string()));
  std::error_code ec;
  profile.source_file = fs::canonical(file, ec);
  if (ec) profile.source_file = normal_absolute(file);
  return profile;
}

}  // namespace px::policy
