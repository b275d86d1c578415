/*
 * Test-only stand-in for C-Blosc2's plugins/filters/filters-registry.c, which
 * the example example_plugins_filters includes by relative path.  An installed
 * library registers its bundled filter plugins itself; the example only needs
 * the filter ids.
 */
#include "blosc2/filters-registry.h"
