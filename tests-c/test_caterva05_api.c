/* The Caterva 0.5.0 spelling of caterva.h (storage.backend, storage.properties.blosc,
 * plain buffers, array->storage / array->buf, caterva_from_serial_schunk, the 4-argument
 * caterva_append) next to the later spelling in the same translation unit: both compile
 * as strict C99, alias the same bytes, and give the same results. */
#include <caterva.h>
#include <stddef.h>
#include <string.h>

#include "test_common.h"

/* Compile-time checks (C99: a negative array size is an error). */
#define STATIC_CHECK(name, cond) typedef char static_check_##name[(cond) ? 1 : -1]
/* Both spellings name the same bytes: the later API's layout is unchanged. */
STATIC_CHECK(chunkshape, offsetof(caterva_storage_t, chunkshape) == offsetof(caterva_storage_t, properties.blosc.chunkshape));
STATIC_CHECK(blockshape, offsetof(caterva_storage_t, blockshape) == offsetof(caterva_storage_t, properties.blosc.blockshape));
STATIC_CHECK(contiguous, offsetof(caterva_storage_t, contiguous) == offsetof(caterva_storage_t, properties.blosc.sequencial));
STATIC_CHECK(urlpath, offsetof(caterva_storage_t, urlpath) == offsetof(caterva_storage_t, properties.blosc.urlpath));
STATIC_CHECK(metalayers, offsetof(caterva_storage_t, metalayers) == offsetof(caterva_storage_t, properties.blosc.metalayers));
STATIC_CHECK(nmetalayers, offsetof(caterva_storage_t, nmetalayers) == offsetof(caterva_storage_t, properties.blosc.nmetalayers));
STATIC_CHECK(backend_in_padding, offsetof(caterva_storage_t, backend) > offsetof(caterva_storage_t, contiguous) &&
                                     offsetof(caterva_storage_t, backend) + sizeof(caterva_storage_backend_t) <=
                                         offsetof(caterva_storage_t, urlpath));
STATIC_CHECK(blosc_size, sizeof(caterva_storage_properties_blosc_t) == sizeof(caterva_storage_t));
/* The 0.5.0 fields of caterva_array_t come after the later API's. */
STATIC_CHECK(array_tail, offsetof(caterva_array_t, storage) > offsetof(caterva_array_t, chunk_array_strides));

static void pattern(uint8_t *buf, int64_t n) {
  for (int64_t i = 0; i < n; i++) buf[i] = (uint8_t)(i * 7 + 1);
}

/* A 0.5.0-style storage description, as Caterva 0.5.0's own tests write them. */
static void storage05(caterva_storage_t *st, caterva_storage_backend_t backend, bool sequencial, char *urlpath,
                      int nd, const int32_t *cs, const int32_t *bs) {
  caterva_storage_t zero = {0};
  *st = zero;
  st->backend = backend;
  if (backend == CATERVA_STORAGE_BLOSC) {
    st->properties.blosc.sequencial = sequencial;
    st->properties.blosc.urlpath = urlpath;
    for (int i = 0; i < nd; i++) {
      st->properties.blosc.chunkshape[i] = cs[i];
      st->properties.blosc.blockshape[i] = bs[i];
    }
  }
}

