# A precompiled header for the command line (px_cli), whose ~35 files each
# parse CLI11, nlohmann/json and the same standard headers.
#
# GCC uses a precompiled header only when the file is compiled with the same
# options and the same definitions of every macro the header uses; where it
# cannot, -Winvalid-pch (added by CMake) says so and -Werror makes that fatal
# in CI. Only C++ and third-party headers are listed, so the header's contents
# are the same in every clone and ccache reuses it (and every file built with
# it) from one clone to the next (the launcher's sloppiness, top-level
# CMakeLists.txt).
option(PARALLEX_PCH "Precompile the command line's third-party headers" ON)

function(parallex_pch_cli target)
  if(PARALLEX_PCH)
    target_precompile_headers(${target} PRIVATE
      <algorithm> <chrono> <cstdint> <cstdio> <filesystem> <fstream> <functional> <map> <memory>
      <optional> <set> <sstream> <string> <string_view> <utility> <vector>
      <CLI/CLI.hpp> <nlohmann/json.hpp>)
  endif()
endfunction()
