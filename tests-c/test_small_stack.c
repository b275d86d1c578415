/* Decompression on a caller's thread with a small stack: C programs run
   their own threads on stacks of 32 or 64 KiB, and a decompression called
   from one must not overflow it. The library once built the zlib decoder's
   tables (about 40 KiB) inside the frame of every stream decode, whatever
   the codec; a 32 KiB thread then crashed decoding an LZ4 chunk. Zlib
   chunks are left out for that reason: their decoder needs those 40 KiB
   once per thread. Chunks are made on the main thread; each is decoded on
   a 32 KiB thread, through a context and through the global calls. */
#include "test_common.h"

#include <limits.h>
#include <pthread.h>

#define STACK (32 * 1024)
#define NITEMS (1 << 15)
#define NCHUNKS 12

static double src[NITEMS];
static uint8_t chunks[NCHUNKS][NITEMS * sizeof(double) + BLOSC2_MAX_OVERHEAD];
static int32_t csizes[NCHUNKS];

/* What the small thread found: bytes decoded per chunk, per way, and
   whether each output equals the source. */
static int32_t decoded[NCHUNKS][2];
static int same[NCHUNKS][2];

static void *decode_all(void *arg) {
  (void)arg;
  static double out[NITEMS];
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  for (int k = 0; k < NCHUNKS; k++) {
    blosc2_context *dctx = blosc2_create_dctx(dp);
    memset(out, 0, sizeof out);
    decoded[k][0] = dctx ? blosc2_decompress_ctx(dctx, chunks[k], csizes[k], out, sizeof out) : -1;
    same[k][0] = memcmp(out, src, sizeof src) == 0;
    blosc2_free_ctx(dctx);
    memset(out, 0, sizeof out);
    decoded[k][1] = blosc2_decompress(chunks[k], csizes[k], out, sizeof out);
    same[k][1] = memcmp(out, src, sizeof src) == 0;
  }
  return NULL;
}

int main(void) {
  blosc2_init();
  for (int i = 0; i < NITEMS; i++) src[i] = (double)(i / 7) * 0.25 + (double)(i % 5);
  const uint8_t codecs[] = {BLOSC_BLOSCLZ, BLOSC_LZ4, BLOSC_LZ4HC, BLOSC_ZSTD};
  const struct {
    uint8_t filter;
    int32_t splitmode;
  } ways[] = {{BLOSC_SHUFFLE, BLOSC_ALWAYS_SPLIT}, {BLOSC_SHUFFLE, BLOSC_NEVER_SPLIT},
              {BLOSC_BITSHUFFLE, BLOSC_NEVER_SPLIT}};
  int k = 0;
  for (int c = 0; c < 4; c++) {
    for (int w = 0; w < 3; w++, k++) {
      blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
      cp.compcode = codecs[c];
      cp.clevel = 5;
      cp.typesize = sizeof(double);
      cp.nthreads = 1;
      cp.splitmode = ways[w].splitmode;
      cp.filters[BLOSC2_MAX_FILTERS - 1] = ways[w].filter;
      blosc2_context *cctx = blosc2_create_cctx(cp);
      CHECK(cctx != NULL);
      csizes[k] = blosc2_compress_ctx(cctx, src, sizeof src, chunks[k], sizeof chunks[k]);
      CHECK(csizes[k] > 0 && csizes[k] < (int32_t)sizeof src);
      blosc2_free_ctx(cctx);
    }
  }

  pthread_attr_t attr;
  CHECK_EQ_INT(pthread_attr_init(&attr), 0);
  CHECK_EQ_INT(pthread_attr_setstacksize(&attr, STACK < PTHREAD_STACK_MIN ? PTHREAD_STACK_MIN : STACK), 0);
  pthread_t t;
  CHECK_EQ_INT(pthread_create(&t, &attr, decode_all, NULL), 0);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  pthread_attr_destroy(&attr);

  for (k = 0; k < NCHUNKS; k++) {
    for (int way = 0; way < 2; way++) {
      CHECK_EQ_INT(decoded[k][way], sizeof src);
      CHECK(same[k][way]);
    }
  }
  blosc2_destroy();
  return test_finish("test_small_stack");
}
