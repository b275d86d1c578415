/*
 * Test-only stand-in for C-Blosc2's plugins/codecs/codecs-registry.c, which the
 * example example_plugins_codecs includes by relative path.  That file
 * registers the bundled codec plugins, which an installed library already does
 * by itself in blosc2_init(); the example only needs the codec ids.
 */
#include "blosc2/codecs-registry.h"
