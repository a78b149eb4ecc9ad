/* A plugin built for ABI 1.1, before project_files existed: its descriptor
 * ends at transcript_roots. It still loads, and declares no project file. */
#include <parallex/plugin_abi.h>
#include <stddef.h>

static int detect(const px_command* c, const px_detect_sink* s) {
  (void)c;
  (void)s;
  return PX_OK;
}
static int contribute(const px_contribute_input* i, const px_contribute_sink* s) {
  (void)i;
  (void)s;
  return PX_OK;
}

/* The 1.1 layout: everything up to and including transcript_roots. */
static const px_plugin descriptor = {offsetof(px_plugin, project_files),
                                     PX_PLUGIN_ABI_MAJOR,
                                     1,
                                     "old-minor",
                                     "1.0",
                                     "an ABI 1.1 plugin",
                                     "Old",
                                     detect,
                                     contribute,
                                     0,
                                     0,
                                     0,
                                     0};

PX_PLUGIN_EXPORT const px_plugin* parallex_plugin_entry(void) {
  return &descriptor;
}
