#pragma once
// Where this build's files are, for the tests: the source tree, the build
// tree, the executables and the tests' own data.
//
// The values are compiled once, into tests/test_paths.cpp, which CMake writes
// into the build tree; they are not in each test's compile flags. A test's
// object is then the same in every clone of the repository, so ccache reuses
// it: CI builds a fresh clone each time, and with the paths in the flags every
// test was compiled again (about five minutes of CI's thirty).
namespace px::test::paths {

extern const char* const source_dir;        // the repository
extern const char* const binary_dir;        // the build tree
extern const char* const plugin_build_dir;  // the plugins built there
extern const char* const parallex_exe;      // build/parallex
extern const char* const test_trust_exe;    // parallex-test-trust (trusts the tests' own CA)
extern const char* const share_dir;         // man pages and completions built there
extern const char* const probe_dir;         // the escape suite's probes
extern const char* const bad_plugin_dir;    // the plugin host's broken plugins
extern const char* const fixtures_dir;      // tests/fixtures
extern const char* const expectations_dir;  // tests/policy/expectations
extern const char* const broker_test_dir;   // tests/broker
extern const char* const e2e_test_dir;      // tests/e2e
extern const char* const network_test_dir;  // tests/network
extern const char* const proxy_test_dir;    // tests/proxy

}  // namespace px::test::paths

// The names the tests have always used for them.
#define PARALLEX_SOURCE_DIR (::px::test::paths::source_dir)
#define PARALLEX_BINARY_DIR (::px::test::paths::binary_dir)
#define PARALLEX_PLUGIN_BUILD_DIR (::px::test::paths::plugin_build_dir)
#define PARALLEX_EXE (::px::test::paths::parallex_exe)
#define PARALLEX_TEST_EXE (::px::test::paths::test_trust_exe)
#define PARALLEX_SHARE_DIR (::px::test::paths::share_dir)
#define PX_PROBE_DIR (::px::test::paths::probe_dir)
#define PARALLEX_BAD_PLUGIN_DIR (::px::test::paths::bad_plugin_dir)
#define PARALLEX_FIXTURES_DIR (::px::test::paths::fixtures_dir)
#define PARALLEX_EXPECTATIONS_DIR (::px::test::paths::expectations_dir)
#define BROKER_TEST_DIR (::px::test::paths::broker_test_dir)
#define E2E_TEST_DIR (::px::test::paths::e2e_test_dir)
#define NETWORK_TEST_DIR (::px::test::paths::network_test_dir)
#define PROXY_TEST_DIR (::px::test::paths::proxy_test_dir)
