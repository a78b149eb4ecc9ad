// px-probe NAME ARG...: the seal's probes (host/src/probes/catalog.hpp) as a
// program of their own, for the escape suite to run inside real seals. Not
// `parallex check --probe`: this one is built without sanitizers (the seal
// refuses the ptrace LeakSanitizer's exit check needs), opens nothing of its
// own (the inherited-descriptor probe counts what it finds) and has a name of
// its own in what the seal records refusing.
#include "probes/catalog.hpp"

int main(int argc, char** argv) {
  return px::probes::main_line(argc, argv);
}