static void check_aliasing(void) {
  caterva_storage_t st = {0};
  CHECK_EQ_INT(st.backend, CATERVA_STORAGE_BLOSC); /* zeroed storage is Blosc */
  st.properties.blosc.chunkshape[2] = 7;
  st.properties.blosc.blockshape[1] = 3;
  st.properties.blosc.sequencial = true;
  st.properties.blosc.urlpath = (char *)"x.b2frame";
  st.properties.blosc.nmetalayers = 2;
  CHECK_EQ_INT(st.chunkshape[2], 7);
  CHECK_EQ_INT(st.blockshape[1], 3);
  CHECK(st.contiguous);
  CHECK(strcmp(st.urlpath, "x.b2frame") == 0);
  CHECK_EQ_INT(st.nmetalayers, 2);
  st.backend = CATERVA_STORAGE_PLAINBUFFER;
  st.contiguous = false;
  CHECK(!st.properties.blosc.sequencial);
  CHECK_EQ_INT(st.backend, CATERVA_STORAGE_PLAINBUFFER); /* member stores leave it alone */
  /* Positional initialisers of the later members take one brace level per anonymous
   * member (the union, then its first struct); designated ones are unchanged. */
  caterva_storage_t later = {{{{4, 4}, {2, 2}, true, NULL, {{NULL, NULL, 0}}, 0}}};
  caterva_storage_t named = {.chunkshape = {4, 4}, .contiguous = true};
  CHECK_EQ_INT(named.properties.blosc.chunkshape[1], 4);
  CHECK(named.properties.blosc.sequencial);
  CHECK_EQ_INT(later.properties.blosc.chunkshape[1], 4);
  CHECK(later.properties.blosc.sequencial);
  CHECK_EQ_INT(later.backend, CATERVA_STORAGE_BLOSC);
  /* And those of 0.5.0's property structs. */
  caterva_storage_properties_blosc_t b = {{5}, {5}, false, NULL, {{NULL, NULL, 0}}, 0};
  CHECK_EQ_INT(b.chunkshape[0], 5);
}

