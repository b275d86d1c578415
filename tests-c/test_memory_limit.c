/* Memory the system refuses. A call whose working memory (a block's
   scratch, the chunk a slice is read through) cannot be had returns
   BLOSC2_ERROR_MEMORY_ALLOC, as the reference does when its malloc fails,
   and leaves the library working: the same call succeeds once memory is
   there again. Until issue 7's stop 55 these calls aborted the process.
   The refusal comes from an address-space limit (RLIMIT_AS) set a little
   above what the process already maps, so it is the same on every machine;
   the test is skipped where the limit cannot be set. */
#include "test_common.h"

#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

/* One block of a chunk, and one chunk of an array: 64 MiB of int64. */
#define BIG ((int64_t)64 << 20)
#define NITEMS (BIG / 8)
/* Address space left free under the limit: enough for small work,
   not for another BIG buffer. */
#define ROOM ((rlim_t)24 << 20)

static struct rlimit saved;

/* The address space the process maps now, in bytes, or 0 if unknown. */
static rlim_t mapped_now(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (!f) return 0;
  if (fscanf(f, "%lu", &pages) != 1) pages = 0;
  fclose(f);
  return (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
}

/* Sets the limit to what is mapped now plus ROOM; 0 when set. */
static int limit(void) {
  rlim_t now = mapped_now();
  if (now == 0 || getrlimit(RLIMIT_AS, &saved) != 0) return -1;
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < now + ROOM) return -1;
  struct rlimit l = {now + ROOM, saved.rlim_max};
  return setrlimit(RLIMIT_AS, &l);
}

static void unlimit(void) {
  if (setrlimit(RLIMIT_AS, &saved) != 0) {
    fprintf(stderr, "cannot lift the limit: %s\n", strerror(errno));
    exit(1);
  }
}

/* A chunk of one BIG block, through contexts and the global calls. Not
   split: its shuffled block goes through a scratch of the block's size both
   ways (a split block is shuffled straight into the chunk). The scratch is
   kept per thread once it has been had, so each way is first called under
   the limit. The reference returns BLOSC2_ERROR_THREAD_CREATE (-26) for
   these, its scratch being made with its per-context threads state. */
static void chunk_calls(const int64_t *src, int64_t *out) {
  size_t room = (size_t)BIG + BLOSC2_MAX_OVERHEAD;
  uint8_t *chunk = malloc(room);
  uint8_t *again = malloc(room);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 8;
  cp.nthreads = 1;
  cp.blocksize = (int32_t)BIG;
  cp.filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_SHUFFLE;
  cp.splitmode = BLOSC_NEVER_SPLIT;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  blosc2_context *dctx = blosc2_create_dctx(dp);
  CHECK(chunk && again && cctx && dctx);
  if (!chunk || !again || !cctx || !dctx) return;
  int limited = limit() == 0;
  if (limited) {
    CHECK_EQ_INT(blosc2_compress_ctx(cctx, src, (int32_t)BIG, chunk, (int32_t)room),
                 BLOSC2_ERROR_MEMORY_ALLOC);
    unlimit();
  } else {
    printf("skipped the limit: %s\n", strerror(errno));
  }
  int csize = blosc2_compress_ctx(cctx, src, (int32_t)BIG, chunk, (int32_t)room);
  CHECK(csize > 0);
  if (csize <= 0) return;
  if (limited && limit() == 0) {
    CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, (int32_t)BIG),
                 BLOSC2_ERROR_MEMORY_ALLOC);
    CHECK_EQ_INT(blosc2_decompress(chunk, csize, out, (int32_t)BIG), BLOSC2_ERROR_MEMORY_ALLOC);
    unlimit();
  }
  /* Memory back: the same calls work, and compress as before. */
  CHECK_EQ_INT(blosc2_compress_ctx(cctx, src, (int32_t)BIG, again, (int32_t)room), csize);
  CHECK(memcmp(again, chunk, (size_t)csize) == 0);
  memset(out, 0, (size_t)BIG);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, (int32_t)BIG), BIG);
  CHECK(memcmp(out, src, (size_t)BIG) == 0);
  memset(out, 0, (size_t)BIG);
  CHECK_EQ_INT(blosc2_decompress(chunk, csize, out, (int32_t)BIG), BIG);
  CHECK(memcmp(out, src, (size_t)BIG) == 0);
  blosc2_free_ctx(cctx);
  blosc2_free_ctx(dctx);
  free(again);
  free(chunk);
}

/* An array of one BIG chunk in 32 KiB blocks: a slice of a few items is
   read through a chunk-sized buffer, while the whole array, whose chunk
   holds its items in C order, is decoded straight into the caller's
   buffer and needs none (as in the reference). */
static void array_calls(const int64_t *src, int64_t *out) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 8;
  cp.nthreads = 1;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.cparams = &cp;
  st.dparams = &dp;
  int64_t shape[1] = {NITEMS};
  int32_t cs[1] = {(int32_t)NITEMS};
  int32_t bs[1] = {4096};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 1, shape, cs, bs, NULL, 0, NULL, 0);
  b2nd_array_t *a = NULL;
  CHECK(ctx != NULL);
  if (!ctx) return;
  CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &a, src, BIG), 0);
  if (!a) return;
  int64_t start[1] = {NITEMS / 2 + 3}, stop[1] = {NITEMS / 2 + 13};
  int64_t bshape[1] = {10};
  int64_t got[10];

  memset(out, 0, (size_t)BIG);
  if (limit() == 0) {
    CHECK_EQ_INT(b2nd_get_slice_cbuffer(a, start, stop, got, bshape, sizeof got),
                 BLOSC2_ERROR_MEMORY_ALLOC);
    CHECK_EQ_INT(b2nd_to_cbuffer(a, out, BIG), 0);
    unlimit();
    CHECK(memcmp(out, src, (size_t)BIG) == 0);
  }
  memset(got, 0, sizeof got);
  CHECK_EQ_INT(b2nd_get_slice_cbuffer(a, start, stop, got, bshape, sizeof got), 0);
  CHECK(memcmp(got, src + start[0], sizeof got) == 0);
  b2nd_free(a);
  b2nd_free_ctx(ctx);
}

int main(void) {
  blosc2_init();
  int64_t *src = malloc((size_t)BIG);
  int64_t *out = malloc((size_t)BIG);
  CHECK(src && out);
  if (!src || !out) return test_finish("test_memory_limit");
  for (int64_t i = 0; i < NITEMS; i++) src[i] = i / 3;
  chunk_calls(src, out);
  array_calls(src, out);
  free(out);
  free(src);
  blosc2_destroy();
  return test_finish("test_memory_limit");
}
