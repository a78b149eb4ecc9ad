# Run at every build (cmake -P): writes the git commit the build is made from
# into OUTPUT, rewriting the file only when the commit changed, so that a build
# without a new commit recompiles nothing.
#   -DSOURCE_DIR=... -DOUTPUT=...
set(commit "")
if(DEFINED ENV{PARALLEX_GIT_COMMIT})
  # A build from a tarball (no .git) may say where it came from.
  set(commit "$ENV{PARALLEX_GIT_COMMIT}")
else()
  find_program(git_program git)
  if(git_program)
    execute_process(COMMAND "${git_program}" -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12 --exclude=*
                    OUTPUT_VARIABLE commit ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE failed)
    if(failed)
      set(commit "")
    endif()
  endif()
endif()
if(commit STREQUAL "")
  set(commit "unknown")
endif()
set(text "// Written by cmake/WriteVersionInfo.cmake at build time.\nnamespace px::cli {\nconst char* git_commit() { return \"${commit}\"; }\n}  // namespace px::cli\n")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
