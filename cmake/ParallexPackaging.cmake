# The Debian packages, made by CPack from the install rules (scripts/package.sh):
#   parallex      the executable, its plugins, the built-in profiles, man pages,
#                 shell completions and the AppArmor profile
#   parallex-dev  the plugin SDK: headers and the CMake package ParallexSDK
# Configure with -DCMAKE_INSTALL_PREFIX=/usr so the libdir is Debian's multiarch
# one (lib/x86_64-linux-gnu). docs/packaging.md says why each choice is made.
set(PARALLEX_DEB_MAINTAINER "Parallex authors <parallex@example.org>" CACHE STRING
    "Maintainer field of the Debian packages")

# The AppArmor profile for the installed executable (packaging/apparmor/parallex.in).
set(PARALLEX_APPARMOR_EXE "${CMAKE_INSTALL_FULL_BINDIR}/parallex")
configure_file(packaging/apparmor/parallex.in "${CMAKE_BINARY_DIR}/packaging/apparmor/parallex" @ONLY)
install(FILES "${CMAKE_BINARY_DIR}/packaging/apparmor/parallex"
        DESTINATION ${CMAKE_INSTALL_DATADIR}/parallex/apparmor COMPONENT parallex)

# Debian wants a copyright file and a changelog in each package's doc folder.
set(PARALLEX_DEB_VERSION "${PROJECT_VERSION}-1")
execute_process(COMMAND git -C "${PROJECT_SOURCE_DIR}" log -1 --format=%h --abbrev=12
                OUTPUT_VARIABLE PARALLEX_DEB_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git -C "${PROJECT_SOURCE_DIR}" log -1 --format=%cD
                OUTPUT_VARIABLE PARALLEX_DEB_DATE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT PARALLEX_DEB_COMMIT)
  set(PARALLEX_DEB_COMMIT "unknown")
  string(TIMESTAMP PARALLEX_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
endif()
configure_file(packaging/debian/changelog.in "${CMAKE_BINARY_DIR}/packaging/changelog.Debian" @ONLY)
find_program(PARALLEX_GZIP gzip)
if(PARALLEX_GZIP)
  execute_process(COMMAND ${PARALLEX_GZIP} -9nc "${CMAKE_BINARY_DIR}/packaging/changelog.Debian"
                  OUTPUT_FILE "${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz")
  foreach(component parallex parallex-dev)
    install(FILES packaging/debian/copyright "${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz"
            DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${component} COMPONENT ${component})
  endforeach()
endif()

# A stripped install (CPack's) also drops the .comment section (compiler
# version strings), as Debian's dh_strip does.
install(CODE "
  if(CMAKE_INSTALL_DO_STRIP)
    file(GLOB px_elf \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/parallex\"
                     \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${PARALLEX_PLUGIN_INSTALL_DIR}/*.so\")
    foreach(f IN LISTS px_elf)
      execute_process(COMMAND \"${CMAKE_OBJCOPY}\" --remove-section=.comment \"\${f}\")
    endforeach()
  endif()" COMPONENT parallex)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME parallex)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "Parallex")
set(CPACK_PACKAGE_CONTACT "${PARALLEX_DEB_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL parallex parallex-dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${PARALLEX_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Dependencies from the ELF files themselves (dpkg-shlibdeps).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)

set(CPACK_DEBIAN_PARALLEX_PACKAGE_NAME parallex)
set(CPACK_DEBIAN_PARALLEX_PACKAGE_SECTION utils)
# `parallex demo` commits with git and fetches with curl inside the seal.
set(CPACK_DEBIAN_PARALLEX_PACKAGE_RECOMMENDS "git, curl, ca-certificates")
set(CPACK_DEBIAN_PARALLEX_PACKAGE_SUGGESTS "apparmor")
set(CPACK_DEBIAN_PARALLEX_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/packaging/debian/postinst;${PROJECT_SOURCE_DIR}/packaging/debian/postrm")
set(CPACK_DEBIAN_PARALLEX_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_COMPONENT_PARALLEX_DESCRIPTION
    "run AI coding agents sealed, under an identity of their own
Parallex runs AI coding agents (Claude Code, Codex CLI, opencode, or any
command) inside a sandbox it builds itself: user, mount, network and pid
namespaces, Landlock, seccomp and a per-run HTTP proxy, with every way out
decided by the user. Each agent has an identity of its own (home, signing
key, GitHub token), snapshots of its home before every run, and a report of
what it did.")

set(CPACK_DEBIAN_PARALLEX-DEV_PACKAGE_NAME parallex-dev)
set(CPACK_DEBIAN_PARALLEX-DEV_PACKAGE_SECTION devel)
# <parallex/json.hpp> wraps nlohmann/json; ParallexSDKConfig.cmake finds it.
set(CPACK_DEBIAN_PARALLEX-DEV_PACKAGE_DEPENDS "nlohmann-json3-dev (>= 3.4)")
set(CPACK_DEBIAN_PARALLEX-DEV_PACKAGE_RECOMMENDS "cmake, g++")
set(CPACK_DEBIAN_PARALLEX-DEV_PACKAGE_SUGGESTS "parallex")
set(CPACK_COMPONENT_PARALLEX-DEV_DESCRIPTION
    "plugin SDK for Parallex harness plugins
The C ABI header, the header-only C++ layer and the CMake package
(find_package(ParallexSDK)) that a harness plugin for Parallex is built
against. A plugin built with it is loaded by the parallex package from
/usr/lib/<multiarch>/parallex/plugins.")

include(CPack)
