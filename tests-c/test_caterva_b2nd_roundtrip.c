/* The Caterva and b2nd APIs on the same files and frames: arrays written through
 * caterva_* read back through b2nd_* (same geometry, same items), and arrays written
 * through b2nd_* read back through caterva_*; shape changes made through one API are
 * seen by the other. Itemsizes 1/2/4/8, ndim 1..8, contiguous files, sparse
 * directories and in-memory frames. */
#include <caterva.h>
#include <b2nd.h>
#include <string.h>

#include "test_common.h"

enum { MEM, CONTIG, SPARSE };
static const char *backend_path[] = {NULL, "rt_contig.b2frame", "rt_sparse.b2frame"};

struct geom {
  int8_t ndim;
  int64_t shape[CATERVA_MAX_DIM];
  int32_t cs[CATERVA_MAX_DIM], bs[CATERVA_MAX_DIM];
  int64_t nitems;
};

/* A geometry for `nd` dimensions with partial edge chunks and blocks. */
static struct geom geom_for(int nd) {
  struct geom g;
  memset(&g, 0, sizeof(g));
  g.ndim = (int8_t)nd;
  g.nitems = 1;
  for (int i = 0; i < nd; i++) {
    g.shape[i] = nd <= 2 ? 11 + 3 * i : (i % 3 == 0 ? 3 : 2);
    g.cs[i] = nd <= 2 ? 4 + i : 2;
    g.bs[i] = nd <= 2 ? 3 : 1;
    g.nitems *= g.shape[i];
  }
  return g;
}

static void pattern(uint8_t *buf, int64_t nitems, int isz, int seed) {
  for (int64_t i = 0; i < nitems; i++)
    for (int b = 0; b < isz; b++) buf[i * isz + b] = (uint8_t)((i >> (8 * b)) * 7 + seed + b);
}

static void fill_storage(caterva_storage_t *st, const struct geom *g, int backend) {
  memset(st, 0, sizeof(*st));
  for (int i = 0; i < g->ndim; i++) {
    st->chunkshape[i] = g->cs[i];
    st->blockshape[i] = g->bs[i];
  }
  st->contiguous = backend != SPARSE;
  st->urlpath = (char *)backend_path[backend];
}

static void check_b2nd_geometry(const b2nd_array_t *b, const struct geom *g) {
  CHECK_EQ_INT(b->ndim, g->ndim);
  for (int i = 0; i < g->ndim; i++) {
    CHECK_EQ_INT(b->shape[i], g->shape[i]);
    CHECK_EQ_INT(b->chunkshape[i], g->cs[i]);
    CHECK_EQ_INT(b->blockshape[i], g->bs[i]);
  }
  CHECK_EQ_INT(b->nitems, g->nitems);
}

static void check_caterva_geometry(const caterva_array_t *a, const struct geom *g, int isz) {
  CHECK_EQ_INT(a->ndim, g->ndim);
  CHECK_EQ_INT(a->itemsize, isz);
  for (int i = 0; i < g->ndim; i++) {
    CHECK_EQ_INT(a->shape[i], g->shape[i]);
    CHECK_EQ_INT(a->chunkshape[i], g->cs[i]);
    CHECK_EQ_INT(a->blockshape[i], g->bs[i]);
  }
  CHECK_EQ_INT(a->nitems, g->nitems);
}

/* Written through Caterva, read through b2nd (and grown through b2nd, read
 * through Caterva again). */
