/* The library on a caller's thread with a small stack. C programs run
   their own threads on stacks of 32 or 64 KiB, and a call made from one
   must not overflow it. Each codec runs chunk compression and
   decompression (through a context and through the global calls, shuffled
   split and unsplit, and bitshuffled), a super-chunk's life (new, append,
   decompress, to and from a frame buffer) and a b2nd array's (from a
   buffer, a slice back) on a thread of 32 KiB, zlib on one of 64 KiB: its
   decoder builds its tables (about 40 KiB) on the stack once per thread,
   and its encoder's package-merge takes about 20 KiB.
   What each step once needed: the zlib decoder's tables inside every
   stream decode's frame, whatever the codec; a super-chunk's 64 KiB C
   struct built on the stack before it was boxed; BloscLZ's 64 KiB hash
   table on the stack, as the reference keeps it (the reference needs a
   128 KiB stack for these steps). */
#include "test_common.h"

#include <limits.h>
#include <pthread.h>

/* The stacks, in KiB; scripts/stack-probe.sh builds this test with others,
   against this library and the reference. */
#ifndef SMALL_STACK_KIB
#define SMALL_STACK_KIB 32
#endif
#ifndef ZLIB_STACK_KIB
#define ZLIB_STACK_KIB 64
#endif

#define NITEMS (1 << 15)
#define SIDE 100

static double src[NITEMS];

/* One run on the small thread: its codec in, what it found out. */
typedef struct {
  uint8_t codec;
  int ok_steps; /* steps whose result matched */
  int steps;
  int32_t first_bad; /* the first step that did not, or -1 */
} run_t;

static void step(run_t *r, int ok) {
  if (!ok && r->first_bad < 0) r->first_bad = r->steps;
  r->ok_steps += ok != 0;
  r->steps++;
}

/* Compress and decompress one chunk both ways. */
static void chunk_steps(run_t *r, uint8_t filter, int32_t splitmode) {
  static uint8_t chunk[NITEMS * sizeof(double) + BLOSC2_MAX_OVERHEAD];
  static double out[NITEMS];
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = r->codec;
  cp.clevel = 5;
  cp.typesize = sizeof(double);
  cp.nthreads = 1;
  cp.splitmode = splitmode;
  cp.filters[BLOSC2_MAX_FILTERS - 1] = filter;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int csize = cctx ? blosc2_compress_ctx(cctx, src, sizeof src, chunk, sizeof chunk) : -1;
  blosc2_free_ctx(cctx);
  step(r, csize > 0 && csize < (int)sizeof src);
  if (csize <= 0) return;

  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  memset(out, 0, sizeof out);
  int n = dctx ? blosc2_decompress_ctx(dctx, chunk, csize, out, sizeof out) : -1;
  blosc2_free_ctx(dctx);
  step(r, n == (int)sizeof src && memcmp(out, src, sizeof src) == 0);
  memset(out, 0, sizeof out);
  n = blosc2_decompress(chunk, csize, out, sizeof out);
  step(r, n == (int)sizeof src && memcmp(out, src, sizeof src) == 0);
}

static void schunk_steps(run_t *r) {
  static double out[NITEMS];
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = r->codec;
  cp.typesize = sizeof(double);
  blosc2_storage st = {.contiguous = true, .cparams = &cp};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  step(r, sc != NULL);
  if (sc == NULL) return;
  step(r, blosc2_schunk_append_buffer(sc, src, sizeof src) == 1);
  memset(out, 0, sizeof out);
  int n = blosc2_schunk_decompress_chunk(sc, 0, out, sizeof out);
  step(r, n == (int)sizeof src && memcmp(out, src, sizeof src) == 0);
  uint8_t *frame = NULL;
  bool needs_free = false;
  int64_t len = blosc2_schunk_to_buffer(sc, &frame, &needs_free);
  step(r, len > 0);
  blosc2_schunk *copy = len > 0 ? blosc2_schunk_from_buffer(frame, len, true) : NULL;
  memset(out, 0, sizeof out);
  n = copy ? blosc2_schunk_decompress_chunk(copy, 0, out, sizeof out) : -1;
  step(r, n == (int)sizeof src && memcmp(out, src, sizeof src) == 0);
  blosc2_schunk_free(copy);
  if (needs_free) free(frame);
  blosc2_schunk_free(sc);
}

static void b2nd_steps(run_t *r) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = r->codec;
  cp.typesize = sizeof(double);
  blosc2_storage st = {.contiguous = true, .cparams = &cp};
  const int64_t shape[2] = {SIDE, SIDE};
  const int32_t chunkshape[2] = {50, 50}, blockshape[2] = {10, 10};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 2, shape, chunkshape, blockshape, NULL, 0, NULL, 0);
  step(r, ctx != NULL);
  b2nd_array_t *arr = NULL;
  step(r, ctx && b2nd_from_cbuffer(ctx, &arr, src, SIDE * SIDE * sizeof(double)) == 0);
  const int64_t start[2] = {5, 40}, stop[2] = {60, 75}, bshape[2] = {55, 35};
  static double part[55 * 35];
  memset(part, 0, sizeof part);
  int rc = arr ? b2nd_get_slice_cbuffer(arr, start, stop, part, bshape, sizeof part) : -1;
  int same = rc == 0;
  for (int i = 0; same && i < 55; i++) {
    same = memcmp(&part[i * 35], &src[(5 + i) * SIDE + 40], 35 * sizeof(double)) == 0;
  }
  step(r, same);
  b2nd_free(arr);
  b2nd_free_ctx(ctx);
}

static void *run(void *arg) {
  run_t *r = arg;
  chunk_steps(r, BLOSC_SHUFFLE, BLOSC_ALWAYS_SPLIT);
  chunk_steps(r, BLOSC_SHUFFLE, BLOSC_NEVER_SPLIT);
  chunk_steps(r, BLOSC_BITSHUFFLE, BLOSC_NEVER_SPLIT);
  schunk_steps(r);
  b2nd_steps(r);
  return NULL;
}

static void on_small_thread(uint8_t codec, size_t stack) {
  run_t r = {.codec = codec, .first_bad = -1};
  pthread_attr_t attr;
  CHECK_EQ_INT(pthread_attr_init(&attr), 0);
  CHECK_EQ_INT(pthread_attr_setstacksize(&attr, stack < PTHREAD_STACK_MIN ? PTHREAD_STACK_MIN : stack), 0);
  pthread_t t;
  CHECK_EQ_INT(pthread_create(&t, &attr, run, &r), 0);
  CHECK_EQ_INT(pthread_join(t, NULL), 0);
  pthread_attr_destroy(&attr);
  if (r.first_bad >= 0) fprintf(stderr, "codec %d: step %d failed\n", codec, r.first_bad);
  CHECK_EQ_INT(r.steps, 17);
  CHECK_EQ_INT(r.ok_steps, r.steps);
}

int main(void) {
  blosc2_init();
  for (int i = 0; i < NITEMS; i++) src[i] = (double)(i / 7) * 0.25 + (double)(i % 5);
  const uint8_t small[] = {BLOSC_BLOSCLZ, BLOSC_LZ4, BLOSC_LZ4HC, BLOSC_ZSTD};
  for (int c = 0; c < 4; c++) on_small_thread(small[c], SMALL_STACK_KIB * 1024);
  on_small_thread(BLOSC_ZLIB, ZLIB_STACK_KIB * 1024);
  blosc2_destroy();
  return test_finish("test_small_stack");
}
