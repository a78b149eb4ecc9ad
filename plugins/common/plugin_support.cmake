# Shared set-up for the bundled plugins: the header-only helpers in
# plugins/common/, and the link to a transcript parser library.
#
# The parsers (plugins/transcripts/) are added after the harness folders, so
# the link is deferred to the end of plugins/.
include_guard(GLOBAL)

function(parallex_plugin_support target)
  cmake_parse_arguments(S "" "TRANSCRIPTS" "" ${ARGN})
  target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_FUNCTION_LIST_DIR}")
  if(S_TRANSCRIPTS)
    get_directory_property(parent PARENT_DIRECTORY)
    cmake_language(EVAL CODE
      "cmake_language(DEFER DIRECTORY [[${parent}]] CALL _parallex_plugin_link_transcripts [[${target}]] [[${S_TRANSCRIPTS}]])")
  endif()
endfunction()

function(_parallex_plugin_link_transcripts target library)
  target_link_libraries(${target} PRIVATE ${library})
  # The parser is built with default visibility; keep its symbols inside the
  # plugin so the only export stays parallex_plugin_entry.
  if(NOT APPLE)
    target_link_options(${target} PRIVATE "LINKER:--exclude-libs,ALL")
  endif()
endfunction()