/* One array through both backends and both spellings: same items, same results. */
static void check_backends(caterva_ctx_t *ctx) {
  enum { ND = 3 };
  const int64_t shape[ND] = {5, 1, 7};
  const int32_t cs[ND] = {2, 1, 4}, bs[ND] = {1, 1, 2};
  const int64_t n = 35;
  uint8_t src[35], out[35];
  pattern(src, n);
  caterva_params_t params = {0};
  params.itemsize = 1;
  params.ndim = ND;
  for (int i = 0; i < ND; i++) params.shape[i] = shape[i];

  caterva_storage_t plain, blosc, later;
  storage05(&plain, CATERVA_STORAGE_PLAINBUFFER, false, NULL, ND, cs, bs);
  storage05(&blosc, CATERVA_STORAGE_BLOSC, true, NULL, ND, cs, bs);
  memset(&later, 0, sizeof(later));
  for (int i = 0; i < ND; i++) {
    later.chunkshape[i] = cs[i];
    later.blockshape[i] = bs[i];
  }
  later.contiguous = true;

  caterva_array_t *p = NULL, *b = NULL, *l = NULL;
  CHECK_EQ_INT(caterva_from_buffer(ctx, src, n, &params, &plain, &p), CATERVA_SUCCEED);
  CHECK_EQ_INT(caterva_from_buffer(ctx, src, n, &params, &blosc, &b), CATERVA_SUCCEED);
  CHECK_EQ_INT(caterva_from_buffer(ctx, src, n, &params, &later, &l), CATERVA_SUCCEED);
  if (!p || !b || !l) return;

  /* A plain buffer is its items, uncompressed, without a super-chunk. */
  CHECK_EQ_INT(p->storage, CATERVA_STORAGE_PLAINBUFFER);
  CHECK(p->sc == NULL);
  CHECK(p->buf != NULL && memcmp(p->buf, src, (size_t)n) == 0);
  CHECK_EQ_INT(p->chunkshape[2], 7);
  CHECK_EQ_INT(p->blockshape[0], 5);
  CHECK_EQ_INT(p->nitems, n);
  CHECK_EQ_INT(b->storage, CATERVA_STORAGE_BLOSC);
  CHECK(b->sc != NULL && b->buf == NULL);
  CHECK(b->sc->storage->contiguous);
  CHECK_EQ_INT(l->storage, CATERVA_STORAGE_BLOSC);
  CHECK_EQ_INT(b->chunkshape[2], 4);

  caterva_array_t *all[3] = {p, b, l};
  for (int k = 0; k < 3; k++) {
    memset(out, 0, sizeof(out));
    CHECK_EQ_INT(caterva_to_buffer(ctx, all[k], out, n), CATERVA_SUCCEED);
    CHECK(memcmp(out, src, (size_t)n) == 0);
  }

  /* Slices: plain -> Blosc, Blosc -> plain, and buffers. */
  int64_t start[ND] = {1, 0, 2}, stop[ND] = {4, 1, 6}, bshape[ND] = {3, 1, 4};
  uint8_t want[12], got[12];
  CHECK_EQ_INT(caterva_get_slice_buffer(ctx, b, start, stop, want, bshape, 12), CATERVA_SUCCEED);
  CHECK_EQ_INT(caterva_get_slice_buffer(ctx, p, start, stop, got, bshape, 12), CATERVA_SUCCEED);
  CHECK(memcmp(want, got, 12) == 0);
  CHECK_EQ_INT(want[0], src[1 * 7 + 2]);
  caterva_array_t *s1 = NULL, *s2 = NULL;
  CHECK_EQ_INT(caterva_get_slice(ctx, p, start, stop, &blosc, &s1), CATERVA_SUCCEED);
  CHECK_EQ_INT(caterva_get_slice(ctx, b, start, stop, &plain, &s2), CATERVA_SUCCEED);
  if (s1 && s2) {
    CHECK_EQ_INT(s1->storage, CATERVA_STORAGE_BLOSC);
    CHECK_EQ_INT(s2->storage, CATERVA_STORAGE_PLAINBUFFER);
    CHECK(s2->buf != NULL && memcmp(s2->buf, want, 12) == 0);
    CHECK_EQ_INT(caterva_to_buffer(ctx, s1, got, 12), CATERVA_SUCCEED);
    CHECK(memcmp(got, want, 12) == 0);
    /* Squeezing a plain buffer keeps its items. */
    CHECK_EQ_INT(caterva_squeeze(ctx, s2), CATERVA_SUCCEED);
    CHECK_EQ_INT(s2->ndim, 2);
    CHECK_EQ_INT(s2->shape[1], 4);
    CHECK(s2->buf != NULL && memcmp(s2->buf, want, 12) == 0);
  }
  caterva_free(ctx, &s1);
  caterva_free(ctx, &s2);

  /* Writes land in the plain buffer's bytes. */
  uint8_t patch[12];
  memset(patch, 0xEE, sizeof(patch));
  CHECK_EQ_INT(caterva_set_slice_buffer(ctx, patch, bshape, 12, start, stop, p), CATERVA_SUCCEED);
  CHECK_EQ_INT(caterva_set_slice_buffer(ctx, patch, bshape, 12, start, stop, b), CATERVA_SUCCEED);
  CHECK_EQ_INT(p->buf[1 * 7 + 2], 0xEE);
  CHECK_EQ_INT(p->buf[0], src[0]);
  uint8_t fromb[35];
  CHECK_EQ_INT(caterva_to_buffer(ctx, b, fromb, n), CATERVA_SUCCEED);
  CHECK(memcmp(fromb, p->buf, (size_t)n) == 0);

  /* Copies between backends. */
  caterva_array_t *c1 = NULL, *c2 = NULL;
  CHECK_EQ_INT(caterva_copy(ctx, p, &blosc, &c1), CATERVA_SUCCEED);
  CHECK_EQ_INT(caterva_copy(ctx, b, &plain, &c2), CATERVA_SUCCEED);
  if (c1 && c2) {
    CHECK_EQ_INT(caterva_to_buffer(ctx, c1, out, n), CATERVA_SUCCEED);
    CHECK(memcmp(out, fromb, (size_t)n) == 0);
    CHECK(c2->buf != NULL && memcmp(c2->buf, fromb, (size_t)n) == 0);
  }
  caterva_free(ctx, &c1);
  caterva_free(ctx, &c2);

  /* What needs a super-chunk is refused on a plain buffer, as in 0.5.0. */
  uint8_t md = 1;
  caterva_metalayer_t meta = {(char *)"m", &md, 1};
  bool exists = true;
  CHECK_EQ_INT(caterva_vlmeta_add(ctx, p, &meta), CATERVA_ERR_INVALID_STORAGE);
  CHECK_EQ_INT(caterva_meta_exists(ctx, p, "caterva", &exists), CATERVA_ERR_INVALID_STORAGE);
  CHECK_EQ_INT(caterva_save(ctx, p, (char *)"never.b2frame"), CATERVA_ERR_INVALID_STORAGE);
  CHECK_EQ_INT(caterva_vlmeta_add(ctx, b, &meta), CATERVA_SUCCEED);

  /* A serialized super-chunk back into an array (caterva_from_serial_schunk). */
  uint8_t *frame = NULL;
  bool needs_free = false;
  int64_t flen = blosc2_schunk_to_buffer(b->sc, &frame, &needs_free);
  CHECK(flen > 0);
  caterva_array_t *back = NULL;
  CHECK_EQ_INT(caterva_from_serial_schunk(ctx, frame, flen, &back), CATERVA_SUCCEED);
  if (needs_free) free(frame); /* the array holds its own copy */
  if (back) {
    memset(out, 0, sizeof(out));
    CHECK_EQ_INT(caterva_to_buffer(ctx, back, out, n), CATERVA_SUCCEED);
    CHECK(memcmp(out, fromb, (size_t)n) == 0);
    CHECK_EQ_INT(caterva_vlmeta_exists(ctx, back, "m", &exists), CATERVA_SUCCEED);
    CHECK(exists);
  }
  caterva_free(ctx, &back);
  CHECK_EQ_INT(caterva_from_serial_schunk(ctx, src, n, &back), CATERVA_ERR_BLOSC_FAILED);
  CHECK_EQ_INT(caterva_from_serial_schunk(ctx, NULL, n, &back), CATERVA_ERR_NULL_POINTER);

  caterva_free(ctx, &p);
  caterva_free(ctx, &b);
  caterva_free(ctx, &l);
}

