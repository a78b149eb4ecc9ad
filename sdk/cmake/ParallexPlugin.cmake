# parallex_add_plugin(NAME [SOURCES] source... [LINKS library...]): a loadable
# Parallex plugin named NAME (NAME.so, exporting only parallex_plugin_entry
# and parallex_plugin_entry_error), linked with the SDK and LINKS.
#
# The one definition, for the bundled plugins (plugins/) and for a plugin
# built out of tree against the installed SDK (find_package(ParallexSDK)
# includes this file). The bundled build sets three variables before calling
# it; out of tree they are unset:
#   PARALLEX_PLUGIN_TARGET_PREFIX  the target is PREFIX + NAME (the file NAME.so either way)
#   PARALLEX_PLUGIN_OUTPUT_DIR     where NAME.so is built
#   PARALLEX_PLUGIN_TARGET_HOOK    a function called with the target, for the project's own defaults
include_guard(GLOBAL)

function(parallex_add_plugin name)
  cmake_parse_arguments(P "" "" "SOURCES;LINKS" ${ARGN})
  set(target "${PARALLEX_PLUGIN_TARGET_PREFIX}${name}")
  add_library(${target} MODULE ${P_SOURCES} ${P_UNPARSED_ARGUMENTS})
  target_link_libraries(${target} PRIVATE Parallex::sdk ${P_LINKS})
  set_target_properties(${target} PROPERTIES
    PREFIX "" OUTPUT_NAME "${name}"
    CXX_VISIBILITY_PRESET hidden C_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  # What static libraries bring in (a parser, a JSON library) stays inside the
  # plugin: its only exports are the entry points.
  if(NOT APPLE)
    target_link_options(${target} PRIVATE "LINKER:--exclude-libs,ALL")
  endif()
  if(PARALLEX_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${PARALLEX_PLUGIN_OUTPUT_DIR}")
  endif()
  if(PARALLEX_PLUGIN_TARGET_HOOK)
    cmake_language(CALL ${PARALLEX_PLUGIN_TARGET_HOOK} ${target})
  endif()
endfunction()
