/* The Caterva 0.5 API over b2nd: every call, itemsizes 1/2/4/8, ndim 1..8, in-memory,
 * contiguous-file and sparse-directory storage, and Caterva's error codes on bad input. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* stat() */
#endif
#include <caterva.h>
#include <b2nd.h> /* both headers in one translation unit */
#include <string.h>
#include <sys/stat.h>

#include "test_common.h"

enum { MEM, CONTIG, SPARSE };
static const char *backend_path[] = {NULL, "cat_contig.b2frame", "cat_sparse.b2frame"};

/* Item i of the reference pattern, `isz` bytes, little endian counter. */
static void pattern(uint8_t *buf, int64_t nitems, int isz) {
  for (int64_t i = 0; i < nitems; i++)
    for (int b = 0; b < isz; b++) buf[i * isz + b] = (uint8_t)((i >> (8 * b)) + 3 * b);
}

static int64_t prod(const int64_t *v, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= v[i];
  return p;
}

/* Naive region copy of [start, stop) of a C-order array of `shape` into a dense buffer. */
static void naive_slice(const uint8_t *src, const int64_t *shape, int nd, int isz, const int64_t *start,
                        const int64_t *stop, uint8_t *dst) {
  int64_t idx[CATERVA_MAX_DIM];
  int64_t n = 1;
  for (int i = 0; i < nd; i++) {
    idx[i] = start[i];
    n *= stop[i] - start[i];
  }
  for (int64_t k = 0; k < n; k++) {
    int64_t off = 0;
    for (int i = 0; i < nd; i++) off = off * shape[i] + idx[i];
    memcpy(dst + k * isz, src + off * isz, (size_t)isz);
    for (int i = nd - 1; i >= 0; i--) {
      if (++idx[i] < stop[i]) break;
      idx[i] = start[i];
    }
  }
}

static void fill_storage(caterva_storage_t *st, int nd, int backend, const int32_t *cs, const int32_t *bs) {
  memset(st, 0, sizeof(*st));
  for (int i = 0; i < nd; i++) {
    st->chunkshape[i] = cs[i];
    st->blockshape[i] = bs[i];
  }
  st->contiguous = backend == CONTIG;
  st->urlpath = (char *)backend_path[backend];
}

