# Precompiled headers where many files parse the same large third-party
# headers: the command line (CLI11 and nlohmann/json in each of its ~35 files)
# and the tests (GoogleTest and nlohmann/json in each of ~90). GCC loads a
# precompiled header of that size in about a second, more than a small file
# takes to compile without one, so the other components do without
# (docs/architecture.md, "The build", has the measurements).
#
# GCC uses a precompiled header only when the file is compiled with the same
# options and at least the same -D macros as the header was; -Winvalid-pch
# (added by CMake) says when it is not, and -Werror makes that fatal in CI.
# Only C++ and third-party headers are listed, so the header's contents are
# the same in every clone and ccache reuses it (and every file built with it)
# from one clone to the next (the launcher's sloppiness, top-level CMakeLists.txt).
option(PARALLEX_PCH "Precompile the third-party headers of the command line and the tests" ON)

set(PARALLEX_PCH_STD
  <algorithm> <chrono> <cstdint> <cstdio> <filesystem> <fstream> <functional> <map> <memory>
  <optional> <set> <sstream> <string> <string_view> <utility> <vector>)

# The command line (px_cli): its own flags, so its own precompiled header.
function(parallex_pch_cli target)
  if(PARALLEX_PCH)
    target_precompile_headers(${target} PRIVATE ${PARALLEX_PCH_STD} <CLI/CLI.hpp> <nlohmann/json.hpp>)
  endif()
endfunction()

# The test executables share one precompiled header, made by px_test_pch with
# the flags every test has (compiled as position-independent executables,
# without the hardening flags, no -D of their own): each test then adds its
# own -D macros, which GCC accepts as long as the header does not use them.
function(parallex_pch_test target)
  if(NOT PARALLEX_PCH)
    return()
  endif()
  if(NOT TARGET px_test_pch)
    file(WRITE "${CMAKE_BINARY_DIR}/px_test_pch.cpp" "// The tests' precompiled header (cmake/ParallexPrecompiledHeaders.cmake).\n")
    add_library(px_test_pch OBJECT "${CMAKE_BINARY_DIR}/px_test_pch.cpp")
    parallex_target_defaults(px_test_pch)
    # Executables are compiled with -fPIE, and GCC refuses a header made with -fPIC.
    set_target_properties(px_test_pch PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    target_compile_options(px_test_pch PRIVATE -fPIE)
    target_precompile_headers(px_test_pch PRIVATE ${PARALLEX_PCH_STD} <atomic> <thread> <gtest/gtest.h>
                              <nlohmann/json.hpp>)
  endif()
  target_precompile_headers(${target} REUSE_FROM px_test_pch)
endfunction()
