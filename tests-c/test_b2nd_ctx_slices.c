/* b2nd contexts are read when they are used, slices may reach past the end of
 * their source, and an array whose chunks are too large to hold opens but
 * refuses every access to its items: what C-Blosc2's own tests rely on. */
#include "test_common.h"

#include <unistd.h>

/* The start of the reference's private struct b2nd_context_s (C-Blosc2's
 * tests reach it through its context.h; b2nd.h keeps the type opaque). */
struct b2nd_context_s {
  int8_t ndim;
  int64_t shape[B2ND_MAX_DIM];
  int32_t chunkshape[B2ND_MAX_DIM];
  int32_t blockshape[B2ND_MAX_DIM];
  char *dtype;
  int8_t dtype_format;
  blosc2_storage *b2_storage;
};

static b2nd_array_t *numbered(int64_t n0, int64_t n1, int32_t c0, int32_t c1) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  blosc2_storage st = {.cparams = &cp};
  int64_t shape[2] = {n0, n1};
  int32_t cs[2] = {c0, c1}, bs[2] = {1, 1};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 2, shape, cs, bs, NULL, 0, NULL, 0);
  uint8_t buf[256];
  for (int i = 0; i < n0 * n1; i++) {
    buf[i] = (uint8_t)(i + 1);
  }
  b2nd_array_t *a = NULL;
  CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &a, buf, n0 * n1), 0);
  b2nd_free_ctx(ctx);
  return a;
}

/* A storage change made through ctx->b2_storage is seen by the next call. */
static void storage_written_between_calls(void) {
  const char *path = "ctx_slices_live.b2frame";
  blosc2_remove_urlpath(path);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  blosc2_storage st = {.cparams = &cp, .contiguous = true, .urlpath = (char *)path};
  int64_t shape[2] = {6, 5};
  int32_t cs[2] = {3, 5}, bs[2] = {1, 5};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 2, shape, cs, bs, NULL, 0, NULL, 0);
  CHECK(ctx != NULL);
  b2nd_array_t *src = numbered(6, 5, 2, 2);
  b2nd_array_t *onfile = NULL;
  CHECK_EQ_INT(b2nd_copy(ctx, src, &onfile), 0);
  CHECK(onfile != NULL && onfile->sc->storage->urlpath != NULL);
  CHECK(access(path, F_OK) == 0);

  /* As C-Blosc2's test_b2nd_expand_dims does before slicing. */
  ctx->b2_storage->urlpath = NULL;
  ctx->b2_storage->contiguous = false;
  int64_t start[2] = {1, 1}, stop[2] = {4, 3};
  b2nd_array_t *slice = NULL;
  CHECK_EQ_INT(b2nd_get_slice(ctx, &slice, onfile, start, stop), 0);
  CHECK(slice != NULL);
  if (slice != NULL) {
    CHECK(slice->sc->storage->urlpath == NULL);
    CHECK(!slice->sc->storage->contiguous);
    uint8_t out[6];
    CHECK_EQ_INT(b2nd_to_cbuffer(slice, out, sizeof out), 0);
    const uint8_t want[6] = {7, 8, 12, 13, 17, 18};
    CHECK(memcmp(out, want, sizeof want) == 0);
    b2nd_free(slice);
  }
  /* The slice did not overwrite the file the copy lives in. */
  uint8_t all[30];
  CHECK_EQ_INT(b2nd_to_cbuffer(onfile, all, sizeof all), 0);
  CHECK_EQ_INT(all[29], 30);
  /* The context now holds the slice's shape, as the reference's does. */
  CHECK_EQ_INT(ctx->ndim, 2);
  CHECK_EQ_INT(ctx->shape[0], 3);
  CHECK_EQ_INT(ctx->shape[1], 2);

  /* The other fields are live too: a new chunkshape for the next array. */
  ctx->chunkshape[0] = 2;
  ctx->blockshape[0] = 2;
  b2nd_array_t *again = NULL;
  CHECK_EQ_INT(b2nd_zeros(ctx, &again), 0);
  if (again != NULL) {
    CHECK_EQ_INT(again->shape[0], 3);
    CHECK_EQ_INT(again->chunkshape[0], 2);
    CHECK_EQ_INT(again->blockshape[0], 2);
    CHECK(again->sc->storage->urlpath == NULL);
    b2nd_free(again);
  }
  b2nd_free(onfile);
  b2nd_free(src);
  b2nd_free_ctx(ctx);
  blosc2_remove_urlpath(path);
}