/* One geometry through creation, reads, slices, metalayers, serialization and copies. */
static void run_case(caterva_ctx_t *ctx, int isz, int nd, int backend) {
  int64_t shape[CATERVA_MAX_DIM];
  int32_t cs[CATERVA_MAX_DIM], bs[CATERVA_MAX_DIM];
  for (int i = 0; i < nd; i++) {
    shape[i] = nd <= 3 ? 9 + i : (i % 2 ? 3 : 2);
    cs[i] = (int32_t)(shape[i] > 4 ? 4 : 2);
    bs[i] = cs[i] > 2 ? 2 : 1;
  }
  if (backend_path[backend]) caterva_remove(ctx, (char *)backend_path[backend]);
  caterva_params_t params;
  memset(&params, 0, sizeof(params));
  params.itemsize = (uint8_t)isz;
  params.ndim = (int8_t)nd;
  for (int i = 0; i < nd; i++) params.shape[i] = shape[i];
  caterva_storage_t st;
  fill_storage(&st, nd, backend, cs, bs);
  uint8_t mdata[3] = {1, 2, 3};
  st.nmetalayers = 1;
  st.metalayers[0].name = (char *)"user";
  st.metalayers[0].sdata = mdata;
  st.metalayers[0].size = 3;

  int64_t nitems = prod(shape, nd);
  int64_t nbytes = nitems * isz;
  uint8_t *src = malloc((size_t)nbytes), *out = malloc((size_t)nbytes);
  pattern(src, nitems, isz);

  caterva_array_t *arr = NULL;
  CHECK_EQ_INT(caterva_from_buffer(ctx, src, nbytes, &params, &st, &arr), CATERVA_SUCCEED);
  if (arr == NULL) goto done;
  CHECK_EQ_INT(arr->ndim, nd);
  CHECK_EQ_INT(arr->itemsize, isz);
  CHECK_EQ_INT(arr->nitems, nitems);
  CHECK_EQ_INT(arr->shape[nd - 1], shape[nd - 1]);
  CHECK_EQ_INT(arr->chunkshape[0], cs[0]);
  CHECK(arr->cfg != NULL && arr->cfg->complevel == ctx->cfg->complevel);
  memset(out, 0xee, (size_t)nbytes);
  CHECK_EQ_INT(caterva_to_buffer(ctx, arr, out, nbytes), CATERVA_SUCCEED);
  CHECK(memcmp(out, src, (size_t)nbytes) == 0);

  /* A slice into a buffer and back. */
  int64_t start[CATERVA_MAX_DIM], stop[CATERVA_MAX_DIM], bshape[CATERVA_MAX_DIM];
  for (int i = 0; i < nd; i++) {
    start[i] = shape[i] > 2 ? 1 : 0;
    stop[i] = shape[i];
    bshape[i] = stop[i] - start[i];
  }
  int64_t snitems = prod(bshape, nd);
  uint8_t *sbuf = malloc((size_t)(snitems * isz)), *sref = malloc((size_t)(snitems * isz));
  naive_slice(src, shape, nd, isz, start, stop, sref);
  CHECK_EQ_INT(caterva_get_slice_buffer(ctx, arr, start, stop, sbuf, bshape, snitems * isz), CATERVA_SUCCEED);
  CHECK(memcmp(sbuf, sref, (size_t)(snitems * isz)) == 0);
  memset(sbuf, 0x5a, (size_t)(snitems * isz));
  CHECK_EQ_INT(caterva_set_slice_buffer(ctx, sbuf, bshape, snitems * isz, start, stop, arr), CATERVA_SUCCEED);
  CHECK_EQ_INT(caterva_get_slice_buffer(ctx, arr, start, stop, sref, bshape, snitems * isz), CATERVA_SUCCEED);
  CHECK(memcmp(sbuf, sref, (size_t)(snitems * isz)) == 0);
  /* Restore the source contents. */
  naive_slice(src, shape, nd, isz, start, stop, sref);
  CHECK_EQ_INT(caterva_set_slice_buffer(ctx, sref, bshape, snitems * isz, start, stop, arr), CATERVA_SUCCEED);

  /* A slice as a new in-memory array. */
  caterva_storage_t mst;
  fill_storage(&mst, nd, MEM, cs, bs);
  caterva_array_t *sl = NULL;
  CHECK_EQ_INT(caterva_get_slice(ctx, arr, start, stop, &mst, &sl), CATERVA_SUCCEED);
  if (sl) {
    CHECK_EQ_INT(sl->nitems, snitems);
    CHECK_EQ_INT(caterva_to_buffer(ctx, sl, sbuf, snitems * isz), CATERVA_SUCCEED);
    CHECK(memcmp(sbuf, sref, (size_t)(snitems * isz)) == 0);
    bool ex = false;
    CHECK_EQ_INT(caterva_meta_exists(ctx, sl, "caterva", &ex), CATERVA_SUCCEED);
    CHECK(ex);
    caterva_free(ctx, &sl);
  }
  free(sbuf);
  free(sref);

  /* Both metalayers, and the Caterva one decodes to the geometry. */
  bool exists = false;
  CHECK_EQ_INT(caterva_meta_exists(ctx, arr, "b2nd", &exists), CATERVA_SUCCEED);
  CHECK(exists);
  CHECK_EQ_INT(caterva_meta_exists(ctx, arr, "nothere", &exists), CATERVA_SUCCEED);
  CHECK(!exists);
  caterva_metalayer_t meta;
  CHECK_EQ_INT(caterva_meta_get(ctx, arr, "caterva", &meta), CATERVA_SUCCEED);
  int8_t dnd = 0;
  int64_t dshape[CATERVA_MAX_DIM];
  int32_t dcs[CATERVA_MAX_DIM], dbs[CATERVA_MAX_DIM];
  CHECK_EQ_INT(caterva_deserialize_meta(meta.sdata, meta.size, &dnd, dshape, dcs, dbs), meta.size);
  CHECK_EQ_INT(dnd, nd);
  for (int i = 0; i < nd; i++) {
    CHECK_EQ_INT(dshape[i], shape[i]);
    CHECK_EQ_INT(dcs[i], cs[i]);
    CHECK_EQ_INT(dbs[i], bs[i]);
  }
  uint8_t *smeta = NULL;
  int32_t slen = caterva_serialize_meta((int8_t)nd, shape, cs, bs, &smeta);
  CHECK_EQ_INT(slen, meta.size);
  CHECK(smeta != NULL && memcmp(smeta, meta.sdata, (size_t)slen) == 0);
  CHECK_EQ_INT(meta.sdata[0], 0x95);
  free(smeta);
  free(meta.sdata);
  free(meta.name);
  CHECK_EQ_INT(caterva_meta_get(ctx, arr, "user", &meta), CATERVA_SUCCEED);
  CHECK_EQ_INT(meta.size, 3);
  CHECK(memcmp(meta.sdata, mdata, 3) == 0);
  CHECK(strcmp(meta.name, "user") == 0);
  free(meta.sdata);
  free(meta.name);
  uint8_t m2[3] = {7, 8, 9};
  caterva_metalayer_t upd = {(char *)"user", m2, 3};
  CHECK_EQ_INT(caterva_meta_update(ctx, arr, &upd), CATERVA_SUCCEED);
  CHECK_EQ_INT(caterva_meta_get(ctx, arr, "user", &meta), CATERVA_SUCCEED);
  CHECK(memcmp(meta.sdata, m2, 3) == 0);
  free(meta.sdata);
  free(meta.name);

  /* Variable-length metalayers. */
  uint8_t vdata[5] = {9, 8, 7, 6, 5};
  caterva_metalayer_t vl = {(char *)"vlm", vdata, 5};
  CHECK_EQ_INT(caterva_vlmeta_add(ctx, arr, &vl), CATERVA_SUCCEED);
  CHECK_EQ_INT(caterva_vlmeta_exists(ctx, arr, "vlm", &exists), CATERVA_SUCCEED);
  CHECK(exists);
  vdata[0] = 42;
  CHECK_EQ_INT(caterva_vlmeta_update(ctx, arr, &vl), CATERVA_SUCCEED);
  caterva_metalayer_t got;
  CHECK_EQ_INT(caterva_vlmeta_get(ctx, arr, "vlm", &got), CATERVA_SUCCEED);
  CHECK_EQ_INT(got.size, 5);
  CHECK(memcmp(got.sdata, vdata, 5) == 0);
  free(got.sdata);
  free(got.name);
  CHECK_EQ_INT(caterva_vlmeta_get(ctx, arr, "none", &got), CATERVA_ERR_BLOSC_FAILED);

  /* Contiguous frame round trip. */
  uint8_t *cframe = NULL;
  int64_t clen = 0;
  bool needs_free = false;
  CHECK_EQ_INT(caterva_to_cframe(ctx, arr, &cframe, &clen, &needs_free), CATERVA_SUCCEED);
  CHECK(clen > 0 && needs_free);
  caterva_array_t *fc = NULL;
  CHECK_EQ_INT(caterva_from_cframe(ctx, cframe, clen, true, &fc), CATERVA_SUCCEED);
  if (fc) {
    memset(out, 0, (size_t)nbytes);
    CHECK_EQ_INT(caterva_to_buffer(ctx, fc, out, nbytes), CATERVA_SUCCEED);
    CHECK(memcmp(out, src, (size_t)nbytes) == 0);
    caterva_free(ctx, &fc);
  }
  free(cframe);

  /* A copy with other partitions, in memory. */
  int32_t cs2[CATERVA_MAX_DIM], bs2[CATERVA_MAX_DIM];
  for (int i = 0; i < nd; i++) {
    cs2[i] = (int32_t)shape[i];
    bs2[i] = 1;
  }
  fill_storage(&mst, nd, MEM, cs2, bs2);
  caterva_array_t *cp = NULL;
  CHECK_EQ_INT(caterva_copy(ctx, arr, &mst, &cp), CATERVA_SUCCEED);
  if (cp) {
    CHECK_EQ_INT(cp->chunkshape[0], cs2[0]);
    memset(out, 0, (size_t)nbytes);
    CHECK_EQ_INT(caterva_to_buffer(ctx, cp, out, nbytes), CATERVA_SUCCEED);
    CHECK(memcmp(out, src, (size_t)nbytes) == 0);
    CHECK_EQ_INT(caterva_meta_get(ctx, cp, "caterva", &meta), CATERVA_SUCCEED);
    CHECK_EQ_INT(caterva_deserialize_meta(meta.sdata, meta.size, &dnd, dshape, dcs, dbs), meta.size);
    CHECK_EQ_INT(dcs[0], cs2[0]);
    free(meta.sdata);
    free(meta.name);
    caterva_free(ctx, &cp);
  }

  /* Persistent arrays reopen with the same contents. */
  if (backend != MEM) {
    caterva_free(ctx, &arr);
    CHECK_EQ_INT(caterva_open(ctx, backend_path[backend], &arr), CATERVA_SUCCEED);
    if (arr) {
      memset(out, 0, (size_t)nbytes);
      CHECK_EQ_INT(caterva_to_buffer(ctx, arr, out, nbytes), CATERVA_SUCCEED);
      CHECK(memcmp(out, src, (size_t)nbytes) == 0);
    }
  } else {
    caterva_remove(ctx, (char *)"cat_saved.b2frame");
    CHECK_EQ_INT(caterva_save(ctx, arr, (char *)"cat_saved.b2frame"), CATERVA_SUCCEED);
    caterva_array_t *sv = NULL;
    CHECK_EQ_INT(caterva_open(ctx, "cat_saved.b2frame", &sv), CATERVA_SUCCEED);
    if (sv) {
      memset(out, 0, (size_t)nbytes);
      CHECK_EQ_INT(caterva_to_buffer(ctx, sv, out, nbytes), CATERVA_SUCCEED);
      CHECK(memcmp(out, src, (size_t)nbytes) == 0);
      caterva_free(ctx, &sv);
    }
    CHECK_EQ_INT(caterva_remove(ctx, (char *)"cat_saved.b2frame"), CATERVA_SUCCEED);
  }

  /* Orthogonal selection: first and last index of every dimension. */
  if (arr) {
    int64_t sel_store[CATERVA_MAX_DIM][2], *sel[CATERVA_MAX_DIM], sel_size[CATERVA_MAX_DIM], oshape[CATERVA_MAX_DIM];
    for (int i = 0; i < nd; i++) {
      sel_store[i][0] = shape[i] - 1;
      sel_store[i][1] = 0;
      sel[i] = sel_store[i];
      sel_size[i] = 2;
      oshape[i] = 2;
    }
    int64_t on = prod(oshape, nd);
    uint8_t *obuf = malloc((size_t)(on * isz));
    CHECK_EQ_INT(caterva_get_orthogonal_selection(ctx, arr, sel, sel_size, obuf, oshape, on * isz), CATERVA_SUCCEED);
    /* The first item of the output is the last item of the array. */
    CHECK(memcmp(obuf, src + (nitems - 1) * isz, (size_t)isz) == 0);
    /* The last item of the output is the first item of the array. */
    CHECK(memcmp(obuf + (on - 1) * isz, src, (size_t)isz) == 0);
    CHECK_EQ_INT(caterva_set_orthogonal_selection(ctx, arr, sel, sel_size, obuf, oshape, on * isz), CATERVA_SUCCEED);
    memset(out, 0, (size_t)nbytes);
    CHECK_EQ_INT(caterva_to_buffer(ctx, arr, out, nbytes), CATERVA_SUCCEED);
    CHECK(memcmp(out, src, (size_t)nbytes) == 0);
    free(obuf);
  }

done:
  if (arr) CHECK_EQ_INT(caterva_free(ctx, &arr), CATERVA_SUCCEED);
  CHECK(arr == NULL);
  if (backend_path[backend]) CHECK_EQ_INT(caterva_remove(ctx, (char *)backend_path[backend]), CATERVA_SUCCEED);
  free(src);
  free(out);
}

