/* The b2nd C API: every function, over typesizes 1, 2, 4, 8 and 13, shapes
 * with empty dimensions, 0-d and 16-d, and the three backends (memory,
 * contiguous frame file, sparse frame directory). Slices are compared with a
 * naive C model; bad input gives the reference's error codes and leaves file
 * arrays unchanged. */
#include "test_common.h"

#include <stdint.h>

enum backend { MEM, FILE_CONTIG, DIR_SPARSE };
static const char *backend_name[] = {"memory", "frame file", "sparse dir"};
static const char *backend_path[] = {NULL, "t_b2nd_api.b2nd", "t_b2nd_api_dir.b2nd"};

static blosc2_cparams cparams_for(int32_t typesize) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = typesize;
  cp.clevel = 5;
  cp.compcode = typesize == 13 ? BLOSC_LZ4 : BLOSC_ZSTD;
  cp.nthreads = 1;
  return cp;
}

static b2nd_context_t *make_ctx(enum backend be, int32_t typesize, int8_t ndim, const int64_t *shape,
                                const int32_t *cs, const int32_t *bs, const char *dtype) {
  blosc2_cparams cp = cparams_for(typesize);
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.cparams = &cp;
  st.contiguous = be != DIR_SPARSE;
  st.urlpath = (char *)backend_path[be];
  if (st.urlpath) {
    blosc2_remove_urlpath(st.urlpath);
  }
  return b2nd_create_ctx(&st, ndim, shape, cs, bs, dtype, DTYPE_NUMPY_FORMAT, NULL, 0);
}

static int64_t prod(const int64_t *v, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= v[i];
  return p;
}

static void pattern(uint8_t *buf, int64_t n, unsigned seed) {
  for (int64_t i = 0; i < n; i++) buf[i] = (uint8_t)(i * 7 + i / 251 + seed);
}

/* Naive model: copy region [start, stop) of `src` (shape `shape`) into `dst`
 * (shape `bshape`, region at its origin), or the reverse when `to_src`. */
static void naive_region(uint8_t *arr, const int64_t *shape, uint8_t *buf, const int64_t *bshape,
                         const int64_t *start, const int64_t *stop, int ndim, int ts, int to_arr) {
  int64_t n = 1, idx[B2ND_MAX_DIM];
  for (int i = 0; i < ndim; i++) {
    if (stop[i] <= start[i]) return;
    n *= stop[i] - start[i];
  }
  for (int64_t k = 0; k < n; k++) {
    int64_t r = k;
    for (int i = ndim - 1; i >= 0; i--) {
      idx[i] = r % (stop[i] - start[i]);
      r /= stop[i] - start[i];
    }
    int64_t a = 0, b = 0;
    for (int i = 0; i < ndim; i++) {
      a = a * shape[i] + start[i] + idx[i];
      b = b * bshape[i] + idx[i];
    }
    if (to_arr) memcpy(arr + a * ts, buf + b * ts, (size_t)ts);
    else memcpy(buf + b * ts, arr + a * ts, (size_t)ts);
  }
}

/* Bytes of a file (or of a sparse directory's index frame), for
 * unchanged-on-error checks. Returns a malloc'ed buffer. */
static uint8_t *slurp(const char *path, long *len) {
  char p[512];
  /* A sparse directory's index frame first (fopen also opens directories). */
  snprintf(p, sizeof p, "%s/chunks.b2frame", path);
  FILE *f = fopen(p, "rb");
  if (f == NULL) {
    f = fopen(path, "rb");
  }
  if (f == NULL) {
    *len = -1;
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  *len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)*len + 1);
  if (fread(b, 1, (size_t)*len, f) != (size_t)*len) *len = -2;
  fclose(f);
  return b;
}

struct geom {
  int8_t ndim;
  int64_t shape[B2ND_MAX_DIM];
  int32_t cs[B2ND_MAX_DIM];
  int32_t bs[B2ND_MAX_DIM];
};

