/*
 * Configure-time probe of the library under test (run through try_run).
 * Upstream's build decides from its own configuration whether to build the
 * ZSTD-only programs and the plugin examples; an installed library can only be
 * asked, so this prints what the library says it supports.
 */
#include <stdio.h>

#include "blosc2.h"

int main(void) {
  blosc2_init();
  /* Codecs known to the library, built-in and registered plugins alike. */
  printf("HAVE_ZSTD=%d\n", blosc2_compname_to_compcode("zstd") >= 0);
  printf("HAVE_PLUGINS=%d\n", blosc2_compname_to_compcode("ndlz") >= 0);
  blosc2_destroy();
  return 0;
}