/* zeros / full / uninit / empty, and shape changes that keep both metalayers in step. */
static void run_reshape(caterva_ctx_t *ctx, int backend) {
  caterva_params_t params;
  memset(&params, 0, sizeof(params));
  params.itemsize = 4;
  params.ndim = 2;
  params.shape[0] = 6;
  params.shape[1] = 5;
  int32_t cs[2] = {3, 5}, bs[2] = {2, 2};
  caterva_storage_t st;
  fill_storage(&st, 2, backend, cs, bs);
  if (backend_path[backend]) caterva_remove(ctx, (char *)backend_path[backend]);

  caterva_array_t *a = NULL;
  int32_t fill = 0x01020304;
  CHECK_EQ_INT(caterva_full(ctx, &params, &st, &fill, &a), CATERVA_SUCCEED);
  if (!a) return;
  int32_t buf[6 * 5];
  CHECK_EQ_INT(caterva_to_buffer(ctx, a, buf, sizeof(buf)), CATERVA_SUCCEED);
  for (int i = 0; i < 30; i++) CHECK_EQ_INT(buf[i], fill);

  int32_t row[5] = {1, 2, 3, 4, 5};
  int32_t rows3[15];
  for (int i = 0; i < 15; i++) rows3[i] = row[i % 5];
  CHECK_EQ_INT(caterva_append(ctx, a, row, sizeof(row), 0), CATERVA_SUCCEED);
  CHECK_EQ_INT(a->shape[0], 7);
  /* Away from the end, insertions and deletions come in whole chunks. */
  CHECK_EQ_INT(caterva_insert(ctx, a, rows3, sizeof(rows3), 0, 0), CATERVA_SUCCEED);
  CHECK_EQ_INT(a->shape[0], 10);
  CHECK_EQ_INT(caterva_delete(ctx, a, 0, 3, 6), CATERVA_SUCCEED);
  CHECK_EQ_INT(a->shape[0], 4);
  CHECK_EQ_INT(a->nchunks, 2);
  int32_t four[4 * 5];
  CHECK_EQ_INT(caterva_to_buffer(ctx, a, four, sizeof(four)), CATERVA_SUCCEED);
  for (int i = 0; i < 20; i++) CHECK_EQ_INT(four[i], row[i % 5]);
  int64_t ns[2] = {4, 7};
  CHECK_EQ_INT(caterva_resize(ctx, a, ns, NULL), CATERVA_SUCCEED);
  CHECK_EQ_INT(a->shape[1], 7);
  CHECK_EQ_INT(a->nitems, 28);
  caterva_metalayer_t meta;
  int8_t nd;
  int64_t shape[8];
  int32_t dcs[8], dbs[8];
  CHECK_EQ_INT(caterva_meta_get(ctx, a, "caterva", &meta), CATERVA_SUCCEED);
  CHECK_EQ_INT(caterva_deserialize_meta(meta.sdata, meta.size, &nd, shape, dcs, dbs), meta.size);
  CHECK_EQ_INT(shape[0], 4);
  CHECK_EQ_INT(shape[1], 7);
  free(meta.sdata);
  free(meta.name);
  CHECK_EQ_INT(caterva_meta_get(ctx, a, "b2nd", &meta), CATERVA_SUCCEED);
  CHECK_EQ_INT(caterva_deserialize_meta(meta.sdata, meta.size, &nd, shape, dcs, dbs), meta.size);
  CHECK_EQ_INT(shape[1], 7);
  free(meta.sdata);
  free(meta.name);
  CHECK_EQ_INT(caterva_print_meta(a), CATERVA_SUCCEED);
  /* Bad shape changes leave the array as it was. */
  CHECK_EQ_INT(caterva_delete(ctx, a, 0, 3, 5), CATERVA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(caterva_delete(ctx, a, 5, 0, 1), CATERVA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(caterva_append(ctx, a, row, 3, 0), CATERVA_ERR_INVALID_ARGUMENT);
  CHECK_EQ_INT(a->shape[0], 4);
  CHECK_EQ_INT(a->shape[1], 7);
  caterva_free(ctx, &a);

  if (backend != MEM) {
    CHECK_EQ_INT(caterva_open(ctx, backend_path[backend], &a), CATERVA_SUCCEED);
    if (a) {
      CHECK_EQ_INT(a->shape[0], 4);
      CHECK_EQ_INT(a->shape[1], 7);
      caterva_free(ctx, &a);
    }
    caterva_remove(ctx, (char *)backend_path[backend]);
  }

  CHECK_EQ_INT(caterva_zeros(ctx, &params, &st, &a), CATERVA_SUCCEED);
  if (a) {
    CHECK_EQ_INT(caterva_to_buffer(ctx, a, buf, sizeof(buf)), CATERVA_SUCCEED);
    for (int i = 0; i < 30; i++) CHECK_EQ_INT(buf[i], 0);
    caterva_free(ctx, &a);
  }
  if (backend_path[backend]) caterva_remove(ctx, (char *)backend_path[backend]);
  CHECK_EQ_INT(caterva_empty(ctx, &params, &st, &a), CATERVA_SUCCEED);
  if (a) caterva_free(ctx, &a);
  if (backend_path[backend]) caterva_remove(ctx, (char *)backend_path[backend]);
  CHECK_EQ_INT(caterva_uninit(ctx, &params, &st, &a), CATERVA_SUCCEED);
  if (a) {
    CHECK_EQ_INT(a->nitems, 30);
    caterva_free(ctx, &a);
  }
  if (backend_path[backend]) caterva_remove(ctx, (char *)backend_path[backend]);
}

/* Caterva's error codes, no crash, nothing written on failure. */
static void run_errors(caterva_ctx_t *ctx) {
  caterva_params_t params;
  memset(&params, 0, sizeof(params));
  params.itemsize = 2;
  params.ndim = 1;
  params.shape[0] = 10;
  int32_t cs[1] = {4}, bs[1] = {2};
  caterva_storage_t st;
  fill_storage(&st, 1, MEM, cs, bs);
  caterva_array_t *a = NULL;
  uint16_t data[10] = {0};
  CHECK_EQ_INT(caterva_from_buffer(ctx, data, 19, &params, &st, &a), CATERVA_ERR_INVALID_ARGUMENT);
  CHECK(a == NULL);
  CHECK_EQ_INT(caterva_from_buffer(NULL, data, 20, &params, &st, &a), CATERVA_ERR_NULL_POINTER);
  CHECK_EQ_INT(caterva_from_buffer(ctx, NULL, 20, &params, &st, &a), CATERVA_ERR_NULL_POINTER);
  CHECK_EQ_INT(caterva_empty(ctx, NULL, &st, &a), CATERVA_ERR_NULL_POINTER);
  CHECK_EQ_INT(caterva_empty(ctx, &params, &st, NULL), CATERVA_ERR_NULL_POINTER);
  params.ndim = 9;
  CHECK_EQ_INT(caterva_empty(ctx, &params, &st, &a), CATERVA_ERR_INVALID_ARGUMENT);
  params.ndim = 1;
  st.blockshape[0] = 5; /* larger than the chunkshape */
  CHECK_EQ_INT(caterva_empty(ctx, &params, &st, &a), CATERVA_ERR_INVALID_ARGUMENT);
  st.blockshape[0] = 2;
  st.nmetalayers = 99;
  CHECK_EQ_INT(caterva_empty(ctx, &params, &st, &a), CATERVA_ERR_INVALID_ARGUMENT);
  st.nmetalayers = 0;
  params.itemsize = 0;
  CHECK_EQ_INT(caterva_empty(ctx, &params, &st, &a), CATERVA_ERR_INVALID_ARGUMENT);
  params.itemsize = 2;
  CHECK(a == NULL);

  /* A file that is not there, and garbage frames. */
  CHECK_EQ_INT(caterva_open(ctx, "no_such_caterva_file.b2frame", &a), CATERVA_ERR_BLOSC_FAILED);
  CHECK_EQ_INT(caterva_open(ctx, NULL, &a), CATERVA_ERR_NULL_POINTER);
  uint8_t junk[64];
  memset(junk, 0xab, sizeof(junk));
  CHECK_EQ_INT(caterva_from_cframe(ctx, junk, sizeof(junk), true, &a), CATERVA_ERR_BLOSC_FAILED);
  CHECK(a == NULL);
  CHECK_EQ_INT(caterva_deserialize_meta(junk, sizeof(junk), NULL, NULL, NULL, NULL) < 0, 1);
  int8_t nd;
  int64_t sh[8];
  int32_t c8[8], b8[8];
  uint8_t bad[4] = {0x95, 0, 9, 0x99};
  CHECK(caterva_deserialize_meta(bad, sizeof(bad), &nd, sh, c8, b8) < 0);
  CHECK(caterva_serialize_meta(9, sh, c8, b8, NULL) < 0);

  CHECK_EQ_INT(caterva_from_buffer(ctx, data, 20, &params, &st, &a), CATERVA_SUCCEED);
  if (a) {
    int64_t start[1] = {3}, stop[1] = {11}, bshape[1] = {8};
    uint16_t out[8];
    CHECK_EQ_INT(caterva_get_slice_buffer(ctx, a, start, stop, out, bshape, sizeof(out)), CATERVA_ERR_INVALID_ARGUMENT);
    stop[0] = 9;
    bshape[0] = 6;
    CHECK_EQ_INT(caterva_get_slice_buffer(ctx, a, start, stop, out, bshape, 4), CATERVA_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(caterva_get_slice_buffer(ctx, a, NULL, stop, out, bshape, sizeof(out)), CATERVA_ERR_NULL_POINTER);
    CHECK_EQ_INT(caterva_to_buffer(ctx, a, out, 4), CATERVA_ERR_INVALID_ARGUMENT);
    caterva_metalayer_t m;
    CHECK_EQ_INT(caterva_meta_get(ctx, a, "missing", &m), CATERVA_ERR_BLOSC_FAILED);
    uint8_t two[2] = {1, 2};
    caterva_metalayer_t neg = {(char *)"x", two, -1};
    CHECK_EQ_INT(caterva_vlmeta_add(ctx, a, &neg), CATERVA_ERR_INVALID_ARGUMENT);
    caterva_metalayer_t cat = {(char *)"caterva", two, 2};
    CHECK_EQ_INT(caterva_meta_update(ctx, a, &cat), CATERVA_ERR_INVALID_ARGUMENT);
    bool idx[1] = {true};
    CHECK_EQ_INT(caterva_squeeze_index(ctx, a, idx) != CATERVA_SUCCEED, 1);
    int64_t *sel[1] = {start};
    int64_t ssz[1] = {1}, oshape[1] = {1};
    start[0] = 10; /* out of range */
    CHECK(caterva_get_orthogonal_selection(ctx, a, sel, ssz, out, oshape, 2) != CATERVA_SUCCEED);
    uint16_t back[10];
    CHECK_EQ_INT(caterva_to_buffer(ctx, a, back, sizeof(back)), CATERVA_SUCCEED);
    CHECK(memcmp(back, data, sizeof(back)) == 0);
    caterva_free(ctx, &a);
  }
  CHECK_EQ_INT(caterva_free(ctx, NULL), CATERVA_ERR_NULL_POINTER);
  CHECK_EQ_INT(caterva_print_meta(NULL), CATERVA_ERR_NULL_POINTER);
  CHECK_EQ_INT(caterva_ctx_new(NULL, NULL), CATERVA_ERR_NULL_POINTER);
  CHECK(strcmp(caterva_error_string(CATERVA_ERR_INVALID_ARGUMENT), "Invalid argument") == 0);
}

/* The super-chunk constructor: a Caterva file's super-chunk becomes an array. */
static void run_from_schunk(caterva_ctx_t *ctx) {
  caterva_params_t params;
  memset(&params, 0, sizeof(params));
  params.itemsize = 8;
  params.ndim = 2;
  params.shape[0] = 5;
  params.shape[1] = 3;
  int32_t cs[2] = {2, 3}, bs[2] = {1, 3};
  caterva_storage_t st;
  fill_storage(&st, 2, CONTIG, cs, bs);
  caterva_remove(ctx, (char *)backend_path[CONTIG]);
  int64_t data[15];
  for (int i = 0; i < 15; i++) data[i] = i * 1000003LL;
  caterva_array_t *a = NULL;
  CHECK_EQ_INT(caterva_from_buffer(ctx, data, sizeof(data), &params, &st, &a), CATERVA_SUCCEED);
  caterva_free(ctx, &a);
  blosc2_schunk *sc = blosc2_schunk_open(backend_path[CONTIG]);
  CHECK(sc != NULL);
  /* Both layers are plain super-chunk metalayers. */
  CHECK(blosc2_meta_exists(sc, "caterva") >= 0);
  CHECK(blosc2_meta_exists(sc, "b2nd") >= 0);
  CHECK_EQ_INT(caterva_from_schunk(ctx, sc, &a), CATERVA_SUCCEED);
  if (a) {
    /* Caterva takes the super-chunk over: the caller's pointer is
     * array->sc and stays usable until caterva_free. */
    CHECK(a->sc == sc);
    CHECK_EQ_INT(sc->nchunks, 3);
    CHECK_EQ_INT(sc->typesize, 8);
    uint8_t tag[2] = {4, 2};
    CHECK(blosc2_vlmeta_add(sc, "via_caller", tag, 2, NULL) >= 0);
    bool ex = false;
    CHECK_EQ_INT(caterva_vlmeta_exists(ctx, a, "via_caller", &ex), CATERVA_SUCCEED);
    CHECK(ex);
    int64_t chunk0[6];
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 0, chunk0, sizeof(chunk0)), (int)sizeof(chunk0));
    CHECK(memcmp(chunk0, data, sizeof(chunk0)) == 0);
    int64_t back[15];
    CHECK_EQ_INT(caterva_to_buffer(ctx, a, back, sizeof(back)), CATERVA_SUCCEED);
    CHECK(memcmp(back, data, sizeof(back)) == 0);
    /* The array still writes to the file it came from. */
    int64_t start[2] = {4, 0}, stop[2] = {5, 3}, bshape[2] = {1, 3}, row[3] = {-1, -2, -3};
    CHECK_EQ_INT(caterva_set_slice_buffer(ctx, row, bshape, sizeof(row), start, stop, a), CATERVA_SUCCEED);
    caterva_free(ctx, &a);
    CHECK_EQ_INT(caterva_open(ctx, backend_path[CONTIG], &a), CATERVA_SUCCEED);
    if (a) {
      bool kept = false;
      CHECK_EQ_INT(caterva_vlmeta_exists(ctx, a, "via_caller", &kept), CATERVA_SUCCEED);
      CHECK(kept);
      CHECK_EQ_INT(caterva_to_buffer(ctx, a, back, sizeof(back)), CATERVA_SUCCEED);
      CHECK_EQ_INT(back[12], -1);
      CHECK_EQ_INT(back[14], -3);
      CHECK_EQ_INT(back[11], data[11]);
      caterva_free(ctx, &a);
    }
  }
  CHECK_EQ_INT(caterva_from_schunk(ctx, NULL, &a), CATERVA_ERR_NULL_POINTER);
  /* A super-chunk without either metalayer is refused and left usable. */
  blosc2_storage bst = BLOSC2_STORAGE_DEFAULTS;
  blosc2_schunk *plain = blosc2_schunk_new(&bst);
  CHECK(plain != NULL);
  if (plain) {
    CHECK_EQ_INT(caterva_from_schunk(ctx, plain, &a), CATERVA_ERR_BLOSC_FAILED);
    CHECK(a == NULL);
    CHECK_EQ_INT(plain->nchunks, 0);
    blosc2_schunk_free(plain);
  }
  caterva_remove(ctx, (char *)backend_path[CONTIG]);
}

/* array->sc is the array's real super-chunk: blosc2_schunk_* and
 * blosc2_vlmeta_* calls on it and caterva_* calls see the same data. */
static void run_sc(caterva_ctx_t *ctx, int backend) {
  caterva_params_t params;
  memset(&params, 0, sizeof(params));
  params.itemsize = 4;
  params.ndim = 2;
  params.shape[0] = 7;
  params.shape[1] = 5;
  int32_t cs[2] = {3, 5}, bs[2] = {3, 5};
  caterva_storage_t st;
  fill_storage(&st, 2, backend, cs, bs);
  if (backend_path[backend]) caterva_remove(ctx, (char *)backend_path[backend]);
  int32_t data[35];
  for (int i = 0; i < 35; i++) data[i] = i * 7 - 3;
  caterva_array_t *a = NULL;
  CHECK_EQ_INT(caterva_from_buffer(ctx, data, sizeof(data), &params, &st, &a), CATERVA_SUCCEED);
  if (!a) return;
  blosc2_schunk *sc = a->sc;
  CHECK(sc != NULL);
  if (!sc) {
    caterva_free(ctx, &a);
    return;
  }
  CHECK_EQ_INT(sc->nchunks, 3);
  CHECK_EQ_INT(sc->nchunks, a->nchunks);
  CHECK_EQ_INT(sc->typesize, 4);
  CHECK_EQ_INT(sc->nbytes, 3 * 3 * 5 * 4);
  CHECK(sc->cbytes > 0);
  CHECK(sc->storage != NULL && sc->storage->contiguous == (backend == CONTIG));
  CHECK(blosc2_meta_exists(sc, "caterva") >= 0);
  CHECK(blosc2_meta_exists(sc, "b2nd") >= 0);
  /* Chunk 1 holds rows 3..5. */
  int32_t chunk[15];
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 1, chunk, sizeof(chunk)), (int)sizeof(chunk));
  CHECK(memcmp(chunk, data + 15, sizeof(chunk)) == 0);

  /* vlmetalayers written through one face are read through the other. */
  uint8_t v1[3] = {1, 2, 3}, v2[4] = {9, 9, 9, 9};
  CHECK(blosc2_vlmeta_add(sc, "from_sc", v1, 3, NULL) >= 0);
  caterva_metalayer_t got;
  CHECK_EQ_INT(caterva_vlmeta_get(ctx, a, "from_sc", &got), CATERVA_SUCCEED);
  CHECK_EQ_INT(got.size, 3);
  CHECK(memcmp(got.sdata, v1, 3) == 0);
  free(got.sdata);
  free(got.name);
  caterva_metalayer_t vl = {(char *)"from_caterva", v2, 4};
  CHECK_EQ_INT(caterva_vlmeta_add(ctx, a, &vl), CATERVA_SUCCEED);
  uint8_t *content = NULL;
  int32_t clen = 0;
  CHECK(blosc2_vlmeta_get(a->sc, "from_caterva", &content, &clen) >= 0);
  CHECK_EQ_INT(clen, 4);
  CHECK(content != NULL && memcmp(content, v2, 4) == 0);
  free(content);
  CHECK_EQ_INT(a->sc->nvlmetalayers, 2);

  /* Shape changes show through the super-chunk; the pointer stays. */
  int32_t row[5] = {-1, -2, -3, -4, -5};
  CHECK_EQ_INT(caterva_append(ctx, a, row, sizeof(row), 0), CATERVA_SUCCEED);
  CHECK(a->sc == sc);
  CHECK_EQ_INT(a->nchunks, 3);
  CHECK_EQ_INT(sc->nchunks, 3);
  int64_t ns[2] = {10, 5};
  CHECK_EQ_INT(caterva_resize(ctx, a, ns, NULL), CATERVA_SUCCEED);
  CHECK_EQ_INT(sc->nchunks, 4);
  CHECK_EQ_INT(a->nchunks, 4);
  CHECK_EQ_INT(caterva_free(ctx, &a), CATERVA_SUCCEED);

  if (backend != MEM) {
    /* The super-chunk was the file: both vlmetalayers were stored. */
    CHECK_EQ_INT(caterva_open(ctx, backend_path[backend], &a), CATERVA_SUCCEED);
    if (a) {
      CHECK_EQ_INT(a->shape[0], 10);
      CHECK(blosc2_vlmeta_exists(a->sc, "from_sc") >= 0);
      CHECK(blosc2_vlmeta_exists(a->sc, "from_caterva") >= 0);
      caterva_free(ctx, &a);
    }
    caterva_remove(ctx, (char *)backend_path[backend]);
  }
}