static void roundtrip(enum backend be, int32_t ts, const struct geom *g) {
  int n = g->ndim;
  int64_t nitems = prod(g->shape, n);
  int64_t nbytes = nitems * ts;
  uint8_t *src = malloc((size_t)nbytes + 1), *out = malloc((size_t)nbytes + 1);
  pattern(src, nbytes, (unsigned)ts);
  b2nd_context_t *ctx = make_ctx(be, ts, g->ndim, g->shape, g->cs, g->bs, NULL);
  CHECK(ctx != NULL);
  if (ctx == NULL) goto done;
  b2nd_array_t *a = NULL;
  CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &a, src, nbytes), 0);
  if (a == NULL) goto done_ctx;
  CHECK_EQ_INT(a->ndim, n);
  CHECK_EQ_INT(a->nitems, nitems);
  CHECK_EQ_INT(a->sc->typesize, ts);
  char want_dtype[16];
  snprintf(want_dtype, sizeof want_dtype, "|S%d", ts);
  CHECK(strcmp(a->dtype, want_dtype) == 0);
  int64_t nchunks = 1;
  for (int i = 0; i < n; i++) {
    CHECK_EQ_INT(a->shape[i], g->shape[i]);
    CHECK_EQ_INT(a->chunkshape[i], g->cs[i]);
    CHECK_EQ_INT(a->blockshape[i], g->bs[i]);
    nchunks *= g->cs[i] ? a->extshape[i] / g->cs[i] : 0;
  }
  CHECK_EQ_INT(a->sc->nchunks, nchunks);
  memset(out, 0xEE, (size_t)nbytes);
  CHECK_EQ_INT(b2nd_to_cbuffer(a, out, nbytes), 0);
  CHECK(memcmp(out, src, (size_t)nbytes) == 0);
  if (nbytes > 0) {
    CHECK_EQ_INT(b2nd_to_cbuffer(a, out, nbytes - 1), BLOSC2_ERROR_INVALID_PARAM);
  }

  /* A slice in the middle, and writing it back shifted. */
  int64_t start[B2ND_MAX_DIM], stop[B2ND_MAX_DIM], bshape[B2ND_MAX_DIM];
  for (int i = 0; i < n; i++) {
    start[i] = g->shape[i] / 3;
    stop[i] = g->shape[i] - g->shape[i] / 4;
    bshape[i] = stop[i] - start[i];
  }
  int64_t sn = prod(bshape, n) * ts;
  uint8_t *sl = malloc((size_t)sn + 1), *model = malloc((size_t)sn + 1);
  memset(model, 0, (size_t)sn + 1);
  naive_region(src, g->shape, model, bshape, start, stop, n, ts, 0);
  CHECK_EQ_INT(b2nd_get_slice_cbuffer(a, start, stop, sl, bshape, sn), 0);
  CHECK(memcmp(sl, model, (size_t)sn) == 0);
  for (int64_t i = 0; i < sn; i++) sl[i] = (uint8_t)(sl[i] ^ 0x5A);
  CHECK_EQ_INT(b2nd_set_slice_cbuffer(sl, bshape, sn, start, stop, a), 0);
  naive_region(src, g->shape, sl, bshape, start, stop, n, ts, 1);
  CHECK_EQ_INT(b2nd_to_cbuffer(a, out, nbytes), 0);
  CHECK(memcmp(out, src, (size_t)nbytes) == 0);

  /* Sparse gather of a few flat indices. */
  if (n > 0 && nitems > 0) {
    int64_t coords[4] = {0, nitems - 1, nitems / 2, 0};
    uint8_t got[4 * 16];
    CHECK_EQ_INT(b2nd_get_sparse_cbuffer(a, 4, coords, got, sizeof got), 0);
    for (int k = 0; k < 4; k++) CHECK(memcmp(got + k * ts, src + coords[k] * ts, (size_t)ts) == 0);
  }

  /* get_slice into a new in-memory array. */
  {
    blosc2_cparams cp = cparams_for(ts);
    blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
    st.cparams = &cp;
    b2nd_context_t *sctx = b2nd_create_ctx(&st, g->ndim, bshape, g->cs, g->bs, NULL, 0, NULL, 0);
    b2nd_array_t *s = NULL;
    CHECK_EQ_INT(b2nd_get_slice(sctx, &s, a, start, stop), 0);
    if (s) {
      for (int i = 0; i < n; i++) CHECK_EQ_INT(s->shape[i], bshape[i]);
      memset(model, 0, (size_t)sn + 1);
      naive_region(src, g->shape, model, bshape, start, stop, n, ts, 0);
      CHECK_EQ_INT(b2nd_to_cbuffer(s, sl, sn), 0);
      CHECK(memcmp(sl, model, (size_t)sn) == 0);
      b2nd_free(s);
    }
    b2nd_free_ctx(sctx);
  }

  /* Serialization and persistence. */
  uint8_t *cframe = NULL;
  int64_t cflen = 0;
  bool needs_free = false;
  CHECK_EQ_INT(b2nd_to_cframe(a, &cframe, &cflen, &needs_free), 0);
  for (int copy = 0; copy < 2; copy++) {
    b2nd_array_t *c = NULL;
    CHECK_EQ_INT(b2nd_from_cframe(cframe, cflen, copy, &c), 0);
    if (c) {
      CHECK_EQ_INT(b2nd_to_cbuffer(c, out, nbytes), 0);
      CHECK(memcmp(out, src, (size_t)nbytes) == 0);
      b2nd_free(c);
    }
  }
  if (needs_free) free(cframe);
  if (be != MEM) {
    CHECK_EQ_INT(b2nd_free(a), 0);
    a = NULL;
    CHECK_EQ_INT(b2nd_open(backend_path[be], &a), 0);
    if (a == NULL) goto done_slice;
    CHECK_EQ_INT(a->ndim, n);
    CHECK_EQ_INT(b2nd_to_cbuffer(a, out, nbytes), 0);
    CHECK(memcmp(out, src, (size_t)nbytes) == 0);
  }
  CHECK_EQ_INT(b2nd_save(a, "t_b2nd_api_saved.b2nd"), 0);
  b2nd_array_t *o = NULL;
  CHECK_EQ_INT(b2nd_open("t_b2nd_api_saved.b2nd", &o), 0);
  if (o) {
    CHECK_EQ_INT(b2nd_to_cbuffer(o, out, nbytes), 0);
    CHECK(memcmp(out, src, (size_t)nbytes) == 0);
    b2nd_free(o);
  }
  blosc2_remove_urlpath("t_b2nd_api_saved.b2nd");
  remove("t_b2nd_api_many.bin");
  int64_t off0 = b2nd_save_append(a, "t_b2nd_api_many.bin");
  int64_t off1 = b2nd_save_append(a, "t_b2nd_api_many.bin");
  CHECK_EQ_INT(off0, 0);
  CHECK(off1 > 0);
  o = NULL;
  CHECK_EQ_INT(b2nd_open_offset("t_b2nd_api_many.bin", &o, off1), 0);
  if (o) {
    CHECK_EQ_INT(b2nd_to_cbuffer(o, out, nbytes), 0);
    CHECK(memcmp(out, src, (size_t)nbytes) == 0);
    b2nd_free(o);
  }
  remove("t_b2nd_api_many.bin");

  /* Copy with other chunk and block shapes. */
  if (n > 0) {
    int32_t cs2[B2ND_MAX_DIM], bs2[B2ND_MAX_DIM];
    for (int i = 0; i < n; i++) {
      cs2[i] = g->shape[i] > 1 ? (int32_t)(g->shape[i] / 2) : 1;
      bs2[i] = 1;
    }
    blosc2_cparams cp = cparams_for(ts);
    blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
    st.cparams = &cp;
    b2nd_context_t *cctx = b2nd_create_ctx(&st, g->ndim, g->shape, cs2, bs2, NULL, 0, NULL, 0);
    CHECK(cctx != NULL);
    b2nd_array_t *c = NULL;
    CHECK_EQ_INT(b2nd_copy(cctx, a, &c), 0);
    if (c) {
      CHECK_EQ_INT(c->chunkshape[0], cs2[0]);
      CHECK_EQ_INT(b2nd_to_cbuffer(c, out, nbytes), 0);
      CHECK(memcmp(out, src, (size_t)nbytes) == 0);
      b2nd_free(c);
    }
    b2nd_free_ctx(cctx);
  }

  /* Out-of-range slices and small buffers; a file array stays unchanged. */
  if (n > 0) {
    long len0 = 0, len1 = 0;
    uint8_t *before = be != MEM ? slurp(backend_path[be], &len0) : NULL;
    int64_t bad_stop[B2ND_MAX_DIM];
    memcpy(bad_stop, g->shape, sizeof(int64_t) * (size_t)n);
    /* Past the padded extent: the reference accepts stops inside the
     * padding, and reports these with varying codes; all are errors. */
    bad_stop[n - 1] = a->extshape[n - 1] + 1;
    int64_t zero[B2ND_MAX_DIM] = {0};
    int64_t bigshape[B2ND_MAX_DIM];
    memcpy(bigshape, bad_stop, sizeof bigshape);
    int64_t bn = prod(bigshape, n) * ts;
    uint8_t *big = calloc((size_t)bn + 1, 1);
    CHECK(b2nd_set_slice_cbuffer(big, bigshape, bn, zero, bad_stop, a) < 0);
    CHECK(b2nd_get_slice_cbuffer(a, zero, bad_stop, big, bigshape, bn) < 0);
    if (nbytes > 0) {
      CHECK_EQ_INT(b2nd_set_slice_cbuffer(src, g->shape, nbytes - 1, zero, g->shape, a),
                   BLOSC2_ERROR_INVALID_PARAM);
    }
    free(big);
    if (before) {
      uint8_t *after = slurp(backend_path[be], &len1);
      CHECK_EQ_INT(len1, len0);
      CHECK(after && memcmp(before, after, (size_t)len0) == 0);
      free(after);
      free(before);
    }
    CHECK_EQ_INT(b2nd_to_cbuffer(a, out, nbytes), 0);
    CHECK(memcmp(out, src, (size_t)nbytes) == 0);
  }
  if (test_failures) {
    fprintf(stderr, "  (in roundtrip: %s, typesize %d, ndim %d)\n", backend_name[be], ts, n);
  }
  b2nd_free(a);