/* caterva_append with 4 arguments (0.5.0: the next chunk) and with 5 (later: along an axis). */
static void check_append(caterva_ctx_t *ctx) {
  const int32_t cs[2] = {2, 3}, bs[2] = {1, 3};
  caterva_params_t params = {0};
  params.itemsize = 1;
  params.ndim = 2;
  params.shape[0] = 3;
  params.shape[1] = 5;
  for (int backend = 0; backend < 2; backend++) {
    caterva_storage_t st;
    storage05(&st, backend ? CATERVA_STORAGE_PLAINBUFFER : CATERVA_STORAGE_BLOSC, false, NULL, 2, cs, bs);
    caterva_array_t *a = NULL;
    CHECK_EQ_INT(caterva_empty(ctx, &params, &st, &a), CATERVA_SUCCEED);
    if (!a) continue;
    int nchunks = backend ? 1 : 4;
    int32_t chunkbytes = a->chunknitems * a->itemsize;
    CHECK_EQ_INT(chunkbytes, backend ? 15 : 6);
    uint8_t chunk[15];
    for (int k = 0; k < nchunks; k++) {
      for (int j = 0; j < chunkbytes; j++) chunk[j] = (uint8_t)(10 * k + j);
      CHECK_EQ_INT(caterva_append(ctx, a, chunk, chunkbytes), CATERVA_SUCCEED);
    }
    CHECK_EQ_INT(caterva_append(ctx, a, chunk, chunkbytes), CATERVA_ERR_CONTAINER_FILLED);
    uint8_t out[15];
    CHECK_EQ_INT(caterva_to_buffer(ctx, a, out, 15), CATERVA_SUCCEED);
    if (backend) {
      for (int j = 0; j < 15; j++) CHECK_EQ_INT(out[j], j);
    } else {
      /* chunk k is [10k + 0..5] laid out as 2 x 3, clipped to the 3 x 5 array */
      static const uint8_t want[15] = {0, 1, 2, 10, 11, 3, 4, 5, 13, 14, 20, 21, 22, 30, 31};
      CHECK(memcmp(out, want, 15) == 0);
    }
    caterva_free(ctx, &a);
  }
  /* Arrays made any other way are filled. */
  caterva_storage_t st;
  storage05(&st, CATERVA_STORAGE_BLOSC, false, NULL, 2, cs, bs);
  caterva_array_t *z = NULL;
  CHECK_EQ_INT(caterva_zeros(ctx, &params, &st, &z), CATERVA_SUCCEED);
  uint8_t six[6] = {0};
  CHECK_EQ_INT(caterva_append(ctx, z, six, 6), CATERVA_ERR_CONTAINER_FILLED);
  /* Five arguments: the later API's append along an axis (one row of 5 items). */
  uint8_t row[5] = {9, 9, 9, 9, 9};
  CHECK_EQ_INT(caterva_append(ctx, z, row, 5, 0), CATERVA_SUCCEED);
  if (z) CHECK_EQ_INT(z->shape[0], 4);
  /* The exported names behind the macro, and the function's address. */
  CHECK_EQ_INT(caterva_append_chunk(ctx, z, six, 6), CATERVA_ERR_CONTAINER_FILLED);
  int (*later_append)(caterva_ctx_t *, caterva_array_t *, void *, int64_t, int8_t) = caterva_append;
  CHECK_EQ_INT(later_append(ctx, z, row, 5, 0), CATERVA_SUCCEED);
  CHECK_EQ_INT((caterva_append)(ctx, z, row, 5, 0), CATERVA_SUCCEED);
  if (z) CHECK_EQ_INT(z->shape[0], 6);
  caterva_free(ctx, &z);
  /* A plain buffer's shape is its partitions: later-API shape changes are refused. */
  storage05(&st, CATERVA_STORAGE_PLAINBUFFER, false, NULL, 2, cs, bs);
  CHECK_EQ_INT(caterva_zeros(ctx, &params, &st, &z), CATERVA_SUCCEED);
  CHECK_EQ_INT(caterva_append(ctx, z, row, 5, 0), CATERVA_ERR_INVALID_STORAGE);
  caterva_free(ctx, &z);
}

