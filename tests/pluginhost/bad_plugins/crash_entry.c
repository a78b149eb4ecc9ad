/* A plugin that crashes in its entry point: only `plugins --check` survives it. */
#include <parallex/plugin_abi.h>
#include <signal.h>
PX_PLUGIN_EXPORT const px_plugin* parallex_plugin_entry(void) {
  raise(SIGSEGV);
  return 0;
}