/* A context whose chunkshape is 0 under a non-empty dimension makes no array
 * of its own shape, but slices empty along that dimension. */
static void zero_chunkshape_context(void) {
  b2nd_array_t *src = numbered(20, 10, 7, 5);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  blosc2_storage st = {.cparams = &cp};
  int64_t shape[2] = {20, 10};
  int32_t cs[2] = {1, 0}, bs[2] = {1, 0};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 2, shape, cs, bs, NULL, 0, NULL, 0);
  CHECK(ctx != NULL);
  b2nd_array_t *a = NULL;
  CHECK_EQ_INT(b2nd_zeros(ctx, &a), BLOSC2_ERROR_INVALID_PARAM);
  CHECK(a == NULL);

  int64_t start[2] = {17, 0}, stop[2] = {18, 0};
  b2nd_array_t *slice = NULL;
  CHECK_EQ_INT(b2nd_get_slice(ctx, &slice, src, start, stop), 0);
  if (slice != NULL) {
    CHECK_EQ_INT(slice->ndim, 2);
    CHECK_EQ_INT(slice->shape[0], 1);
    CHECK_EQ_INT(slice->shape[1], 0);
    CHECK_EQ_INT(slice->chunkshape[0], 1);
    CHECK_EQ_INT(slice->chunkshape[1], 0);
    CHECK_EQ_INT(slice->nitems, 0);
    b2nd_array_t *view = NULL;
    CHECK_EQ_INT(b2nd_squeeze(slice, &view), 0);
    if (view != NULL) {
      CHECK_EQ_INT(view->ndim, 1);
      CHECK_EQ_INT(view->shape[0], 0);
      b2nd_free(view);
    }
    b2nd_free(slice);
  }
  /* Not empty along the zero chunkshape: refused. */
  int64_t stop1[2] = {18, 1};
  slice = NULL;
  CHECK_EQ_INT(b2nd_get_slice(ctx, &slice, src, start, stop1), BLOSC2_ERROR_INVALID_PARAM);
  CHECK(slice == NULL);
  b2nd_free_ctx(ctx);
  b2nd_free(src);
}

/* The part of a region past the end of the source reads as zeros. */
static void slices_past_the_end(void) {
  b2nd_array_t *src = numbered(4, 4, 2, 2);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  blosc2_storage st = {.cparams = &cp};
  int64_t shape[2] = {4, 4};
  int32_t cs[2] = {2, 2}, bs[2] = {1, 1};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 2, shape, cs, bs, NULL, 0, NULL, 0);
  struct {
    int64_t start[2], stop[2];
    int n;
    uint8_t want[8];
  } cases[] = {
      {{2, 2}, {4, 6}, 8, {11, 12, 0, 0, 15, 16, 0, 0}},
      {{2, 2}, {6, 4}, 8, {11, 12, 15, 16, 0, 0, 0, 0}},
      {{1, 4}, {2, 5}, 1, {0}},
      {{4, 0}, {5, 2}, 2, {0, 0}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    b2nd_array_t *s = NULL;
    CHECK_EQ_INT(b2nd_get_slice(ctx, &s, src, cases[k].start, cases[k].stop), 0);
    if (s == NULL) {
      continue;
    }
    CHECK_EQ_INT(s->shape[0], cases[k].stop[0] - cases[k].start[0]);
    CHECK_EQ_INT(s->shape[1], cases[k].stop[1] - cases[k].start[1]);
    uint8_t out[8] = {0};
    CHECK_EQ_INT(b2nd_to_cbuffer(s, out, cases[k].n), 0);
    CHECK(memcmp(out, cases[k].want, (size_t)cases[k].n) == 0);
    b2nd_free(s);
  }
  /* A negative start, or a start past the stop, is still refused (the
   * reference fails the first with BLOSC2_ERROR_FAILURE). */
  int64_t neg[2] = {-1, 0}, one[2] = {1, 1}, two[2] = {2, 0};
  b2nd_array_t *s = NULL;
  CHECK(b2nd_get_slice(ctx, &s, src, neg, one) < 0);
  CHECK_EQ_INT(b2nd_get_slice(ctx, &s, src, two, one), BLOSC2_ERROR_INVALID_PARAM);
  CHECK(s == NULL);
  b2nd_free_ctx(ctx);
  b2nd_free(src);
}

