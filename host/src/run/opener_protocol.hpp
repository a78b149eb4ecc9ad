#pragma once
// The run's opener (docs/opener.md): what a program inside a sealed run runs
// to open a page (its `BROWSER`, `xdg-open` on its PATH) is the parallex
// executable under another name, which hands the address to the run's
// supervisor over a socket and opens nothing. What both ends agree on.
#include <array>
#include <cstddef>
#include <filesystem>
#include <string_view>

namespace px::run {

// The folder in the run's private dir that the run may read: the socket and
// the names below, each a link to the parallex executable.
inline std::filesystem::path opener_dir(const std::filesystem::path& private_dir) {
  return private_dir / "open";
}
inline constexpr const char* kOpenerSocket = "socket";
// Where the opener finds the socket (the full path, set in every sealed run).
inline constexpr const char* kOpenerSocketVariable = "PARALLEX_OPEN_SOCKET";

// The names programs run to open a page: the freedesktop opener (Node's
// `open` package, Claude Code without $BROWSER, Go's and Rust's openers) and
// Debian's alternatives (Python's webbrowser tries www-browser without a
// display). $BROWSER names `xdg-open` here.
inline constexpr std::array<std::string_view, 4> kOpenerNames{"xdg-open", "sensible-browser", "x-www-browser",
                                                              "www-browser"};

// One request is one SOCK_SEQPACKET message: the name the opener was run by,
// a NUL, the address. An address longer than this is refused, not cut.
inline constexpr std::size_t kOpenerMaxUrl = 2048;
inline constexpr std::size_t kOpenerMaxMessage = kOpenerMaxUrl + 64;

}  // namespace px::run
