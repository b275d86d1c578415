/* The threads callback (blosc2_set_threads_callback) and small chunks.

   As in the reference, a call with nthreads > 1 hands its jobs to the
   callback whenever there is more than one block to work on, however small
   the chunk: compressing or decompressing 512 bytes in four blocks, and
   gathering items with blosc2_schunk_get_sparse_buffer from chunks of that
   size. One thread, or one block, stays on the caller. */
#include "test_common.h"

#include <stdint.h>

static int calls = 0, jobs = 0;

static void run_all(void *data, void (*dojob)(void *), int numjobs, size_t elsize, void *jobdata) {
  (void)data;
  calls++;
  jobs += numjobs;
  for (int i = 0; i < numjobs; i++) dojob((char *)jobdata + (size_t)i * elsize);
}

#define CHUNK_ITEMS 128
#define NCHUNKS 8

static blosc2_schunk *small_chunks(int16_t nthreads, int32_t *ref) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.blocksize = 32 * 4;
  cp.nthreads = nthreads;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = nthreads;
  blosc2_storage storage = {.cparams = &cp, .dparams = &dp};
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  for (int k = 0; k < NCHUNKS; k++) {
    for (int i = 0; i < CHUNK_ITEMS; i++) ref[k * CHUNK_ITEMS + i] = (k * CHUNK_ITEMS + i) * 7 + 3;
    CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, ref + k * CHUNK_ITEMS, CHUNK_ITEMS * 4), k + 1);
  }
  return sc;
}

int main(void) {
  blosc2_init();
  blosc2_set_threads_callback(run_all, NULL);

  /* One chunk of 512 bytes in 4 blocks, 4 threads: one call each way. */
  int32_t src[CHUNK_ITEMS], back[CHUNK_ITEMS];
  for (int i = 0; i < CHUNK_ITEMS; i++) src[i] = i / 8;
  uint8_t chunk[CHUNK_ITEMS * 4 + BLOSC2_MAX_OVERHEAD];
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.blocksize = 128;
  cp.nthreads = 4;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int cbytes = blosc2_compress_ctx(cctx, src, sizeof(src), chunk, sizeof(chunk));
  CHECK(cbytes > 0);
  CHECK_EQ_INT(calls, 1);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 4;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, cbytes, back, sizeof(back)), sizeof(back));
  CHECK(memcmp(src, back, sizeof(src)) == 0);
  CHECK_EQ_INT(calls, 2);
  blosc2_free_ctx(cctx);
  blosc2_free_ctx(dctx);

  /* One block: no call. */
  cp.blocksize = 0;
  cctx = blosc2_create_cctx(cp);
  calls = 0;
  CHECK(blosc2_compress_ctx(cctx, src, sizeof(src), chunk, sizeof(chunk)) > 0);
  CHECK_EQ_INT(calls, 0);
  blosc2_free_ctx(cctx);

  /* Gathering items of 8 such chunks on 4 threads: one call. */
  static int32_t ref[NCHUNKS * CHUNK_ITEMS];
  blosc2_schunk *sc = small_chunks(4, ref);
  int64_t coords[] = {1023, 0, 1, 31, 32, 500, 129, 128, 500, 700, 2, 3};
  enum { N = sizeof(coords) / sizeof(coords[0]) };
  int32_t got[N];
  calls = jobs = 0;
  CHECK_EQ_INT(blosc2_schunk_get_sparse_buffer(sc, N, coords, got), 0);
  CHECK_EQ_INT(calls, 1);
  CHECK(jobs > 1 && jobs <= 4);
  for (int i = 0; i < N; i++) CHECK_EQ_INT(got[i], ref[coords[i]]);
  /* Items of a single block, or a single item: no call. */
  int64_t one_block[] = {40, 41, 40};
  calls = 0;
  CHECK_EQ_INT(blosc2_schunk_get_sparse_buffer(sc, 3, one_block, got), 0);
  CHECK_EQ_INT(got[1], ref[41]);
  CHECK_EQ_INT(blosc2_schunk_get_sparse_buffer(sc, 1, coords, got), 0);
  CHECK_EQ_INT(got[0], ref[1023]);
  CHECK_EQ_INT(calls, 0);
  /* Out of range, negative counts: refused. */
  int64_t bad[] = {5, NCHUNKS * CHUNK_ITEMS};
  CHECK_EQ_INT(blosc2_schunk_get_sparse_buffer(sc, 2, bad, got), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_schunk_get_sparse_buffer(sc, -1, coords, got), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_schunk_get_sparse_buffer(sc, 0, NULL, NULL), 0);
  blosc2_schunk_free(sc);

  /* One thread: the callback is never used. */
  sc = small_chunks(1, ref);
  calls = 0;
  CHECK_EQ_INT(blosc2_schunk_get_sparse_buffer(sc, N, coords, got), 0);
  for (int i = 0; i < N; i++) CHECK_EQ_INT(got[i], ref[coords[i]]);
  CHECK_EQ_INT(calls, 0);
  blosc2_schunk_free(sc);

  /* Reset: the library's own threads again. */
  blosc2_set_threads_callback(NULL, NULL);
  sc = small_chunks(4, ref);
  calls = 0;
  CHECK_EQ_INT(blosc2_schunk_get_sparse_buffer(sc, N, coords, got), 0);
  for (int i = 0; i < N; i++) CHECK_EQ_INT(got[i], ref[coords[i]]);
  CHECK_EQ_INT(calls, 0);
  blosc2_schunk_free(sc);

  blosc2_destroy();
  return test_finish("test_threads_callback_small");
}
