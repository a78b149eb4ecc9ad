# One place for the project's warning and sanitizer flags. Every target of the
# project calls parallex_target_defaults(); third-party headers are included as
# SYSTEM by their imported targets, so -Werror applies to our code only.
# (-Wnull-dereference is left out: with GCC 12 at -O2 it fires inside
# libstdc++'s own headers, not on our code.)
function(parallex_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
      -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual
      -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough>
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic>)
  if(PARALLEX_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  # Debian's hardening flags (dpkg-buildflags) on every build, so the package is
  # made from the same build tree as the tests: fortified libc calls (they need
  # optimisation, so not in Debug), stack protector, read-only relocations, and
  # full RELRO (every symbol bound at start, the GOT then read-only; see
  # docs/packaging.md for its start-up cost). Left out of the sanitizer builds,
  # whose interceptors replace the fortified functions, and out of tests and
  # benchmarks (PARALLEX_NO_HARDENING in their folders), which ship nowhere.
  if(NOT PARALLEX_SANITIZE AND NOT PARALLEX_FUZZ AND NOT PARALLEX_NO_HARDENING)
    target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-D_FORTIFY_SOURCE=2> -fstack-protector-strong)
    target_link_options(${target} PRIVATE -Wl,-z,relro $<$<BOOL:${PARALLEX_BINDNOW}>:-Wl,-z,now>)
  endif()
endfunction()

if(PARALLEX_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  # Executables linked at a fixed address: UBSan gives every check a record
  # holding pointers (its source location, its types), and in a position-
  # independent executable each such pointer is a relocation the loader
  # applies at start. For parallex that was 8 million of them (218 MB of data
  # written before main, 1.2 s and 480 MB for `--version`), paid again by every
  # sealed process the tests start. Linked at a fixed address, the records are
  # read from the file as used. This build is for finding memory errors, not
  # for shipping: the shipped build stays position-independent.
  add_link_options($<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-no-pie>)
endif()

# Adds every immediate sub-folder of the current source dir that holds a
# CMakeLists.txt, so components (and their tests) can be added without editing
# a shared list.
function(parallex_add_subdirectories)
  file(GLOB children LIST_DIRECTORIES true RELATIVE "${CMAKE_CURRENT_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}/*")
  list(SORT children)
  foreach(child IN LISTS children)
    if(IS_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}/${child}" AND EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${child}/CMakeLists.txt")
      add_subdirectory(${child})
    endif()
  endforeach()
endfunction()
