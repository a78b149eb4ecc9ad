/* A plugin whose entry point fails (returns no descriptor). */
#include <parallex/plugin_abi.h>
PX_PLUGIN_EXPORT const px_plugin* parallex_plugin_entry(void) { return 0; }
