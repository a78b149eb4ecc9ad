#pragma once
// `parallex check --sealed`: one real sealed run, through the run stage like
// every run, whose command (parallex itself, in probe mode) tries each way
// out; a table says what held. Exit 0 when every way held.
#include <string>
#include <vector>

namespace px::cli {

int check_sealed(bool json, bool allow_weaker_seal);

// Probe mode, inside the seal: runs each probe of the catalog
// (probes/catalog.hpp), given as NAME ARG... groups each ended by a lone ",",
// in a child of its own and writes "INDEX TOKEN" lines to `results` (a token
// is an errno name, OPEN or EMPTY).
int run_probes(const std::vector<std::string>& words, const std::string& results);

// One probe (NAME ARG...), for a script inside a seal (the demo's): prints
// its "RESULT TOKEN" line; exit 0 when the way worked (OPEN), 1 when it was
// refused, 2 when there is no such probe.
int run_one_probe(const std::vector<std::string>& words);

}  // namespace px::cli
