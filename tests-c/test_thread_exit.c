/* The library called from a thread's exit handlers: a C program may flush
   per-thread data from a pthread_key_create destructor, which runs after the
   thread's Rust thread-locals are destroyed. The calls there must work as
   they do in the reference (they once failed, each with a caught panic):
   chunks of every codec compressed and decompressed on one and two
   threads, a super-chunk and a b2nd array made and read back. */
#include "test_common.h"

#include <pthread.h>

#define NITEMS 20000

static pthread_key_t key;
static int32_t src[NITEMS];

/* What the exit handler found: per codec and thread count, the compressed
   and decompressed sizes and whether the output equals the source. */
static int csize[6][2], dsize[6][2], same[6][2];
static int schunk_ok, b2nd_rc, slice_rc, slice_same;
static int handler_ran;

static void chunks(void) {
  static uint8_t chunk[sizeof src + BLOSC2_MAX_OVERHEAD];
  static int32_t out[NITEMS];
  const uint8_t codecs[] = {BLOSC_BLOSCLZ, BLOSC_LZ4, BLOSC_LZ4HC, BLOSC_ZLIB, BLOSC_ZSTD};
  for (int c = 0; c < 5; c++) {
    for (int t = 0; t < 2; t++) {
      blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
      cp.compcode = codecs[c];
      cp.typesize = sizeof(int32_t);
      cp.nthreads = (int16_t)(t + 1);
      cp.blocksize = 16 * 1024; /* several blocks, so that two threads share them */
      cp.filters[BLOSC2_MAX_FILTERS - 1] = c % 2 ? BLOSC_BITSHUFFLE : BLOSC_SHUFFLE;
      blosc2_context *cctx = blosc2_create_cctx(cp);
      csize[c][t] = cctx ? blosc2_compress_ctx(cctx, src, sizeof src, chunk, sizeof chunk) : -1;
      blosc2_free_ctx(cctx);
      blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
      dp.nthreads = (int16_t)(t + 1);
      blosc2_context *dctx = blosc2_create_dctx(dp);
      memset(out, 0, sizeof out);
      dsize[c][t] = dctx && csize[c][t] > 0
                        ? blosc2_decompress_ctx(dctx, chunk, csize[c][t], out, sizeof out)
                        : -1;
      blosc2_free_ctx(dctx);
      same[c][t] = memcmp(out, src, sizeof src) == 0;
    }
  }
}

static void schunk(void) {
  static int32_t out[NITEMS];
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = sizeof(int32_t);
  blosc2_storage st = {.contiguous = true, .cparams = &cp};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  if (sc == NULL) return;
  memset(out, 0, sizeof out);
  schunk_ok = blosc2_schunk_append_buffer(sc, src, sizeof src) == 1 &&
              blosc2_schunk_decompress_chunk(sc, 0, out, sizeof out) == (int)sizeof src &&
              memcmp(out, src, sizeof src) == 0;
  blosc2_schunk_free(sc);
}

static void array(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = sizeof(int32_t);
  blosc2_storage st = {.contiguous = true, .cparams = &cp};
  const int64_t shape[2] = {100, 200};
  const int32_t chunkshape[2] = {50, 50}, blockshape[2] = {10, 10};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 2, shape, chunkshape, blockshape, NULL, 0, NULL, 0);
  b2nd_array_t *arr = NULL;
  b2nd_rc = ctx ? b2nd_from_cbuffer(ctx, &arr, src, sizeof src) : -1;
  const int64_t start[2] = {5, 40}, stop[2] = {60, 75}, pshape[2] = {55, 35};
  static int32_t part[55 * 35];
  slice_rc = arr ? b2nd_get_slice_cbuffer(arr, start, stop, part, pshape, sizeof part) : -1;
  slice_same = slice_rc == 0;
  for (int i = 0; slice_same && i < 55; i++) {
    slice_same = memcmp(&part[i * 35], &src[(5 + i) * 200 + 40], 35 * sizeof(int32_t)) == 0;
  }
  b2nd_free(arr);
  b2nd_free_ctx(ctx);
}

static void at_thread_exit(void *value) {
  (void)value;
  handler_ran = 1;
  chunks();
  schunk();
  array();
}

static void *thread_main(void *arg) {
  (void)arg;
  /* Use the library on this thread first, so that its thread-locals exist
     (and are destroyed) before the handler runs. */
  static int32_t out[NITEMS];
  static uint8_t chunk[sizeof src + BLOSC2_MAX_OVERHEAD];
  int n = blosc2_compress(5, BLOSC_SHUFFLE, sizeof(int32_t), src, sizeof src, chunk, sizeof chunk);
  CHECK(n > 0 && blosc2_decompress(chunk, n, out, sizeof out) == (int)sizeof src);
  pthread_setspecific(key, &handler_ran);
  return NULL;
}

int main(void) {
  blosc2_init();
  for (int i = 0; i < NITEMS; i++) src[i] = i / 3;
  CHECK_EQ_INT(pthread_key_create(&key, at_thread_exit), 0);
  pthread_t t;
  CHECK_EQ_INT(pthread_create(&t, NULL, thread_main, NULL), 0);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  CHECK(handler_ran);
  for (int c = 0; c < 5; c++) {
    for (int th = 0; th < 2; th++) {
      CHECK(csize[c][th] > 0 && csize[c][th] < (int)sizeof src);
      CHECK_EQ_INT(dsize[c][th], sizeof src);
      CHECK(same[c][th]);
    }
  }
  CHECK(schunk_ok);
  CHECK_EQ_INT(b2nd_rc, 0);
  CHECK_EQ_INT(slice_rc, 0);
  CHECK(slice_same);
  pthread_key_delete(key);
  blosc2_destroy();
  return test_finish("test_thread_exit");
}