/* Files written with the 0.5.0 spelling open with the later one and through b2nd. */
static void check_files(caterva_ctx_t *ctx) {
  const int32_t cs[2] = {4, 4}, bs[2] = {2, 2};
  caterva_params_t params = {0};
  params.itemsize = 2;
  params.ndim = 2;
  params.shape[0] = 10;
  params.shape[1] = 6;
  uint8_t src[120], out[120];
  pattern(src, 120);
  for (int seq = 0; seq < 2; seq++) {
    char *path = seq ? (char *)"cat05_contig.b2nd" : (char *)"cat05_sparse.b2nd";
    caterva_remove(ctx, path);
    caterva_storage_t st;
    storage05(&st, CATERVA_STORAGE_BLOSC, seq, path, 2, cs, bs);
    caterva_array_t *a = NULL;
    CHECK_EQ_INT(caterva_from_buffer(ctx, src, 120, &params, &st, &a), CATERVA_SUCCEED);
    caterva_free(ctx, &a);
    caterva_array_t *o = NULL;
    CHECK_EQ_INT(caterva_open(ctx, path, &o), CATERVA_SUCCEED);
    if (o) {
      CHECK_EQ_INT(o->sc->storage->contiguous, seq);
      CHECK_EQ_INT(caterva_to_buffer(ctx, o, out, 120), CATERVA_SUCCEED);
      CHECK(memcmp(out, src, 120) == 0);
    }
    caterva_free(ctx, &o);
    b2nd_array_t *nd = NULL;
    CHECK_EQ_INT(b2nd_open(path, &nd), 0);
    if (nd) {
      CHECK_EQ_INT(b2nd_to_cbuffer(nd, out, 120), 0);
      CHECK(memcmp(out, src, 120) == 0);
      b2nd_free(nd);
    }
    caterva_remove(ctx, path);
  }
}

int main(void) {
  blosc2_init();
  CHECK_EQ_INT(CATERVA_STORAGE_BLOSC, 0);
  CHECK(CATERVA_STORAGE_PLAINBUFFER != CATERVA_STORAGE_BLOSC);
  caterva_config_t cfg = CATERVA_CONFIG_DEFAULTS;
  caterva_ctx_t *ctx = NULL;
  CHECK_EQ_INT(caterva_ctx_new(&cfg, &ctx), CATERVA_SUCCEED);
  if (!ctx) return test_finish("test_caterva05_api");
  CHECK(ctx->cfg->alloc == malloc);
  check_aliasing();
  check_backends(ctx);
  check_append(ctx);
  check_files(ctx);
  caterva_ctx_free(&ctx);
  blosc2_destroy();
  return test_finish("test_caterva05_api");
}