/* caterva_squeeze works in place on Caterva-created arrays: same
 * super-chunk, both metalayers describe the new shape, files reopen
 * squeezed through both APIs and keep growing. */
static void run_squeeze(caterva_ctx_t *ctx, int backend) {
  caterva_params_t params;
  memset(&params, 0, sizeof(params));
  params.itemsize = 2;
  params.ndim = 4;
  int64_t shape[4] = {1, 6, 1, 4};
  int32_t cs[4] = {1, 3, 1, 2}, bs[4] = {1, 2, 1, 1};
  for (int i = 0; i < 4; i++) params.shape[i] = shape[i];
  caterva_storage_t st;
  fill_storage(&st, 4, backend, cs, bs);
  if (backend_path[backend]) caterva_remove(ctx, (char *)backend_path[backend]);
  uint16_t data[24];
  for (int i = 0; i < 24; i++) data[i] = (uint16_t)(i * 300 + 7);
  caterva_array_t *a = NULL;
  CHECK_EQ_INT(caterva_from_buffer(ctx, data, sizeof(data), &params, &st, &a), CATERVA_SUCCEED);
  if (!a) return;
  blosc2_schunk *sc = a->sc;
  /* Only extent-1 dimensions may be flagged. */
  bool bad[4] = {false, true, false, false};
  CHECK_EQ_INT(caterva_squeeze_index(ctx, a, bad), CATERVA_ERR_INVALID_INDEX);
  CHECK_EQ_INT(a->ndim, 4);
  bool first[4] = {true, false, false, false};
  CHECK_EQ_INT(caterva_squeeze_index(ctx, a, first), CATERVA_SUCCEED);
  CHECK_EQ_INT(a->ndim, 3);
  CHECK_EQ_INT(a->shape[0], 6);
  CHECK_EQ_INT(a->shape[1], 1);
  CHECK_EQ_INT(caterva_squeeze(ctx, a), CATERVA_SUCCEED);
  CHECK(a->sc == sc);
  CHECK_EQ_INT(a->ndim, 2);
  CHECK_EQ_INT(a->shape[0], 6);
  CHECK_EQ_INT(a->shape[1], 4);
  CHECK_EQ_INT(a->shape[2], 1);
  CHECK_EQ_INT(a->chunkshape[0], 3);
  CHECK_EQ_INT(a->chunkshape[1], 2);
  CHECK_EQ_INT(a->blockshape[0], 2);
  CHECK_EQ_INT(a->nitems, 24);
  CHECK_EQ_INT(a->nchunks, 4);
  CHECK_EQ_INT(sc->nchunks, 4);
  uint16_t out[24];
  CHECK_EQ_INT(caterva_to_buffer(ctx, a, out, sizeof(out)), CATERVA_SUCCEED);
  CHECK(memcmp(out, data, sizeof(out)) == 0);
  /* Both layers, read straight from the super-chunk, give the new shape. */
  const char *layers[2] = {"caterva", "b2nd"};
  for (int l = 0; l < 2; l++) {
    uint8_t *m = NULL;
    int32_t mlen = 0;
    CHECK(blosc2_meta_get(sc, layers[l], &m, &mlen) >= 0);
    int8_t nd = 0;
    int64_t dsh[CATERVA_MAX_DIM];
    int32_t dcs[CATERVA_MAX_DIM], dbs[CATERVA_MAX_DIM];
    CHECK(m != NULL && caterva_deserialize_meta(m, mlen, &nd, dsh, dcs, dbs) > 0);
    CHECK_EQ_INT(nd, 2);
    CHECK_EQ_INT(dsh[0], 6);
    CHECK_EQ_INT(dsh[1], 4);
    CHECK_EQ_INT(dcs[1], 2);
    CHECK_EQ_INT(dbs[0], 2);
    free(m);
  }
  /* The squeezed array keeps working: a slice write and an append. */
  int64_t start[2] = {5, 0}, stop[2] = {6, 4}, bshape[2] = {1, 4};
  uint16_t row[4] = {1, 2, 3, 4};
  CHECK_EQ_INT(caterva_set_slice_buffer(ctx, row, bshape, sizeof(row), start, stop, a), CATERVA_SUCCEED);
  CHECK_EQ_INT(caterva_append(ctx, a, row, sizeof(row), 0), CATERVA_SUCCEED);
  CHECK_EQ_INT(a->shape[0], 7);
  memcpy(data + 20, row, sizeof(row));
  CHECK_EQ_INT(caterva_free(ctx, &a), CATERVA_SUCCEED);

  if (backend != MEM) {
    CHECK_EQ_INT(caterva_open(ctx, backend_path[backend], &a), CATERVA_SUCCEED);
    if (a) {
      CHECK_EQ_INT(a->ndim, 2);
      CHECK_EQ_INT(a->shape[0], 7);
      uint16_t back[28];
      CHECK_EQ_INT(caterva_to_buffer(ctx, a, back, sizeof(back)), CATERVA_SUCCEED);
      CHECK(memcmp(back, data, sizeof(data)) == 0);
      CHECK(memcmp(back + 24, row, sizeof(row)) == 0);
      caterva_free(ctx, &a);
    }
    b2nd_array_t *b = NULL;
    CHECK_EQ_INT(b2nd_open(backend_path[backend], &b), 0);
    if (b) {
      CHECK_EQ_INT(b->ndim, 2);
      CHECK_EQ_INT(b->shape[0], 7);
      CHECK_EQ_INT(b->shape[1], 4);
      uint16_t back[28];
      CHECK_EQ_INT(b2nd_to_cbuffer(b, back, sizeof(back)), 0);
      CHECK(memcmp(back, data, sizeof(data)) == 0);
      b2nd_free(b);
    }
    caterva_remove(ctx, (char *)backend_path[backend]);
  }

  /* A unit dimension chunked wider than 1 would need its chunks rewritten:
   * refused, the array left as it was. */
  int32_t wide_cs[2] = {2, 4}, wide_bs[2] = {1, 2};
  params.ndim = 2;
  params.shape[0] = 1;
  params.shape[1] = 4;
  fill_storage(&st, 2, MEM, wide_cs, wide_bs);
  CHECK_EQ_INT(caterva_from_buffer(ctx, data, 8, &params, &st, &a), CATERVA_SUCCEED);
  if (a) {
    CHECK_EQ_INT(caterva_squeeze(ctx, a), CATERVA_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(a->ndim, 2);
    CHECK_EQ_INT(caterva_to_buffer(ctx, a, out, 8), CATERVA_SUCCEED);
    CHECK(memcmp(out, data, 8) == 0);
    caterva_free(ctx, &a);
  }
}

/* Whether `path` is a directory (1), a regular file (0) or missing (-1). */
static int path_kind(const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0) return -1;
  return S_ISDIR(sb.st_mode) ? 1 : 0;
}