done_slice:
  free(sl);
  free(model);
done_ctx:
  b2nd_free_ctx(ctx);
done:
  free(src);
  free(out);
  if (backend_path[be]) blosc2_remove_urlpath(backend_path[be]);
}

static void test_roundtrips(void) {
  struct geom geoms[6];
  memset(geoms, 0, sizeof geoms);
  geoms[0].ndim = 0; /* 0-d: one item */
  geoms[1] = (struct geom){1, {37}, {10}, {4}};
  geoms[2] = (struct geom){2, {0, 5}, {2, 3}, {1, 2}};
  geoms[3] = (struct geom){3, {7, 9, 5}, {3, 4, 5}, {2, 2, 3}};
  geoms[4] = (struct geom){2, {12, 10}, {12, 10}, {12, 10}};
  geoms[5].ndim = 16;
  for (int i = 0; i < 16; i++) {
    /* 16-d, kept small: four dimensions of 3 (chunks of 2), twelve of 1. */
    geoms[5].shape[i] = i % 4 == 1 ? 3 : 1;
    geoms[5].cs[i] = i % 4 == 1 ? 2 : 1;
    geoms[5].bs[i] = 1;
  }
  const int32_t typesizes[] = {1, 2, 4, 8, 13};
  for (int be = 0; be < 3; be++)
    for (int t = 0; t < 5; t++)
      for (int k = 0; k < 6; k++) roundtrip((enum backend)be, typesizes[t], &geoms[k]);
}

