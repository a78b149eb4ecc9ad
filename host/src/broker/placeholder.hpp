#pragma once
// What a brokered secret looks like inside a run: a placeholder of the same
// shape (prefix, length, separators, alphabet), random per run, never the
// secret. Clients that check a token's format (gh, the model SDKs) start with
// it; only the broker knows which secret it stands for.
#include <string>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace px::broker {

// "github-token" (ghp_ gho_ ghu_ ghs_ ghr_ github_pat_), "anthropic-key"
// (sk-ant-), "openai-key" (sk-), "jwt" (a JSON Web Token), or "opaque".
std::string_view shape_of(std::string_view secret);

// The literal prefix a placeholder keeps ("ghp_", "sk-ant-api03-", "sk-proj-",
// ...); empty for an opaque secret.
std::string_view known_prefix(std::string_view secret);

// A placeholder for `secret`: the known prefix kept, every separator ('-' '_'
// '.' '=') kept in place, every other character drawn at random (RAND_bytes)
// from the alphabet the secret uses (digits, lower or upper hex, base62,
// base64). Same length, so substitution never changes a message's length.
// Refuses a secret whose random part carries fewer than 80 bits: its
// placeholder could be guessed, and so could the secret. Never returns the
// secret or a string in `avoid`. `name` is the credential's, for messages.
// A JSON Web Token keeps its header and claims; only its signature is drawn.
Result<std::string> make_placeholder(std::string_view name, std::string_view secret,
                                     const std::vector<std::string>& avoid = {});

}  // namespace px::broker
