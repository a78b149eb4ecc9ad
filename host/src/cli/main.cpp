// `parallex`: the command line (cli/entry.cpp).
#include "cli/entry.hpp"

int main(int argc, char** argv) {
  return px::cli::main(argc, argv);
}