static void test_constructors(void) {
  int64_t shape[2] = {5, 7};
  int32_t cs[2] = {2, 3}, bs[2] = {1, 3};
  for (int be = 0; be < 3; be++) {
    b2nd_context_t *ctx = make_ctx((enum backend)be, 8, 2, shape, cs, bs, "<f8");
    b2nd_array_t *a = NULL;
    double buf[35];
    CHECK_EQ_INT(b2nd_zeros(ctx, &a), 0);
    CHECK_EQ_INT(b2nd_to_cbuffer(a, buf, sizeof buf), 0);
    for (int i = 0; i < 35; i++) CHECK(buf[i] == 0.0);
    CHECK(strcmp(a->dtype, "<f8") == 0);
    b2nd_free(a);
    CHECK_EQ_INT(b2nd_nans(ctx, &a), 0);
    CHECK_EQ_INT(b2nd_to_cbuffer(a, buf, sizeof buf), 0);
    for (int i = 0; i < 35; i++) CHECK(buf[i] != buf[i]);
    b2nd_free(a);
    double v = 2.5;
    CHECK_EQ_INT(b2nd_full(ctx, &a, &v), 0);
    CHECK_EQ_INT(b2nd_to_cbuffer(a, buf, sizeof buf), 0);
    for (int i = 0; i < 35; i++) CHECK(buf[i] == 2.5);
    b2nd_free(a);
    CHECK_EQ_INT(b2nd_empty(ctx, &a), 0);
    CHECK_EQ_INT(a->sc->nchunks, 9);
    b2nd_free(a);
    CHECK_EQ_INT(b2nd_uninit(ctx, &a), 0);
    CHECK_EQ_INT(a->nitems, 35);
    b2nd_free(a);
    b2nd_free_ctx(ctx);
  }
  /* NaNs need typesize 4 or 8. */
  b2nd_context_t *ctx = make_ctx(MEM, 2, 2, shape, cs, bs, NULL);
  b2nd_array_t *a = NULL;
  CHECK_EQ_INT(b2nd_nans(ctx, &a), BLOSC2_ERROR_DATA);
  CHECK_EQ_INT(b2nd_zeros(NULL, &a), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(b2nd_free(NULL), BLOSC2_ERROR_NULL_POINTER);
  b2nd_free_ctx(ctx);
}

static void test_bad_contexts(void) {
  int64_t shape[17] = {10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10};
  int32_t cs[17], bs[17];
  for (int i = 0; i < 17; i++) cs[i] = bs[i] = 1;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  CHECK(b2nd_create_ctx(&st, 17, shape, cs, bs, NULL, 0, NULL, 0) == NULL);
  CHECK(b2nd_create_ctx(&st, -1, shape, cs, bs, NULL, 0, NULL, 0) == NULL);
  CHECK(b2nd_create_ctx(&st, 1, NULL, cs, bs, NULL, 0, NULL, 0) == NULL);
  int64_t neg[1] = {-3};
  CHECK(b2nd_create_ctx(&st, 1, neg, cs, bs, NULL, 0, NULL, 0) == NULL);
  int32_t zero[1] = {0}, big[1] = {1 << 30}, big2[1] = {1 << 29};
  int64_t huge[1] = {(int64_t)1 << 40};
  /* blockshape 0 with a non-zero chunkshape. */
  CHECK(b2nd_create_ctx(&st, 1, shape, cs, zero, NULL, 0, NULL, 0) == NULL);
  /* A block of more than 2 GiB. */
  blosc2_cparams cp = cparams_for(8);
  st.cparams = &cp;
  CHECK(b2nd_create_ctx(&st, 1, huge, big, big2, NULL, 0, NULL, 0) == NULL);
  /* Overflowing shapes and oversized chunks: as in the reference, the
   * context is made and building an array from it fails. */
  int64_t over[3] = {(int64_t)1 << 40, (int64_t)1 << 40, (int64_t)1 << 40};
  int32_t ones[3] = {1, 1, 1};
  int64_t wide[2] = {1 << 20, 1 << 20};
  int32_t wcs[2] = {1 << 16, 1 << 16}, wbs[2] = {1, 1};
  b2nd_context_t *c1 = b2nd_create_ctx(&st, 3, over, ones, ones, NULL, 0, NULL, 0);
  b2nd_context_t *c2 = b2nd_create_ctx(&st, 2, wide, wcs, wbs, NULL, 0, NULL, 0);
  CHECK(c1 != NULL && c2 != NULL);
  b2nd_array_t *a = NULL;
  CHECK_EQ_INT(b2nd_empty(c1, &a), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(b2nd_empty(c2, &a), BLOSC2_ERROR_INVALID_PARAM);
  CHECK(a == NULL);
  b2nd_free_ctx(c1);
  b2nd_free_ctx(c2);
}

static void test_reshape(void) {
  for (int be = 0; be < 3; be++) {
    int64_t shape[2] = {6, 5};
    int32_t cs[2] = {3, 2}, bs[2] = {2, 2};
    int32_t model[12 * 9];
    int32_t buf[12 * 9];
    for (int i = 0; i < 30; i++) model[i] = i;
    b2nd_context_t *ctx = make_ctx((enum backend)be, 4, 2, shape, cs, bs, "<i4");
    b2nd_array_t *a = NULL;
    CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &a, model, 30 * 4), 0);
    /* append 2 rows */
    int32_t rows[10];
    for (int i = 0; i < 10; i++) rows[i] = 100 + i;
    CHECK_EQ_INT(b2nd_append(a, rows, sizeof rows, 0), 0);
    CHECK_EQ_INT(a->shape[0], 8);
    CHECK_EQ_INT(b2nd_to_cbuffer(a, buf, 40 * 4), 0);
    CHECK(memcmp(buf, model, 30 * 4) == 0 && memcmp(buf + 30, rows, sizeof rows) == 0);
    /* Away from the end, insertions and deletions go by whole chunks:
     * two columns at 2 (16 items); one at 1 is INVALID_PARAM. */
    int32_t cols[16];
    for (int i = 0; i < 16; i++) cols[i] = -1 - i;
    CHECK_EQ_INT(b2nd_insert(a, cols, 8 * 4, 1, 1), BLOSC2_ERROR_INVALID_PARAM);
    CHECK_EQ_INT(b2nd_insert(a, cols, sizeof cols, 1, 2), 0);
    CHECK_EQ_INT(a->shape[1], 7);
    CHECK_EQ_INT(b2nd_to_cbuffer(a, buf, 56 * 4), 0);
    CHECK_EQ_INT(buf[1], 1);
    CHECK_EQ_INT(buf[2], -1);
    CHECK_EQ_INT(buf[3], -2);
    CHECK_EQ_INT(buf[4], 2);
    CHECK_EQ_INT(buf[7 * 7 + 3], -16);
    /* delete them again */
    CHECK_EQ_INT(b2nd_delete(a, 1, 2, 2), 0);
    CHECK_EQ_INT(b2nd_to_cbuffer(a, buf, 40 * 4), 0);
    CHECK(memcmp(buf, model, 30 * 4) == 0 && memcmp(buf + 30, rows, sizeof rows) == 0);
    /* resize grows with zeros, then shrinks */
    int64_t ns[2] = {9, 7};
    CHECK_EQ_INT(b2nd_resize(a, ns, NULL), 0);
    CHECK_EQ_INT(a->shape[0], 9);
    CHECK_EQ_INT(a->nitems, 63);
    CHECK_EQ_INT(b2nd_to_cbuffer(a, buf, 63 * 4), 0);
    CHECK_EQ_INT(buf[7 * 7 + 4], 109);
    CHECK_EQ_INT(buf[8 * 7 + 6], 0);
    int64_t ns2[2] = {6, 5};
    CHECK_EQ_INT(b2nd_resize(a, ns2, NULL), 0);
    CHECK_EQ_INT(b2nd_to_cbuffer(a, buf, 30 * 4), 0);
    CHECK(memcmp(buf, model, 30 * 4) == 0);
    /* bad axis / delete range */
    CHECK(b2nd_append(a, rows, sizeof rows, 2) < 0);
    CHECK(b2nd_delete(a, 0, 5, 4) < 0);
    CHECK(b2nd_append(a, rows, sizeof rows, -1) < 0);
    /* The file is unchanged by failed calls. */
    if (be != MEM) {
      long l0, l1;
      uint8_t *b0 = slurp(backend_path[be], &l0);
      int64_t negs[2] = {-1, 5};
      CHECK(b2nd_resize(a, negs, NULL) < 0);
      uint8_t *b1 = slurp(backend_path[be], &l1);
      CHECK_EQ_INT(l1, l0);
      CHECK(b0 && b1 && memcmp(b0, b1, (size_t)l0) == 0);
      free(b1);
      CHECK(b2nd_delete(a, 1, 4, 3) < 0);
      b1 = slurp(backend_path[be], &l1);
      CHECK_EQ_INT(l1, l0);
      CHECK(b0 && b1 && memcmp(b0, b1, (size_t)l0) == 0);
      free(b0);
      free(b1);
    }
    /* Refresh across two handles of the same file. */
    if (be != MEM) {
      b2nd_array_t *b = NULL;
      CHECK_EQ_INT(b2nd_open(backend_path[be], &b), 0);
      int64_t ns3[2] = {12, 5};
      CHECK_EQ_INT(b2nd_resize(a, ns3, NULL), 0);
      /* 1: it re-read the frame (C-Blosc2 3.3's convention); then current. */
      CHECK_EQ_INT(b2nd_refresh(b), 1);
      CHECK_EQ_INT(b->shape[0], 12);
      CHECK_EQ_INT(b2nd_refresh(b), 0);
      b2nd_free(b);
    }
    b2nd_free(a);
    b2nd_free_ctx(ctx);
    if (backend_path[be]) blosc2_remove_urlpath(backend_path[be]);
  }
}