/* caterva_save keeps the array's storage kind, as Caterva does: a sparse
 * super-chunk is saved as a sparse frame directory, a contiguous one as a
 * frame file; both reopen with the same contents and metalayers. */
static void run_save(caterva_ctx_t *ctx) {
  const char *saved = "cat_saved_kind.b2frame";
  caterva_params_t params;
  memset(&params, 0, sizeof(params));
  params.itemsize = 8;
  params.ndim = 1;
  params.shape[0] = 20;
  int32_t cs[1] = {6}, bs[1] = {3};
  int64_t data[20];
  for (int i = 0; i < 20; i++) data[i] = (int64_t)i * i - 50;
  for (int backend = MEM; backend <= SPARSE; backend++) {
    for (int contiguous = 0; contiguous <= 1; contiguous++) {
      if (backend != MEM && contiguous != (backend == CONTIG)) continue;
      caterva_storage_t st;
      fill_storage(&st, 1, backend, cs, bs);
      st.contiguous = contiguous;
      if (backend_path[backend]) caterva_remove(ctx, (char *)backend_path[backend]);
      caterva_array_t *a = NULL;
      CHECK_EQ_INT(caterva_from_buffer(ctx, data, sizeof(data), &params, &st, &a), CATERVA_SUCCEED);
      if (!a) continue;
      uint8_t v[2] = {5, 6};
      caterva_metalayer_t vl = {(char *)"kept", v, 2};
      CHECK_EQ_INT(caterva_vlmeta_add(ctx, a, &vl), CATERVA_SUCCEED);
      caterva_remove(ctx, (char *)saved);
      CHECK_EQ_INT(caterva_save(ctx, a, (char *)saved), CATERVA_SUCCEED);
      CHECK_EQ_INT(path_kind(saved), contiguous ? 0 : 1);
      caterva_free(ctx, &a);
      CHECK_EQ_INT(caterva_open(ctx, saved, &a), CATERVA_SUCCEED);
      if (a) {
        CHECK_EQ_INT(a->sc->storage->contiguous, contiguous);
        int64_t back[20];
        CHECK_EQ_INT(caterva_to_buffer(ctx, a, back, sizeof(back)), CATERVA_SUCCEED);
        CHECK(memcmp(back, data, sizeof(data)) == 0);
        CHECK_EQ_INT(a->chunkshape[0], 6);
        CHECK_EQ_INT(a->blockshape[0], 3);
        bool ex = false;
        CHECK_EQ_INT(caterva_vlmeta_exists(ctx, a, "kept", &ex), CATERVA_SUCCEED);
        CHECK(ex);
        CHECK_EQ_INT(caterva_meta_exists(ctx, a, "caterva", &ex), CATERVA_SUCCEED);
        CHECK(ex);
        caterva_free(ctx, &a);
      }
      CHECK_EQ_INT(caterva_remove(ctx, (char *)saved), CATERVA_SUCCEED);
      CHECK_EQ_INT(path_kind(saved), -1);
      if (backend_path[backend]) caterva_remove(ctx, (char *)backend_path[backend]);
    }
  }
  /* Saving onto the array's own file is refused, the file left intact. */
  caterva_storage_t st;
  fill_storage(&st, 1, CONTIG, cs, bs);
  caterva_remove(ctx, (char *)backend_path[CONTIG]);
  caterva_array_t *a = NULL;
  CHECK_EQ_INT(caterva_from_buffer(ctx, data, sizeof(data), &params, &st, &a), CATERVA_SUCCEED);
  if (a) {
    CHECK(caterva_save(ctx, a, (char *)backend_path[CONTIG]) != CATERVA_SUCCEED);
    int64_t back[20];
    CHECK_EQ_INT(caterva_to_buffer(ctx, a, back, sizeof(back)), CATERVA_SUCCEED);
    CHECK(memcmp(back, data, sizeof(data)) == 0);
    caterva_free(ctx, &a);
  }
  CHECK_EQ_INT(caterva_save(ctx, NULL, (char *)saved), CATERVA_ERR_NULL_POINTER);
  caterva_remove(ctx, (char *)backend_path[CONTIG]);
}