/* A super-chunk holding only a "b2nd" metalayer, of typesize `typesize`,
 * with `nbytes` bytes of data appended when non-zero. */
static blosc2_schunk *described(int64_t n, int32_t block, int32_t typesize, int32_t nbytes) {
  int64_t shape[1] = {n};
  int32_t cs[1] = {(int32_t)n}, bs[1] = {block};
  uint8_t *smeta = NULL;
  int32_t len = b2nd_serialize_meta(1, shape, cs, bs, "|u1", 0, &smeta);
  CHECK(len > 0);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = typesize;
  blosc2_storage st = {.cparams = &cp, .contiguous = true};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK_EQ_INT(blosc2_meta_add(sc, "b2nd", smeta, len), 0);
  free(smeta);
  if (nbytes > 0) {
    uint8_t data[64] = {0};
    CHECK(blosc2_schunk_append_buffer(sc, data, nbytes) > 0);
  }
  return sc;
}

/* One chunk of 1073741952 items of 4 bytes is past what a chunk holds: such
 * an array opens over a super-chunk without chunks, as in the reference, and
 * then refuses every read and write of its items. */
static void oversized_chunks(void) {
  const int64_t n = 1073741952;
  blosc2_schunk *sc = described(n, 128, 4, 0);
  b2nd_array_t *a = NULL;
  CHECK_EQ_INT(b2nd_from_schunk(sc, &a), 0);
  CHECK(a != NULL);
  if (a == NULL) {
    blosc2_schunk_free(sc);
    return;
  }
  CHECK_EQ_INT(a->shape[0], n);
  CHECK_EQ_INT(a->extchunknitems, n);
  CHECK_EQ_INT(a->blocknitems, 128);
  int64_t start[1] = {0}, stop[1] = {1}, bshape[1] = {1};
  uint8_t item[8] = {0};
  CHECK_EQ_INT(b2nd_get_slice_cbuffer(a, start, stop, item, bshape, sizeof item),
               BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(b2nd_set_slice_cbuffer(item, bshape, sizeof item, start, stop, a),
               BLOSC2_ERROR_INVALID_PARAM);
  int64_t idx[1] = {5};
  CHECK_EQ_INT(b2nd_get_sparse_cbuffer(a, 1, idx, item, sizeof item), BLOSC2_ERROR_INVALID_PARAM);
  /* Refused, and the shape stays (the reference's grows regardless). */
  int64_t grown[1] = {n + 1};
  CHECK(b2nd_resize(a, grown, NULL) < 0);
  CHECK(b2nd_append(a, item, 4, 0) < 0);
  CHECK_EQ_INT(a->shape[0], n);
  CHECK_EQ_INT(a->sc->nchunks, 0);
  CHECK_EQ_INT(b2nd_free(a), 0);

  /* With data in it the super-chunk cannot hold such chunks: refused (the
   * reference takes any super-chunk whose metalayer is well formed), and the
   * super-chunk stays the caller's. */
  sc = described(n, 128, 4, 64);
  a = NULL;
  CHECK(b2nd_from_schunk(sc, &a) < 0);
  CHECK(a == NULL);
  blosc2_schunk_free(sc);
}

int main(void) {
  blosc2_init();
  storage_written_between_calls();
  zero_chunkshape_context();
  slices_past_the_end();
  oversized_chunks();
  blosc2_destroy();
  return test_finish("test_b2nd_ctx_slices");
}