static void test_views_and_concat(void) {
  int64_t shape[3] = {1, 4, 1};
  int32_t cs[3] = {1, 2, 1}, bs[3] = {1, 1, 1};
  int16_t data[4] = {1, 2, 3, 4}, buf[16];
  b2nd_context_t *ctx = make_ctx(MEM, 2, 3, shape, cs, bs, "<i2");
  b2nd_array_t *a = NULL, *v = NULL;
  CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &a, data, sizeof data), 0);
  CHECK_EQ_INT(b2nd_squeeze(a, &v), 0);
  CHECK_EQ_INT(v->ndim, 1);
  CHECK_EQ_INT(v->shape[0], 4);
  CHECK_EQ_INT(b2nd_to_cbuffer(v, buf, 8), 0);
  CHECK(memcmp(buf, data, 8) == 0);
  b2nd_array_t *w = NULL;
  bool axis[3] = {true, false, false};
  CHECK_EQ_INT(b2nd_expand_dims(v, &w, axis, 2), 0);
  CHECK_EQ_INT(w->ndim, 2);
  CHECK_EQ_INT(w->shape[0], 1);
  CHECK_EQ_INT(w->shape[1], 4);
  b2nd_free(w);
  b2nd_free(v);
  bool idx[3] = {true, false, false};
  CHECK_EQ_INT(b2nd_squeeze_index(a, &v, idx), 0);
  CHECK_EQ_INT(v->ndim, 2);
  b2nd_free(v);
  bool bad[3] = {false, true, false};
  CHECK_EQ_INT(b2nd_squeeze_index(a, &v, bad), BLOSC2_ERROR_INVALID_INDEX);
  /* concatenate along 1, copy and in place */
  b2nd_array_t *c = NULL;
  CHECK_EQ_INT(b2nd_concatenate(ctx, a, a, 1, true, &c), 0);
  CHECK_EQ_INT(c->shape[1], 8);
  CHECK_EQ_INT(b2nd_to_cbuffer(c, buf, 16), 0);
  CHECK(memcmp(buf, data, 8) == 0 && memcmp(buf + 4, data, 8) == 0);
  CHECK_EQ_INT(b2nd_concatenate(ctx, c, a, 1, false, &w), 0);
  CHECK(w == c);
  CHECK_EQ_INT(c->shape[1], 12);
  CHECK_EQ_INT(b2nd_concatenate(ctx, c, a, 3, true, &w), BLOSC2_ERROR_INVALID_PARAM);
  b2nd_free(c);
  b2nd_free(a);
  b2nd_free_ctx(ctx);
}

/* Views (squeeze, expand_dims) share the chunks of their source, as in the
 * reference: writes through either are read through the other. Here the
 * source may also be freed first (the reference leaves the view dangling). */
