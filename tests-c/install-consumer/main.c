/* Uses only the installed headers and library, as a C-Blosc2 client does: it includes every
 * header the reference installs and relies on what they bring (strlen from <string.h>, the
 * BLOSC_UNUSED_PARAM macro, the timing helpers). */
#include <blosc2.h>
#include <b2nd.h>
#include <blosc2/blosc2-common.h>
#include <blosc2/blosc2-export.h>
#include <blosc2/blosc2-stdio.h>
#include <blosc2/codecs-registry.h>
#include <blosc2/filters-registry.h>
#include <blosc2/tuners-registry.h>
#include <stdio.h>

static int unused_arg(int x) {
  BLOSC_UNUSED_PARAM(x);
  return 0;
}

int main(void) {
  blosc_timestamp_t t0, t1;
  blosc_set_timestamp(&t0);
  blosc2_init();
  const char *v = blosc2_get_version_string();
  int ok = strlen(v) == strlen(BLOSC2_VERSION_STRING) && strcmp(v, BLOSC2_VERSION_STRING) == 0;
  int32_t data[256], out[256];
  for (int i = 0; i < 256; i++) data[i] = i;
  uint8_t chunk[sizeof data + BLOSC2_MAX_OVERHEAD];
  int csize = blosc2_compress(5, BLOSC_SHUFFLE, sizeof(int32_t), data, sizeof data, chunk, sizeof chunk);
  int dsize = blosc2_decompress(chunk, csize, out, sizeof out);
  ok = ok && csize > 0 && dsize == (int)sizeof data && memcmp(data, out, sizeof data) == 0;
  blosc_set_timestamp(&t1);
  ok = ok && blosc_elapsed_nsecs(t0, t1) >= 0 && unused_arg(1) == 0;
  ok = ok && BLOSC_CODEC_ZFP_FIXED_RATE == 35 && BLOSC_FILTER_INT_TRUNC == 36 && BLOSC_BTUNE == 32;
  printf("consumer: b2nd reports C-Blosc2 API %s; round trip %s\n", v, ok ? "ok" : "FAILED");
  blosc2_destroy();
  return ok ? 0 : 1;
}
