# Run by the build (cmake -P): the man pages and shell completions, from the
# executable's own command definitions.
#   -DPARALLEX=<the executable> -DOUT=<build>/share
# man/man1/*.1 are for reading in the build tree (man -l); man-gz/man1/*.1.gz
# are what is installed (compressed as Debian wants: gzip -9n, no name, no time).
file(REMOVE_RECURSE "${OUT}/man" "${OUT}/man-gz" "${OUT}/completions")
file(MAKE_DIRECTORY "${OUT}/man/man1" "${OUT}/man-gz/man1" "${OUT}/completions")
execute_process(COMMAND "${PARALLEX}" man --dir "${OUT}/man/man1" RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "parallex man failed: ${failed}")
endif()
foreach(shell_file bash:parallex zsh:_parallex fish:parallex.fish)
  string(REPLACE ":" ";" parts "${shell_file}")
  list(GET parts 0 shell)
  list(GET parts 1 file)
  execute_process(COMMAND "${PARALLEX}" completion ${shell} OUTPUT_FILE "${OUT}/completions/${file}"
                  RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "parallex completion ${shell} failed: ${failed}")
  endif()
endforeach()
find_program(gzip_program gzip REQUIRED)
file(GLOB pages "${OUT}/man/man1/*.1")
foreach(page IN LISTS pages)
  get_filename_component(name "${page}" NAME)
  execute_process(COMMAND "${gzip_program}" -9nc "${page}" OUTPUT_FILE "${OUT}/man-gz/man1/${name}.gz"
                  RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "gzip ${page} failed")
  endif()
endforeach()