static void test_views_share_chunks(void) {
  int64_t shape[3] = {1, 6, 1};
  int32_t cs[3] = {1, 3, 1}, bs[3] = {1, 2, 1};
  for (int be = 0; be < 3; be++) {
    int16_t data[6] = {1, 2, 3, 4, 5, 6}, buf[6];
    b2nd_context_t *ctx = make_ctx((enum backend)be, 2, 3, shape, cs, bs, "<i2");
    b2nd_array_t *a = NULL, *v = NULL, *w = NULL;
    CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &a, data, sizeof data), 0);
    CHECK_EQ_INT(b2nd_squeeze(a, &v), 0);
    CHECK_EQ_INT(v->ndim, 1);
    CHECK_EQ_INT(v->chunkshape[0], 3);
    CHECK_EQ_INT(a->ndim, 3); /* the source keeps its shape */
    CHECK_EQ_INT(a->shape[1], 6);
    /* Write through the source, read through the view. */
    int16_t two[2] = {40, 50};
    int64_t s3[3] = {0, 4, 0}, e3[3] = {1, 6, 1}, b3[3] = {1, 2, 1};
    CHECK_EQ_INT(b2nd_set_slice_cbuffer(two, b3, sizeof two, s3, e3, a), 0);
    CHECK_EQ_INT(b2nd_to_cbuffer(v, buf, sizeof buf), 0);
    CHECK_EQ_INT(buf[4], 40);
    CHECK_EQ_INT(buf[5], 50);
    /* Write through the view, read through the source. */
    int16_t one = -7;
    int64_t s1[1] = {1}, e1[1] = {2}, b1[1] = {1};
    CHECK_EQ_INT(b2nd_set_slice_cbuffer(&one, b1, sizeof one, s1, e1, v), 0);
    CHECK_EQ_INT(b2nd_to_cbuffer(a, buf, sizeof buf), 0);
    CHECK_EQ_INT(buf[1], -7);
    /* A view of a view; a view's metalayer describes the view. */
    bool axis[3] = {true, false, true};
    CHECK_EQ_INT(b2nd_expand_dims(v, &w, axis, 3), 0);
    CHECK_EQ_INT(w->ndim, 3);
    CHECK_EQ_INT(w->shape[1], 6);
    CHECK_EQ_INT(v->sc->nchunks, a->sc->nchunks);
    uint8_t *cf = NULL;
    int64_t cflen = 0;
    bool needs_free = false;
    CHECK_EQ_INT(b2nd_to_cframe(v, &cf, &cflen, &needs_free), 0);
    b2nd_array_t *back = NULL;
    CHECK_EQ_INT(b2nd_from_cframe(cf, cflen, true, &back), 0);
    if (back) {
      CHECK_EQ_INT(back->ndim, 1);
      CHECK_EQ_INT(b2nd_to_cbuffer(back, buf, sizeof buf), 0);
      CHECK_EQ_INT(buf[1], -7);
      b2nd_free(back);
    }
    if (needs_free) free(cf);
    /* A view never changes its source's chunk list. */
    int64_t grow[1] = {9};
    CHECK_EQ_INT(b2nd_resize(v, grow, NULL), BLOSC2_ERROR_FAILURE);
    CHECK_EQ_INT(v->shape[0], 6);
    /* The source goes first; the views keep working. */
    CHECK_EQ_INT(b2nd_free(a), 0);
    CHECK_EQ_INT(b2nd_to_cbuffer(w, buf, sizeof buf), 0);
    CHECK_EQ_INT(buf[0], 1);
    CHECK_EQ_INT(buf[1], -7);
    CHECK_EQ_INT(buf[5], 50);
    CHECK_EQ_INT(b2nd_free(v), 0);
    CHECK_EQ_INT(b2nd_free(w), 0);
    b2nd_free_ctx(ctx);
    if (backend_path[be]) blosc2_remove_urlpath(backend_path[be]);
  }
  /* As in the reference: squeezing a unit dimension chunked by 3 gives a
   * view (0) whose reads fail (BLOSC2_ERROR_FAILURE); an axis list keeping
   * fewer dimensions than the array has is accepted. */
  int64_t sh2[2] = {1, 12};
  int32_t cs2[2] = {3, 5}, bs2[2] = {2, 2};
  uint8_t bytes[12];
  pattern(bytes, 12, 3);
  b2nd_context_t *ctx = make_ctx(MEM, 1, 2, sh2, cs2, bs2, NULL);
  b2nd_array_t *a = NULL, *v = NULL;
  CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &a, bytes, 12), 0);
  CHECK_EQ_INT(b2nd_squeeze(a, &v), 0);
  CHECK_EQ_INT(b2nd_to_cbuffer(v, bytes, 12), BLOSC2_ERROR_FAILURE);
  b2nd_free(v);
  bool keep_one[1] = {true};
  CHECK_EQ_INT(b2nd_expand_dims(a, &v, keep_one, 1), 0);
  CHECK_EQ_INT(v->ndim, 1);
  b2nd_free(v);
  bool too_many[3] = {false, false, false};
  CHECK_EQ_INT(b2nd_expand_dims(a, &v, too_many, 3), BLOSC2_ERROR_INVALID_PARAM);
  b2nd_free(a);
  b2nd_free_ctx(ctx);
}

/* The public chunk_cache stays at the reference's idle values; the library
 * keeps the last decoded chunk internally and never serves it stale, even
 * when the chunk is replaced through array->sc directly. */
static void test_chunk_cache(void) {
  int64_t shape[1] = {8};
  int32_t cs[1] = {4}, bs[1] = {2};
  int32_t d1[8] = {0, 1, 2, 3, 4, 5, 6, 7}, d2[8] = {10, 11, 12, 13, 14, 15, 16, 17};
  b2nd_context_t *ctx = make_ctx(MEM, 4, 1, shape, cs, bs, "<i4");
  b2nd_array_t *a = NULL, *b = NULL;
  CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &a, d1, sizeof d1), 0);
  CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &b, d2, sizeof d2), 0);
  int32_t item = -1;
  int64_t one[1] = {1};
  for (int64_t i = 0; i < 4; i++) {
    int64_t st[1] = {i}, sp[1] = {i + 1};
    CHECK_EQ_INT(b2nd_get_slice_cbuffer(a, st, sp, &item, one, 4), 0);
    CHECK_EQ_INT(item, i);
  }
  CHECK_EQ_INT(a->chunk_cache.nchunk, -1);
  CHECK(a->chunk_cache.data == NULL);
  /* Write then read the same chunk. */
  int32_t v = 99;
  int64_t s2[1] = {2}, e2[1] = {3};
  CHECK_EQ_INT(b2nd_set_slice_cbuffer(&v, one, 4, s2, e2, a), 0);
  CHECK_EQ_INT(b2nd_get_slice_cbuffer(a, s2, e2, &item, one, 4), 0);
  CHECK_EQ_INT(item, 99);
  /* Replace chunk 0 behind the array's back. */
  uint8_t *chunk = NULL;
  bool needs_free = false;
  CHECK(blosc2_schunk_get_chunk(b->sc, 0, &chunk, &needs_free) > 0);
  CHECK(blosc2_schunk_update_chunk(a->sc, 0, chunk, true) >= 0);
  if (needs_free) free(chunk);
  CHECK_EQ_INT(b2nd_get_slice_cbuffer(a, s2, e2, &item, one, 4), 0);
  CHECK_EQ_INT(item, 12);
  b2nd_free(a);
  b2nd_free(b);
  b2nd_free_ctx(ctx);
}

/* What the reference 3.3.5 accepts: a blockshape larger than the chunkshape
 * (chunks padded to whole blocks) and an empty dtype string. */
static void test_reference_acceptances(void) {
  int64_t shape[1] = {10};
  int32_t cs[1] = {4}, bs[1] = {5};
  int32_t data[10], buf[10];
  for (int i = 0; i < 10; i++) data[i] = 3 * i + 1;
  for (int be = 0; be < 3; be++) {
    b2nd_context_t *ctx = make_ctx((enum backend)be, 4, 1, shape, cs, bs, "");
    CHECK(ctx != NULL);
    if (!ctx) continue;
    b2nd_array_t *a = NULL, *b = NULL;
    CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &a, data, sizeof data), 0);
    if (!a) continue;
    CHECK_EQ_INT(a->extchunkshape[0], 5);
    CHECK_EQ_INT(a->blocknitems, 5);
    CHECK_EQ_INT(a->sc->nchunks, 3);
    CHECK_EQ_INT(a->sc->chunksize, 20);
    CHECK(a->dtype != NULL && a->dtype[0] == '\0');
    CHECK_EQ_INT(b2nd_to_cbuffer(a, buf, sizeof buf), 0);
    CHECK(memcmp(buf, data, sizeof data) == 0);
    if (backend_path[be]) {
      CHECK_EQ_INT(b2nd_open(backend_path[be], &b), 0);
      if (b) {
        CHECK_EQ_INT(b->blockshape[0], 5);
        CHECK(b->dtype != NULL && b->dtype[0] == '\0');
        memset(buf, 0, sizeof buf);
        CHECK_EQ_INT(b2nd_to_cbuffer(b, buf, sizeof buf), 0);
        CHECK(memcmp(buf, data, sizeof data) == 0);
        b2nd_free(b);
      }
    }
    b2nd_free(a);
    b2nd_free_ctx(ctx);
    if (backend_path[be]) blosc2_remove_urlpath(backend_path[be]);
  }
}

