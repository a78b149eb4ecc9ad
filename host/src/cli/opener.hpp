#pragma once
// The run's opener, the client end (docs/opener.md): the parallex executable
// run as `xdg-open`, `sensible-browser`, `x-www-browser` or `www-browser`
// (the links of a sealed run's opener folder, its BROWSER). It opens
// nothing: each address goes to the run's supervisor, which shows it to the
// user and records it.
#include <optional>

namespace px::cli {

// The opener's exit status when argv[0] names one of the opener's names;
// nullopt otherwise (parallex as itself).
std::optional<int> opener_entry(int argc, char** argv);

}  // namespace px::cli