/* The error macros Caterva callers use in their own functions. */
static int uses_error_macros(caterva_ctx_t *ctx, caterva_array_t *maybe_null) {
  CATERVA_ERROR_NULL(maybe_null);
  CATERVA_ERROR(caterva_print_meta(maybe_null));
  CATERVA_UNUSED_PARAM(ctx);
  return CATERVA_SUCCEED;
}

static int forwards_errors(caterva_ctx_t *ctx) {
  CATERVA_ERROR(caterva_open(ctx, "no_such_caterva_file.b2frame", NULL));
  return CATERVA_SUCCEED;
}

int main(void) {
  blosc2_init();
  caterva_config_t cfg = CATERVA_CONFIG_DEFAULTS;
  CHECK_EQ_INT(cfg.compcodec, BLOSC_ZSTD);
  CHECK_EQ_INT(cfg.complevel, 5);
  CHECK_EQ_INT(cfg.filters[BLOSC2_MAX_FILTERS - 1], BLOSC_SHUFFLE);
  CHECK_EQ_INT(CATERVA_MAX_DIM, 8);
  CHECK_EQ_INT(CATERVA_MAX_METALAYERS, 15);
  CHECK_EQ_INT(CATERVA_ERR_NULL_POINTER, 5);
  cfg.compcodec = BLOSC_BLOSCLZ;
  caterva_ctx_t *ctx = NULL;
  CHECK_EQ_INT(caterva_ctx_new(&cfg, &ctx), CATERVA_SUCCEED);
  if (!ctx) return test_finish("test_caterva_api");
  CHECK_EQ_INT(ctx->cfg->compcodec, BLOSC_BLOSCLZ);

  static const int sizes[4] = {1, 2, 4, 8};
  for (int s = 0; s < 4; s++)
    for (int nd = 1; nd <= CATERVA_MAX_DIM; nd++)
      for (int backend = MEM; backend <= SPARSE; backend++) run_case(ctx, sizes[s], nd, backend);
  for (int backend = MEM; backend <= SPARSE; backend++) run_reshape(ctx, backend);
  run_errors(ctx);
  run_from_schunk(ctx);
  for (int backend = MEM; backend <= SPARSE; backend++) {
    run_sc(ctx, backend);
    run_squeeze(ctx, backend);
  }
  run_save(ctx);
  CHECK_EQ_INT(uses_error_macros(ctx, NULL), CATERVA_ERR_NULL_POINTER);
  CHECK_EQ_INT(forwards_errors(ctx), CATERVA_ERR_NULL_POINTER);
  CHECK_EQ_INT(CATERVA_VERSION_MAJOR * 10 + CATERVA_VERSION_MINOR, 5);
  CHECK(strncmp(CATERVA_VERSION_STRING, "0.5", 3) == 0);
  CHECK_EQ_INT(CATERVA_METALAYER_VERSION, 0);

  CHECK_EQ_INT(caterva_ctx_free(&ctx), CATERVA_SUCCEED);
  CHECK(ctx == NULL);
  blosc2_destroy();
  return test_finish("test_caterva_api");
}