/* The public fields hold what the reference 3.3.5 puts there (values read
 * from it for these geometries): unused dimensions are 1, strides in front
 * of an empty dimension are 0, chunk_array_strides is the reference's own
 * product. */
static void test_struct_fields_match_reference(void) {
  int64_t s1[3] = {7, 5, 3}, s2[3] = {3, 0, 4};
  int32_t c1[3] = {4, 4, 2}, b1[3] = {3, 3, 2}, c2[3] = {2, 3, 4}, b2[3] = {1, 2, 4};
  b2nd_context_t *ctx = make_ctx(MEM, 2, 3, s1, c1, b1, NULL);
  b2nd_array_t *a = NULL;
  CHECK_EQ_INT(b2nd_zeros(ctx, &a), 0);
  if (a) {
    CHECK_EQ_INT(a->extnitems, 256);
    CHECK_EQ_INT(a->extchunknitems, 72);
    CHECK_EQ_INT(a->item_extchunk_strides[0], 12);
    CHECK_EQ_INT(a->block_chunk_strides[0], 2);
    CHECK_EQ_INT(a->chunk_array_strides[0], 256);
    CHECK_EQ_INT(a->chunk_array_strides[1], 8);
    CHECK_EQ_INT(a->shape[3], 1);
    CHECK_EQ_INT(a->chunkshape[15], 1);
    CHECK_EQ_INT(a->extchunkshape[4], 1);
    b2nd_free(a);
  }
  b2nd_free_ctx(ctx);
  ctx = make_ctx(MEM, 2, 3, s2, c2, b2, NULL);
  a = NULL;
  CHECK_EQ_INT(b2nd_zeros(ctx, &a), 0);
  if (a) {
    CHECK_EQ_INT(a->item_array_strides[0], 0);
    CHECK_EQ_INT(a->block_chunk_strides[0], 0);
    CHECK_EQ_INT(a->item_array_strides[1], 4);
    CHECK_EQ_INT(a->chunk_array_strides[1], 16);
    CHECK_EQ_INT(a->extchunknitems, 32);
    b2nd_free(a);
  }
  b2nd_free_ctx(ctx);
}

static void test_orthogonal(void) {
  int64_t shape[2] = {6, 7};
  int32_t cs[2] = {4, 3}, bs[2] = {2, 3};
  int32_t data[42], buf[42];
  for (int i = 0; i < 42; i++) data[i] = i;
  for (int be = 0; be < 3; be++) {
    b2nd_context_t *ctx = make_ctx((enum backend)be, 4, 2, shape, cs, bs, "<i4");
    b2nd_array_t *a = NULL;
    CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &a, data, sizeof data), 0);
    int64_t s0[3] = {5, 0, 3}, s1[2] = {6, 1};
    int64_t *sel[2] = {s0, s1};
    int64_t ssz[2] = {3, 2}, bsh[2] = {3, 2};
    CHECK_EQ_INT(b2nd_get_orthogonal_selection(a, sel, ssz, buf, bsh, 6 * 4), 0);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++) CHECK_EQ_INT(buf[i * 2 + j], s0[i] * 7 + s1[j]);
    int32_t nv[6] = {-1, -2, -3, -4, -5, -6};
    CHECK_EQ_INT(b2nd_set_orthogonal_selection(a, sel, ssz, nv, bsh, sizeof nv), 0);
    CHECK_EQ_INT(b2nd_to_cbuffer(a, buf, sizeof buf), 0);
    CHECK_EQ_INT(buf[5 * 7 + 6], -1);
    CHECK_EQ_INT(buf[3 * 7 + 1], -6);
    CHECK_EQ_INT(buf[1], -4);
    CHECK_EQ_INT(buf[2], 2);
    int64_t oob[1] = {6};
    int64_t *bsel[2] = {oob, s1};
    int64_t bsz[2] = {1, 2}, bbs[2] = {1, 2};
    CHECK(b2nd_get_orthogonal_selection(a, bsel, bsz, buf, bbs, sizeof buf) < 0);
    b2nd_free(a);
    b2nd_free_ctx(ctx);
    if (backend_path[be]) blosc2_remove_urlpath(backend_path[be]);
  }
}

