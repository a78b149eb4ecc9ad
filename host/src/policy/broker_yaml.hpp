#pragma once
// The broker's sections of a profile and of agent.yaml (docs/broker.md):
//
//   requests:                      # request rules per host: the host is terminated
//     github.com:
//       - allow: GET,HEAD /**
//       - allow: POST /me/project.git/git-receive-pack
//       - deny: "* /**"
//         reason: push only to my repos
//     pinned.example.com: passthrough   # never terminated (a client that pins)
//   credentials:
//     github:
//       secret: {command: [pass, show, github/agent]}   # or {file: PATH} or {env: NAME}
//       hosts: [github.com, api.github.com]
//       env: [GH_TOKEN, GITHUB_TOKEN]                   # the run gets the placeholder in these
//       headers: [x-token]                              # besides Authorization and x-api-key
//       shape: github-token                             # checked: github-token, anthropic-key, openai-key,
//       jwt expires: 2026-12-31                             # refused from that day on (UTC)
//     anthropic-api-key: off                            # a default (or earlier) credential dropped
//     github:                                           # without secret: the agent's token (or an
//       hosts: [github.com, api.github.com, ghe.corp.example]  # earlier layer's) with these keys changed
//
// A rule is also accepted as one line ("allow GET /**"). Every problem is an
// error naming the file, the line and the key.
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "policy/broker_sections.hpp"
#include "policy/profile_reader.hpp"

namespace px::policy {

// Reads root["requests"] and root["credentials"] into `out`; the first
// problem goes to r.error.
void read_broker_sections(ProfileReader& r, const YAML::Node& root, BrokerSections& out);

// The same from a whole document whose other keys are someone else's
// (agent.yaml). `display_name` names it in errors.
Result<BrokerSections> parse_broker_sections(std::string_view yaml_text, const std::string& display_name);

}  // namespace px::policy
