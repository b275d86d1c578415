/* Uses only the installed header and library. */
#include <b2nd.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  blosc2_init();
  const char *v = blosc2_get_version_string();
  int ok = strcmp(v, BLOSC2_VERSION_STRING) == 0;
  printf("consumer: b2nd reports C-Blosc2 API %s\n", v);
  blosc2_destroy();
  return ok ? 0 : 1;
}
