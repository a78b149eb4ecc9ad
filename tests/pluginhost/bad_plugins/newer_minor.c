/* A plugin built for a newer minor than the host knows: refused. */
#include <parallex/plugin_abi.h>

static int detect(const px_command* c, const px_detect_sink* s) { (void)c; (void)s; return PX_OK; }
static int contribute(const px_contribute_input* i, const px_contribute_sink* s) { (void)i; (void)s; return PX_OK; }

static const px_plugin descriptor = {sizeof(px_plugin), PX_PLUGIN_ABI_MAJOR, PX_PLUGIN_ABI_MINOR + 1, "newer-minor",
                                     "1.0", "", "", detect, contribute, 0, 0, 0};

PX_PLUGIN_EXPORT const px_plugin* parallex_plugin_entry(void) { return &descriptor; }