static void test_meta_and_schunk(void) {
  int64_t shape[3] = {3, 4, 5};
  int32_t cs[3] = {2, 2, 5}, bs[3] = {1, 2, 5};
  uint8_t *smeta = NULL;
  int len = b2nd_serialize_meta(3, shape, cs, bs, "<f4", 0, &smeta);
  CHECK(len > 0);
  int8_t ndim;
  int64_t sh[B2ND_MAX_DIM];
  int32_t c2[B2ND_MAX_DIM], b2[B2ND_MAX_DIM];
  char *dtype = NULL;
  int8_t fmt = 9;
  CHECK_EQ_INT(b2nd_deserialize_meta(smeta, len, &ndim, sh, c2, b2, &dtype, &fmt), len);
  CHECK_EQ_INT(ndim, 3);
  CHECK(sh[2] == 5 && c2[1] == 2 && b2[0] == 1);
  CHECK(dtype && strcmp(dtype, "<f4") == 0);
  CHECK_EQ_INT(fmt, 0);
  free(dtype);
  dtype = NULL;
  CHECK_EQ_INT(b2nd_deserialize_meta_inline(smeta, len, &ndim, sh, c2, b2, &dtype, &fmt), len);
  free(dtype);
  CHECK_EQ_INT(b2nd_deserialize_meta(smeta, len / 2, &ndim, sh, c2, b2, &dtype, &fmt),
               BLOSC2_ERROR_FAILURE);
  CHECK_EQ_INT(b2nd_deserialize_meta(smeta, 0, &ndim, sh, c2, b2, &dtype, &fmt),
               BLOSC2_ERROR_FAILURE);
  CHECK_EQ_INT(b2nd_deserialize_meta(NULL, len, &ndim, sh, c2, b2, &dtype, &fmt),
               BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(b2nd_serialize_meta(3, shape, cs, bs, "<f4", -1, &smeta), BLOSC2_ERROR_FAILURE);
  /* Invalid dtype entries: a wrong string marker, a length past the end. */
  uint8_t *bad = malloc((size_t)len);
  memcpy(bad, smeta, (size_t)len);
  bad[len - 3 - 5] = 0xd9;
  CHECK_EQ_INT(b2nd_deserialize_meta(bad, len, &ndim, sh, c2, b2, &dtype, &fmt),
               BLOSC2_ERROR_FAILURE);
  CHECK(dtype == NULL);
  memcpy(bad, smeta, (size_t)len);
  bad[len - 3 - 1] = 0x7f;
  CHECK_EQ_INT(b2nd_deserialize_meta(bad, len, &ndim, sh, c2, b2, &dtype, &fmt),
               BLOSC2_ERROR_FAILURE);
  CHECK(dtype == NULL);
  free(bad);
  /* Without dtype outputs only the geometry is read. */
  CHECK(b2nd_deserialize_meta(smeta, len, &ndim, sh, c2, b2, NULL, NULL) > 0);

  /* from_schunk: a super-chunk with that metalayer and the right chunks. */
  blosc2_cparams cp = cparams_for(4);
  cp.blocksize = 2 * 5 * 4;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.cparams = &cp;
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  b2nd_array_t *a = NULL;
  CHECK_EQ_INT(b2nd_from_schunk(sc, &a), BLOSC2_ERROR_METALAYER_NOT_FOUND);
  CHECK(blosc2_meta_add(sc, "b2nd", smeta, len) >= 0);
  float chunk[20];
  for (int k = 0; k < 4; k++) {
    for (int i = 0; i < 20; i++) chunk[i] = (float)(k * 100 + i);
    CHECK(blosc2_schunk_append_buffer(sc, chunk, sizeof chunk) == k + 1);
  }
  CHECK_EQ_INT(b2nd_from_schunk(sc, &a), 0);
  if (a) {
    CHECK(a->sc == sc);
    float out[60];
    CHECK_EQ_INT(b2nd_to_cbuffer(a, out, sizeof out), 0);
    CHECK(out[0] == 0.0f && out[5] == 5.0f && out[10] == 100.0f);
    /* The super-chunk stays usable with the blosc2_schunk_* API. */
    int32_t v = 7;
    int64_t start[3] = {0, 0, 0}, stop[3] = {1, 1, 1}, one[3] = {1, 1, 1};
    CHECK_EQ_INT(b2nd_set_slice_cbuffer(&v, one, 4, start, stop, a), 0);
    float dec[20];
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(a->sc, 0, dec, sizeof dec), (int)sizeof dec);
    int32_t first;
    memcpy(&first, dec, 4);
    CHECK_EQ_INT(first, 7);
    CHECK_EQ_INT(a->sc->nchunks, 4);
    uint8_t *content;
    int32_t clen;
    CHECK(blosc2_meta_get(a->sc, "b2nd", &content, &clen) >= 0);
    free(content);
    CHECK_EQ_INT(b2nd_print_meta(a), 0);
    b2nd_free(a); /* frees sc too */
  } else {
    blosc2_schunk_free(sc);
  }
  free(smeta);

  /* Corrupted metalayer: from_schunk fails and the caller keeps the super-chunk. */
  sc = blosc2_schunk_new(&st);
  uint8_t junk[5] = {0x97, 0x00, 0x03, 0x93, 0xd3};
  CHECK(blosc2_meta_add(sc, "b2nd", junk, sizeof junk) >= 0);
  CHECK(b2nd_from_schunk(sc, &a) < 0);
  CHECK_EQ_INT(sc->nmetalayers, 1);
  blosc2_schunk_free(sc);
  /* Not a frame. */
  uint8_t garbage[64] = {1, 2, 3};
  CHECK_EQ_INT(b2nd_from_cframe(garbage, sizeof garbage, true, &a), BLOSC2_ERROR_FAILURE);
  CHECK(b2nd_open("t_b2nd_api_missing.b2nd", &a) < 0);

  /* copy_buffer2 / copy_buffer */
  uint8_t src[4 * 5 * 2], dst[3 * 3 * 2];
  for (int i = 0; i < 40; i++) src[i] = (uint8_t)i;
  memset(dst, 0, sizeof dst);
  int64_t sps[2] = {4, 5}, ss[2] = {1, 2}, se[2] = {3, 5}, dps[2] = {3, 3}, ds[2] = {1, 0};
  CHECK_EQ_INT(b2nd_copy_buffer2(2, 2, src, sps, ss, se, dst, dps, ds), 0);
  CHECK_EQ_INT(dst[(1 * 3 + 0) * 2], (1 * 5 + 2) * 2);
  CHECK_EQ_INT(dst[(2 * 3 + 2) * 2 + 1], (2 * 5 + 4) * 2 + 1);
  CHECK_EQ_INT(dst[0], 0);
  uint8_t dst1[3 * 3 * 2];
  memset(dst1, 0, sizeof dst1);
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
  CHECK_EQ_INT(b2nd_copy_buffer(2, 2, src, sps, ss, se, dst1, dps, ds), 0);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
  CHECK(memcmp(dst, dst1, sizeof dst) == 0);
}

int main(void) {
  blosc2_init();
  test_roundtrips();
  test_constructors();
  test_bad_contexts();
  test_reshape();
  test_views_and_concat();
  test_views_share_chunks();
  test_chunk_cache();
  test_reference_acceptances();
  test_struct_fields_match_reference();
  test_orthogonal();
  test_meta_and_schunk();
  blosc2_destroy();
  return test_finish("test_b2nd_api");
}
