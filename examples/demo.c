/* b2nd demo: what the library can do so far. */
#include <b2nd.h>
#include <stdio.h>

int main(void) {
  blosc2_init();
  printf("b2nd demo: C-Blosc2 API %s\n", blosc2_get_version_string());
  printf("error code %d means \"%s\"\n", BLOSC2_ERROR_DATA, blosc2_error_string(BLOSC2_ERROR_DATA));
  blosc2_destroy();
  return 0;
}