static void caterva_to_b2nd(caterva_ctx_t *ctx, int isz, int nd, int backend) {
  struct geom g = geom_for(nd);
  int64_t nbytes = g.nitems * isz;
  uint8_t *src = malloc((size_t)nbytes), *out = malloc((size_t)nbytes);
  pattern(src, g.nitems, isz, nd + backend);
  caterva_params_t params;
  memset(&params, 0, sizeof(params));
  params.itemsize = (uint8_t)isz;
  params.ndim = g.ndim;
  for (int i = 0; i < nd; i++) params.shape[i] = g.shape[i];
  caterva_storage_t st;
  fill_storage(&st, &g, backend);
  if (backend_path[backend]) caterva_remove(ctx, (char *)backend_path[backend]);
  caterva_array_t *a = NULL;
  CHECK_EQ_INT(caterva_from_buffer(ctx, src, nbytes, &params, &st, &a), CATERVA_SUCCEED);
  if (!a) goto done;

  b2nd_array_t *b = NULL;
  if (backend == MEM) {
    uint8_t *cframe = NULL;
    int64_t clen = 0;
    bool needs_free = false;
    CHECK_EQ_INT(caterva_to_cframe(ctx, a, &cframe, &clen, &needs_free), CATERVA_SUCCEED);
    CHECK_EQ_INT(b2nd_from_cframe(cframe, clen, true, &b), 0);
    if (needs_free) free(cframe);
  } else {
    CHECK_EQ_INT(caterva_free(ctx, &a), CATERVA_SUCCEED);
    CHECK_EQ_INT(b2nd_open(backend_path[backend], &b), 0);
  }
  if (b) {
    check_b2nd_geometry(b, &g);
    CHECK_EQ_INT(b->sc->typesize, isz);
    CHECK(blosc2_meta_exists(b->sc, "caterva") >= 0);
    memset(out, 0, (size_t)nbytes);
    CHECK_EQ_INT(b2nd_to_cbuffer(b, out, nbytes), 0);
    CHECK(memcmp(out, src, (size_t)nbytes) == 0);
    /* A slice through b2nd matches the Caterva-written items. */
    int64_t start[CATERVA_MAX_DIM], stop[CATERVA_MAX_DIM], bshape[CATERVA_MAX_DIM];
    for (int i = 0; i < nd; i++) {
      start[i] = g.shape[i] - 1;
      stop[i] = g.shape[i];
      bshape[i] = 1;
    }
    uint8_t last[8];
    CHECK_EQ_INT(b2nd_get_slice_cbuffer(b, start, stop, last, bshape, isz), 0);
    CHECK(memcmp(last, src + nbytes - isz, (size_t)isz) == 0);
    if (backend != MEM) {
      /* Grow the file through b2nd along axis 0 ... */
      int64_t extra = g.nitems / g.shape[0] * isz;
      uint8_t *more = malloc((size_t)extra);
      memset(more, 0x3c, (size_t)extra);
      CHECK_EQ_INT(b2nd_append(b, more, extra, 0), 0);
      b2nd_free(b);
      b = NULL;
      /* ... and read it back through Caterva: both metalayers followed. */
      CHECK_EQ_INT(caterva_open(ctx, backend_path[backend], &a), CATERVA_SUCCEED);
      if (a) {
        CHECK_EQ_INT(a->shape[0], g.shape[0] + 1);
        uint8_t *grown = malloc((size_t)(nbytes + extra));
        CHECK_EQ_INT(caterva_to_buffer(ctx, a, grown, nbytes + extra), CATERVA_SUCCEED);
        CHECK(memcmp(grown, src, (size_t)nbytes) == 0);
        CHECK(memcmp(grown + nbytes, more, (size_t)extra) == 0);
        free(grown);
        /* b2nd updates only its own layer; the next shape change through
         * Caterva brings the caterva layer up to date. */
        CHECK_EQ_INT(caterva_append(ctx, a, more, extra, 0), CATERVA_SUCCEED);
        CHECK_EQ_INT(a->shape[0], g.shape[0] + 2);
        caterva_metalayer_t m;
        CHECK_EQ_INT(caterva_meta_get(ctx, a, "caterva", &m), CATERVA_SUCCEED);
        int8_t dnd = 0;
        int64_t dsh[CATERVA_MAX_DIM];
        int32_t dcs[CATERVA_MAX_DIM], dbs[CATERVA_MAX_DIM];
        CHECK_EQ_INT(caterva_deserialize_meta(m.sdata, m.size, &dnd, dsh, dcs, dbs), m.size);
        CHECK_EQ_INT(dnd, nd);
        CHECK_EQ_INT(dsh[0], g.shape[0] + 2);
        for (int i = 1; i < nd; i++) CHECK_EQ_INT(dsh[i], g.shape[i]);
        free(m.sdata);
        free(m.name);
        caterva_free(ctx, &a);
      }
      free(more);
    }
    if (b) b2nd_free(b);
  }
  if (a) caterva_free(ctx, &a);
  if (backend_path[backend]) caterva_remove(ctx, (char *)backend_path[backend]);
done:
  free(src);
  free(out);
}

/* Written through b2nd, read through Caterva (and changed through Caterva,
 * read through b2nd again). */
