/*
 * The layout report built against the REFERENCE C-Blosc2 3.3.5 headers (b2nd.h includes
 * blosc2.h), linked with the reference libblosc2 of the same wheel (for the default
 * getters). Only the reference include directory is on the include path. The output must equal `test_layout --report` (see compare.cmake).
 */
/* Blosc 1.x compatibility names are part of the API checklist too. */
#define BLOSC1_COMPAT
#include <b2nd.h>

#include "layout_body.h"

int main(void) {
  return layout_report(stdout) == 0 ? 0 : 1;
}
