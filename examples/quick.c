#include <b2nd.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  blosc2_init();
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.compcode = BLOSC_ZSTD;
  cparams.typesize = sizeof(double);
  blosc2_storage storage = {.contiguous = true, .cparams = &cparams};
  blosc2_schunk *schunk = blosc2_schunk_new(&storage);

  double data[1000], back[1000];
  for (int i = 0; i < 1000; i++) data[i] = i * 0.5;
  if (blosc2_schunk_append_buffer(schunk, data, sizeof data) < 0) return 1;
  if (blosc2_schunk_decompress_chunk(schunk, 0, back, sizeof back) != (int)sizeof back) return 1;
  printf("%lld bytes stored in %lld\n", (long long)schunk->nbytes, (long long)schunk->cbytes);

  blosc2_schunk_free(schunk);
  blosc2_destroy();
  return memcmp(data, back, sizeof data) != 0;
}