static void b2nd_to_caterva(caterva_ctx_t *ctx, int isz, int nd, int backend) {
  struct geom g = geom_for(nd);
  int64_t nbytes = g.nitems * isz;
  uint8_t *src = malloc((size_t)nbytes), *out = malloc((size_t)nbytes);
  pattern(src, g.nitems, isz, 100 + nd);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = isz;
  cp.nthreads = 1;
  blosc2_storage bst = BLOSC2_STORAGE_DEFAULTS;
  bst.cparams = &cp;
  bst.contiguous = backend != SPARSE;
  bst.urlpath = (char *)backend_path[backend];
  if (bst.urlpath) blosc2_remove_urlpath(bst.urlpath);
  b2nd_context_t *bctx = b2nd_create_ctx(&bst, g.ndim, g.shape, g.cs, g.bs, NULL, 0, NULL, 0);
  CHECK(bctx != NULL);
  b2nd_array_t *b = NULL;
  if (bctx) CHECK_EQ_INT(b2nd_from_cbuffer(bctx, &b, src, nbytes), 0);
  b2nd_free_ctx(bctx);
  if (!b) goto done;

  caterva_array_t *a = NULL;
  if (backend == MEM) {
    uint8_t *cframe = NULL;
    int64_t clen = 0;
    bool needs_free = false;
    CHECK_EQ_INT(b2nd_to_cframe(b, &cframe, &clen, &needs_free), 0);
    CHECK_EQ_INT(caterva_from_cframe(ctx, cframe, clen, true, &a), CATERVA_SUCCEED);
    if (needs_free) free(cframe);
  } else {
    b2nd_free(b);
    b = NULL;
    CHECK_EQ_INT(caterva_open(ctx, backend_path[backend], &a), CATERVA_SUCCEED);
  }
  if (b) b2nd_free(b);
  if (a) {
    check_caterva_geometry(a, &g, isz);
    bool ex = true;
    CHECK_EQ_INT(caterva_meta_exists(ctx, a, "caterva", &ex), CATERVA_SUCCEED);
    CHECK(!ex);
    CHECK_EQ_INT(caterva_meta_exists(ctx, a, "b2nd", &ex), CATERVA_SUCCEED);
    CHECK(ex);
    memset(out, 0, (size_t)nbytes);
    CHECK_EQ_INT(caterva_to_buffer(ctx, a, out, nbytes), CATERVA_SUCCEED);
    CHECK(memcmp(out, src, (size_t)nbytes) == 0);
    if (backend != MEM) {
      /* Delete the first row of chunks through Caterva ... */
      CHECK_EQ_INT(caterva_delete(ctx, a, 0, 0, g.cs[0]), CATERVA_SUCCEED);
      caterva_free(ctx, &a);
      /* ... and read the rest through b2nd. */
      CHECK_EQ_INT(b2nd_open(backend_path[backend], &b), 0);
      if (b) {
        int64_t row = g.nitems / g.shape[0] * isz;
        int64_t left = nbytes - g.cs[0] * row;
        CHECK_EQ_INT(b->shape[0], g.shape[0] - g.cs[0]);
        CHECK_EQ_INT(b->nitems * isz, left);
        uint8_t *rest = malloc((size_t)left);
        CHECK_EQ_INT(b2nd_to_cbuffer(b, rest, left), 0);
        CHECK(memcmp(rest, src + g.cs[0] * row, (size_t)left) == 0);
        free(rest);
        b2nd_free(b);
      }
    }
    if (a) caterva_free(ctx, &a);
  }
  if (backend_path[backend]) blosc2_remove_urlpath(backend_path[backend]);
done:
  free(src);
  free(out);
}

int main(void) {
  blosc2_init();
  caterva_config_t cfg = CATERVA_CONFIG_DEFAULTS;
  caterva_ctx_t *ctx = NULL;
  CHECK_EQ_INT(caterva_ctx_new(&cfg, &ctx), CATERVA_SUCCEED);
  if (!ctx) return test_finish("test_caterva_b2nd_roundtrip");
  static const int sizes[4] = {1, 2, 4, 8};
  for (int s = 0; s < 4; s++)
    for (int nd = 1; nd <= CATERVA_MAX_DIM; nd++)
      for (int backend = MEM; backend <= SPARSE; backend++) {
        caterva_to_b2nd(ctx, sizes[s], nd, backend);
        b2nd_to_caterva(ctx, sizes[s], nd, backend);
      }
  CHECK_EQ_INT(caterva_ctx_free(&ctx), CATERVA_SUCCEED);
  blosc2_destroy();
  return test_finish("test_caterva_b2nd_roundtrip");
}
