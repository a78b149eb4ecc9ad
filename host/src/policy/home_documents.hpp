#pragma once
// The keys of a harness's JSON or TOML file, compared and merged key by key
// (policy/home_files.hpp says which keys are data and which run commands).
// A TOML file is read with toml++ into the same tree as JSON; it is never
// written back from that tree (that would lose its comments and layout): a
// TOML file is only ever replaced whole, by what the harness itself wrote.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "policy/home_files.hpp"

namespace px::policy::home {

using nlohmann::json;

// The document in `text` (JSON may hold comments, as opencode's .jsonc does).
// Empty text is an empty document. An error says what is wrong and where.
Result<json> read_document(const std::string& text, HomeFormat format);

// One key that differs between two versions of a document: its value before
// (none: absent) and after (none: removed), and what the key is.
struct KeyChange {
  std::vector<std::string> key;
  std::optional<json> before, after;
  HomeKind kind = HomeKind::data;
  std::string reason;  // the rule's, or empty
};

// The keys `after` changed against `before`, as finely as objects nest: an
// object is compared key by key, anything else (arrays too) as one value. A
// subtree added or removed whole is one change unless a rule lies below it.
// A change at a key that has rules below it is a setting (what it replaces
// could hold one).
std::vector<KeyChange> diff_documents(const json& before, const json& after, const HomeFile& file);

// Sets (or removes) each changed key in `doc`, making objects on the way.
void apply_changes(json& doc, const std::vector<KeyChange>& changes);

// "  + mcpServers.evil = {"command":"sh"}" lines, values shortened.
std::vector<std::string> describe_changes(const std::vector<KeyChange>& changes);

// A JSON document as harnesses write theirs: two spaces, a final newline.
std::string render_json(const json& doc);

nlohmann::json to_json(const KeyChange& change);
KeyChange key_change_from_json(const nlohmann::json& j);

}  // namespace px::policy::home
