#pragma once
// `parallex check --sealed`: one real sealed run, through the run stage like
// every run, whose command (parallex itself, in probe mode) tries each way
// out; a table says what held. Exit 0 when every way held.
#include <string>
#include <vector>

namespace px::cli {

int check_sealed(bool json, bool allow_weaker_seal);

// Probe mode, inside the seal: runs each "NAME:ARG" probe in a child of its
// own and writes "INDEX TOKEN" lines to `results` (a token is an errno name,
// OPEN or EMPTY).
int run_probes(const std::vector<std::string>& probes, const std::string& results);

}  // namespace px::cli
