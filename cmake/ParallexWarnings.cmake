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
endfunction()

if(PARALLEX_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
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
