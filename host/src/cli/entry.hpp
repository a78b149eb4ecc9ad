#pragma once
// The executable's main (main.cpp), here so that it is compiled with the rest
// of the command line (and its precompiled headers) rather than on its own.
namespace px::cli {

int main(int argc, char** argv);

}  // namespace px::cli
