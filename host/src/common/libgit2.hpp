#pragma once
// libgit2, linked as Debian links it. Every libgit2 call needs
// git_libgit2_init first (one before it crashes), so every component that
// calls libgit2 starts with libgit2_init(): the one place it is initialised.

namespace px {

// Initialises libgit2 once per process (later calls return at once). Never
// shut down: other parts of the process may still hold libgit2 objects at exit.
void libgit2_init();

}  // namespace px
