/* The super-chunk C API over the four storages (in-memory chunk list,
   in-memory frame, contiguous frame file, sparse frame directory): chunk
   mutations and the public fields after each, metalayers, vlmetalayers,
   slices, sparse reads, buffers, files, copies, special fills, packing,
   path and index utilities. */
#include "test_common.h"

#include <math.h>
#include <stdint.h>
#include <sys/stat.h>

#define CHUNK_ITEMS 1000
#define NCHUNKS 4

/* Items of chunk k of the test data: a ramp that differs per chunk. */
static void fill_chunk(int32_t *dst, int k) {
  for (int i = 0; i < CHUNK_ITEMS; i++) dst[i] = k * 100000 + i * 3;
}

/* Decompresses chunk n and checks it equals fill_chunk(k). */
static void check_chunk_is(blosc2_schunk *sc, int64_t n, int k) {
  int32_t want[CHUNK_ITEMS], got[CHUNK_ITEMS];
  fill_chunk(want, k);
  memset(got, 0xff, sizeof(got));
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, n, got, (int32_t)sizeof(got)), sizeof(got));
  CHECK(memcmp(want, got, sizeof(got)) == 0);
}

/* A malloc'ed copy of chunk n. */
static uint8_t *chunk_copy(blosc2_schunk *sc, int64_t n, int *len) {
  uint8_t *c;
  bool needs_free;
  *len = blosc2_schunk_get_chunk(sc, n, &c, &needs_free);
  CHECK(*len > 0);
  if (*len <= 0) return NULL;
  uint8_t *out = malloc((size_t)*len);
  memcpy(out, c, (size_t)*len);
  if (needs_free) free(c);
  return out;
}

static void check_fields(blosc2_schunk *sc, int64_t nchunks) {
  CHECK_EQ_INT(sc->nchunks, nchunks);
  CHECK_EQ_INT(sc->typesize, 4);
  CHECK_EQ_INT(sc->nbytes, nchunks * CHUNK_ITEMS * 4);
  if (nchunks > 0) {
    CHECK_EQ_INT(sc->chunksize, CHUNK_ITEMS * 4);
    CHECK(sc->cbytes > 0);
    CHECK(sc->cbytes < sc->nbytes);
  }
  CHECK(sc->storage != NULL);
  CHECK(sc->storage->cparams != NULL);
  CHECK_EQ_INT(sc->storage->cparams->typesize, 4);
}

static void metalayers(blosc2_schunk *sc) {
  char name[32];
  uint8_t content[8];
  for (int i = 0; i < BLOSC2_MAX_METALAYERS; i++) {
    snprintf(name, sizeof(name), "meta%d", i);
    memset(content, i, sizeof(content));
    CHECK_EQ_INT(blosc2_meta_add(sc, name, content, 4 + i % 4), i);
    CHECK_EQ_INT(sc->nmetalayers, i + 1);
  }
  CHECK(blosc2_meta_add(sc, "one-too-many", content, 4) < 0);
  CHECK_EQ_INT(blosc2_meta_add(sc, "meta3", content, 4), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_meta_add(sc, "a-name-that-is-longer-than-31-chars", content, 4),
               BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(sc->nmetalayers, BLOSC2_MAX_METALAYERS);
  CHECK(strcmp(sc->metalayers[5]->name, "meta5") == 0);
  CHECK_EQ_INT(sc->metalayers[5]->content_len, 5);
  CHECK_EQ_INT(sc->metalayers[5]->content[4], 5);

  CHECK_EQ_INT(blosc2_meta_exists(sc, "meta7"), 7);
  CHECK_EQ_INT(blosc2_meta_exists(sc, "nope"), BLOSC2_ERROR_NOT_FOUND);
  CHECK_EQ_INT(blosc2_meta_exists(NULL, "meta7"), BLOSC2_ERROR_INVALID_PARAM);

  /* In-place update with fewer bytes keeps the size. */
  uint8_t upd[2] = {0xAA, 0xBB};
  CHECK_EQ_INT(blosc2_meta_update(sc, "meta7", upd, 2), 7);
  uint8_t *got;
  int32_t got_len;
  CHECK_EQ_INT(blosc2_meta_get(sc, "meta7", &got, &got_len), 7);
  CHECK_EQ_INT(got_len, 7);
  CHECK_EQ_INT(got[0], 0xAA);
  CHECK_EQ_INT(got[1], 0xBB);
  CHECK_EQ_INT(got[2], 7);
  free(got);
  CHECK_EQ_INT(sc->metalayers[7]->content[0], 0xAA);
  /* Oversize update: rejected (content unchanged), index returned as the reference does. */
  uint8_t big[64];
  memset(big, 0x55, sizeof(big));
  CHECK_EQ_INT(blosc2_meta_update(sc, "meta7", big, 64), 7);
  CHECK_EQ_INT(blosc2_meta_get(sc, "meta7", &got, &got_len), 7);
  CHECK_EQ_INT(got_len, 7);
  CHECK_EQ_INT(got[0], 0xAA);
  free(got);
  CHECK_EQ_INT(blosc2_meta_update(sc, "nope", upd, 2), BLOSC2_ERROR_NOT_FOUND);
  CHECK_EQ_INT(blosc2_meta_get(sc, "nope", &got, &got_len), BLOSC2_ERROR_NOT_FOUND);
  CHECK_EQ_INT(blosc2_meta_get(sc, "meta1", NULL, &got_len), BLOSC2_ERROR_INVALID_PARAM);
}

/* The public entry of vlmetalayer i holds, as in the reference, the
   compressed content: a chunk whose cbytes is content_len and which
   decompresses to `want`. */
static void check_vl_entry(blosc2_schunk *sc, int i, const char *name, const char *want) {
  blosc2_metalayer *m = sc->vlmetalayers[i];
  CHECK(m != NULL);
  if (m == NULL) return;
  CHECK(strcmp(m->name, name) == 0);
  CHECK(m->content != NULL);
  if (m->content == NULL) return;
  int32_t nbytes, cbytes, bsize;
  CHECK_EQ_INT(blosc2_cbuffer_sizes(m->content, &nbytes, &cbytes, &bsize), 0);
  CHECK_EQ_INT(cbytes, m->content_len);
  CHECK_EQ_INT(nbytes, strlen(want));
  char out[128] = {0};
  CHECK_EQ_INT(blosc2_decompress(m->content, m->content_len, out, sizeof(out)), strlen(want));
  CHECK(memcmp(out, want, strlen(want)) == 0);
}

static void vlmetalayers(blosc2_schunk *sc) {
  const char *big = "a variable-length metalayer that is longer than the fixed ones";
  CHECK_EQ_INT(blosc2_vlmeta_add(sc, "vl0", (uint8_t *)"hello", 5, NULL), 0);
  CHECK_EQ_INT(blosc2_vlmeta_add(sc, "vl1", (uint8_t *)big, (int32_t)strlen(big), NULL), 1);
  CHECK_EQ_INT(blosc2_vlmeta_add(sc, "vl0", (uint8_t *)"x", 1, NULL), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(sc->nvlmetalayers, 2);
  CHECK(strcmp(sc->vlmetalayers[1]->name, "vl1") == 0);
  check_vl_entry(sc, 0, "vl0", "hello");
  check_vl_entry(sc, 1, "vl1", big);
  CHECK_EQ_INT(blosc2_vlmeta_exists(sc, "vl1"), 1);
  CHECK_EQ_INT(blosc2_vlmeta_exists(sc, "vl9"), BLOSC2_ERROR_NOT_FOUND);
  uint8_t *got;
  int32_t len;
  CHECK_EQ_INT(blosc2_vlmeta_get(sc, "vl1", &got, &len), 1);
  CHECK_EQ_INT(len, strlen(big));
  CHECK(memcmp(got, big, (size_t)len) == 0);
  free(got);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.clevel = 9;
  cp.compcode = BLOSC_ZSTD;
  int64_t tick = sc->change_tick;
  CHECK_EQ_INT(blosc2_vlmeta_update(sc, "vl0", (uint8_t *)"bigger content", 14, &cp), 0);
  CHECK_EQ_INT(sc->change_tick, tick + 1);
  check_vl_entry(sc, 0, "vl0", "bigger content");
  CHECK_EQ_INT(blosc2_vlmeta_get(sc, "vl0", &got, &len), 0);
  CHECK_EQ_INT(len, 14);
  CHECK(memcmp(got, "bigger content", 14) == 0);
  free(got);
  CHECK_EQ_INT(blosc2_vlmeta_add(sc, "vl2", (uint8_t *)"z", 1, NULL), 2);
  char *names[3];
  CHECK_EQ_INT(blosc2_vlmeta_get_names(sc, names), 3);
  CHECK(strcmp(names[2], "vl2") == 0);
  CHECK_EQ_INT(blosc2_vlmeta_delete(sc, "vl1"), 2);
  CHECK_EQ_INT(blosc2_vlmeta_delete(sc, "vl1"), BLOSC2_ERROR_NOT_FOUND);
  CHECK_EQ_INT(sc->nvlmetalayers, 2);
  CHECK_EQ_INT(blosc2_vlmeta_exists(sc, "vl2"), 1);
  check_vl_entry(sc, 0, "vl0", "bigger content");
  check_vl_entry(sc, 1, "vl2", "z");
  CHECK(sc->vlmetalayers[2] == NULL);
}

/* Chunk k's data at chunk position n, for the expected order `order`. */
static void check_order(blosc2_schunk *sc, const int *order, int n) {
  for (int i = 0; i < n; i++) check_chunk_is(sc, i, order[i]);
}

static void run_storage(bool contiguous, const char *urlpath) {
  blosc2_remove_urlpath(urlpath);
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 4;
  cparams.clevel = 5;
  cparams.nthreads = 1;
  blosc2_dparams dparams = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage storage = {.contiguous = contiguous, .urlpath = (char *)urlpath,
                            .cparams = &cparams, .dparams = &dparams};
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  CHECK(sc != NULL);
  if (sc == NULL) return;
  check_fields(sc, 0);
  CHECK_EQ_INT(sc->storage->contiguous, contiguous);
  CHECK((sc->frame == NULL) == (!contiguous && urlpath == NULL));
  if (urlpath) CHECK(strcmp(sc->storage->urlpath, urlpath) == 0);
  else CHECK(sc->storage->urlpath == NULL);

  metalayers(sc);

  int32_t data[CHUNK_ITEMS];
  for (int k = 0; k < NCHUNKS; k++) {
    fill_chunk(data, k);
    CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, data, (int32_t)sizeof(data)), k + 1);
    check_fields(sc, k + 1);
  }
  /* Fixed metalayers cannot be added to a frame that has data. */
  if (sc->frame != NULL) CHECK(blosc2_meta_add(sc, "late", (uint8_t *)"x", 1) < 0);
  for (int k = 0; k < NCHUNKS; k++) check_chunk_is(sc, k, k);

  /* insert a copy of chunk 1 at 0 (copy = true) */
  int len;
  uint8_t *c1 = chunk_copy(sc, 1, &len);
  CHECK_EQ_INT(blosc2_schunk_insert_chunk(sc, 0, c1, true), 5);
  free(c1);
  check_fields(sc, 5);
  { int order[5] = {1, 0, 1, 2, 3}; check_order(sc, order, 5); }

  /* update chunk 2 with a malloc'ed copy of chunk 4, ownership handed over */
  uint8_t *c4 = chunk_copy(sc, 4, &len);
  CHECK_EQ_INT(blosc2_schunk_update_chunk(sc, 2, c4, false), 5);
  check_fields(sc, 5);
  { int order[5] = {1, 0, 3, 2, 3}; check_order(sc, order, 5); }

  /* append a malloc'ed chunk, ownership handed over */
  uint8_t *c0 = chunk_copy(sc, 1, &len);
  CHECK_EQ_INT(blosc2_schunk_append_chunk(sc, c0, false), 6);
  check_fields(sc, 6);

  CHECK_EQ_INT(blosc2_schunk_delete_chunk(sc, 0), 5);
  CHECK_EQ_INT(blosc2_schunk_delete_chunk(sc, 4), 4);
  check_fields(sc, 4);
  { int order[4] = {0, 3, 2, 3}; check_order(sc, order, 4); }

  int64_t *before = blosc2_frame_get_offsets(sc);
  CHECK((before == NULL) == (sc->frame == NULL));
  int64_t reorder[4] = {3, 2, 1, 0};
  CHECK_EQ_INT(blosc2_schunk_reorder_offsets(sc, reorder), 0);
  if (before != NULL) {
    /* Reordering permutes the offsets index and moves no data. */
    int64_t *after = blosc2_frame_get_offsets(sc);
    CHECK(after != NULL);
    if (after != NULL) {
      for (int i = 0; i < 4; i++) CHECK_EQ_INT(after[i], before[reorder[i]]);
      free(after);
    }
    free(before);
  }
  check_fields(sc, 4);
  { int order[4] = {3, 2, 3, 0}; check_order(sc, order, 4); }

  /* Slices across chunk boundaries. */
  int32_t slice[1500];
  CHECK_EQ_INT(blosc2_schunk_get_slice_buffer(sc, 500, 2000, slice), 0);
  {
    int32_t c2[CHUNK_ITEMS], c3[CHUNK_ITEMS];
    fill_chunk(c3, 3);
    fill_chunk(c2, 2);
    CHECK(memcmp(slice, c3 + 500, 500 * 4) == 0);
    CHECK(memcmp(slice + 500, c2, 1000 * 4) == 0);
  }
  int32_t patch[300];
  for (int i = 0; i < 300; i++) patch[i] = -i;
  CHECK_EQ_INT(blosc2_schunk_set_slice_buffer(sc, 900, 1200, patch), 0);
  check_fields(sc, 4);
  int32_t back[300];
  CHECK_EQ_INT(blosc2_schunk_get_slice_buffer(sc, 900, 1200, back), 0);
  CHECK(memcmp(back, patch, sizeof(patch)) == 0);
  CHECK(blosc2_schunk_get_slice_buffer(sc, 3900, 4001, back) < 0);
  CHECK(blosc2_schunk_get_slice_buffer(sc, 10, 5, back) < 0);

  int64_t coords[4] = {0, 950, 3999, 2500};
  int32_t items[4];
  CHECK_EQ_INT(blosc2_schunk_get_sparse_buffer(sc, 4, coords, items), 0);
  CHECK_EQ_INT(items[1], -50);
  CHECK_EQ_INT(items[2], 0 * 100000 + 999 * 3);
  CHECK_EQ_INT(items[3], 3 * 100000 + 500 * 3);
  CHECK_EQ_INT(items[0], 3 * 100000);
  int64_t badc[1] = {4000};
  CHECK(blosc2_schunk_get_sparse_buffer(sc, 1, badc, items) < 0);
  CHECK_EQ_INT(blosc2_schunk_get_sparse_buffer(sc, -1, coords, items), BLOSC2_ERROR_INVALID_PARAM);

  vlmetalayers(sc);

  /* Parameters. */
  blosc2_cparams *cp = NULL;
  blosc2_dparams *dp = NULL;
  CHECK_EQ_INT(blosc2_schunk_get_cparams(sc, &cp), 0);
  CHECK_EQ_INT(blosc2_schunk_get_dparams(sc, &dp), 0);
  CHECK_EQ_INT(cp->typesize, 4);
  CHECK_EQ_INT(cp->clevel, 5);
  CHECK(cp->schunk == (void *)sc);
  CHECK_EQ_INT(dp->nthreads, 1);
  free(cp);
  free(dp);

  /* Lazy chunks read from disk are malloc'ed; chunks of memory storages are not. */
  uint8_t *lz;
  bool needs_free;
  int lzlen = blosc2_schunk_get_lazychunk(sc, 1, &lz, &needs_free);
  CHECK(lzlen > 0);
  CHECK_EQ_INT(needs_free, urlpath != NULL);
  {
    /* Whatever the storage, the super-chunk's dctx decodes it (reading the
       blocks from disk for a lazy chunk) to what decompress_chunk gives. */
    int32_t viactx[CHUNK_ITEMS], direct[CHUNK_ITEMS];
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 1, direct, sizeof(direct)), sizeof(direct));
    memset(viactx, 0, sizeof(viactx));
    CHECK_EQ_INT(blosc2_decompress_ctx(sc->dctx, lz, lzlen, viactx, sizeof(viactx)), sizeof(viactx));
    CHECK(memcmp(viactx, direct, sizeof(direct)) == 0);
    int32_t few[3];
    CHECK_EQ_INT(blosc2_getitem_ctx(sc->dctx, lz, lzlen, 500, 3, few, sizeof(few)), sizeof(few));
    CHECK(memcmp(few, direct + 500, sizeof(few)) == 0);
    if (urlpath != NULL) CHECK(lz[31] & 0x08);
  }
  if (needs_free) free(lz);
  uint8_t *rc;
  int rclen = blosc2_schunk_get_chunk(sc, 1, &rc, &needs_free);
  CHECK(rclen > 0);
  if (urlpath == NULL) CHECK(!needs_free);
  if (needs_free) free(rc);

  CHECK_EQ_INT(blosc2_schunk_lock(sc), 0);
  CHECK_EQ_INT(blosc2_schunk_unlock(sc), 0);
  CHECK_EQ_INT(blosc2_schunk_refresh(sc), 0);
  CHECK(blosc2_schunk_frame_len(sc) > sc->cbytes);

  /* Serialize and read back: copy and borrow. */
  uint8_t *cframe;
  bool cframe_free;
  int64_t flen = blosc2_schunk_to_buffer(sc, &cframe, &cframe_free);
  CHECK(flen > 0);
  CHECK_EQ_INT(flen, blosc2_schunk_frame_len(sc));
  if (contiguous && urlpath == NULL) {
    /* An in-memory frame hands out its own buffer, as the reference does. */
    CHECK(!cframe_free);
    uint8_t *again_ptr;
    bool again_free;
    CHECK_EQ_INT(blosc2_schunk_to_buffer(sc, &again_ptr, &again_free), flen);
    CHECK(again_ptr == cframe && !again_free);
    uint8_t *own = malloc((size_t)flen);
    memcpy(own, cframe, (size_t)flen);
    cframe = own; /* the tests below hand the buffer over to free() */
  } else {
    CHECK(cframe_free);
  }
  blosc2_schunk *copy = blosc2_schunk_from_buffer(cframe, flen, true);
  blosc2_schunk *borrow = blosc2_schunk_from_buffer(cframe, flen, false);
  CHECK(copy != NULL && borrow != NULL);
  if (copy && borrow) {
    CHECK(copy->frame == NULL);   /* a copy is an in-memory chunk list */
    CHECK(borrow->frame != NULL); /* a borrow is an in-memory frame */
    int order[4] = {3, 2, 3, 0};
    for (int i = 0; i < 4; i++) {
      if (i == 0 || i == 1) continue; /* chunks 0 and 1 were patched above */
      check_chunk_is(copy, i, order[i]);
      check_chunk_is(borrow, i, order[i]);
    }
    CHECK_EQ_INT(copy->nmetalayers, BLOSC2_MAX_METALAYERS);
    CHECK_EQ_INT(borrow->nvlmetalayers, 2);
    CHECK_EQ_INT(blosc2_meta_exists(borrow, "meta15"), 15);
  }
  blosc2_schunk_free(copy);
  blosc2_schunk_free(borrow);
  /* The borrowed buffer is still ours: it opens again after the borrow was freed. */
  blosc2_schunk *again = blosc2_schunk_from_buffer(cframe, flen, false);
  CHECK(again != NULL);
  blosc2_schunk_avoid_cframe_free(again, false); /* hands cframe over */
  blosc2_schunk_free(again);                      /* frees cframe */
  CHECK(blosc2_schunk_from_buffer(NULL, 100, true) == NULL);

  /* to_file / open */
  const char *fpath = "test_schunk_api_out.b2frame";
  int64_t written = blosc2_schunk_to_file(sc, fpath);
  CHECK_EQ_INT(written, flen);
  blosc2_schunk *opened = blosc2_schunk_open(fpath);
  CHECK(opened != NULL);
  if (opened) {
    check_fields(opened, 4);
    check_chunk_is(opened, 2, 3);
    CHECK_EQ_INT(blosc2_meta_exists(opened, "meta12"), 12);
    CHECK_EQ_INT(blosc2_vlmeta_exists(opened, "vl2"), 1);
    check_vl_entry(opened, 1, "vl2", "z"); /* filled when read from a file */
    CHECK(strcmp(opened->storage->urlpath, fpath) == 0);
    blosc2_schunk_free(opened);
  }
  blosc2_remove_urlpath(fpath);

  /* copy to another storage */
  blosc2_storage mem = BLOSC2_STORAGE_DEFAULTS;
  blosc2_schunk *dup = blosc2_schunk_copy(sc, &mem);
  CHECK(dup != NULL);
  if (dup) {
    check_fields(dup, 4);
    check_chunk_is(dup, 2, 3);
    blosc2_schunk_free(dup);
  }

  /* Bad input. */
  uint8_t *dummy;
  CHECK_EQ_INT(blosc2_schunk_get_chunk(sc, 99, &dummy, &needs_free), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_schunk_get_chunk(sc, -1, &dummy, &needs_free), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_schunk_get_lazychunk(sc, 4, &dummy, &needs_free), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 4, data, (int32_t)sizeof(data)),
               BLOSC2_ERROR_INVALID_PARAM);
  CHECK(blosc2_schunk_decompress_chunk(sc, 0, data, 10) < 0);
  CHECK_EQ_INT(blosc2_schunk_delete_chunk(sc, 4), BLOSC2_ERROR_INVALID_PARAM);
  uint8_t *tmp = chunk_copy(sc, 0, &len);
  CHECK_EQ_INT(blosc2_schunk_insert_chunk(sc, 6, tmp, true), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_schunk_update_chunk(sc, 4, tmp, true), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_schunk_update_chunk(sc, -1, tmp, true), BLOSC2_ERROR_INVALID_PARAM);
  free(tmp);
  CHECK(blosc2_schunk_append_chunk(sc, NULL, true) < 0);
  CHECK(blosc2_schunk_append_buffer(sc, NULL, 100) < 0);
  int64_t badorder[4] = {0, 0, 1, 2};
  CHECK_EQ_INT(blosc2_schunk_reorder_offsets(sc, badorder), BLOSC2_ERROR_DATA);
  int64_t outside[4] = {0, 1, 2, 4};
  CHECK_EQ_INT(blosc2_schunk_reorder_offsets(sc, outside), BLOSC2_ERROR_DATA);
  check_fields(sc, 4);

  CHECK_EQ_INT(blosc2_schunk_free(sc), 0);

  /* Reopen what is on disk. */
  if (urlpath) {
    blosc2_schunk *re = blosc2_schunk_open(urlpath);
    CHECK(re != NULL);
    if (re) {
      check_fields(re, 4);
      CHECK_EQ_INT(re->storage->contiguous, contiguous);
      check_chunk_is(re, 2, 3);
      CHECK_EQ_INT(re->nmetalayers, BLOSC2_MAX_METALAYERS);
      CHECK_EQ_INT(re->nvlmetalayers, 2);
      blosc2_schunk_free(re);
    }
    /* Two handles on one frame: the reader sees the writer's chunk after a refresh. */
    blosc2_schunk *w = blosc2_schunk_open(urlpath);
    blosc2_schunk *r = blosc2_schunk_open(urlpath);
    CHECK(w != NULL && r != NULL);
    if (w && r) {
      fill_chunk(data, 9);
      CHECK_EQ_INT(blosc2_schunk_append_buffer(w, data, (int32_t)sizeof(data)), 5);
      CHECK_EQ_INT(r->nchunks, 4);
      CHECK_EQ_INT(blosc2_schunk_refresh(r), 1);
      CHECK_EQ_INT(r->nchunks, 5);
      CHECK_EQ_INT(r->nbytes, 5 * CHUNK_ITEMS * 4);
      check_chunk_is(r, 4, 9);
      CHECK_EQ_INT(blosc2_schunk_refresh(r), 0);
    }
    blosc2_schunk_free(w);
    blosc2_schunk_free(r);
    CHECK_EQ_INT(blosc2_remove_urlpath(urlpath), 0);
    struct stat st;
    CHECK(stat(urlpath, &st) != 0);
  }
}

static void special_fills(void) {
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 8;
  blosc2_storage storage = {.contiguous = true, .cparams = &cparams};
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  CHECK_EQ_INT(blosc2_schunk_fill_special(sc, 10000, BLOSC2_SPECIAL_NAN, 8000), 10);
  CHECK_EQ_INT(sc->nchunks, 10);
  CHECK_EQ_INT(sc->nbytes, 80000);
  CHECK(sc->cbytes < 1000);
  double buf[1000];
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 9, buf, sizeof(buf)), 8000);
  CHECK(isnan(buf[0]) && isnan(buf[999]));
  /* Not empty any more. */
  CHECK(blosc2_schunk_fill_special(sc, 10, BLOSC2_SPECIAL_ZERO, 8000) < 0);
  blosc2_schunk_free(sc);

  storage.contiguous = false;
  sc = blosc2_schunk_new(&storage);
  CHECK_EQ_INT(blosc2_schunk_fill_special(sc, 1500, BLOSC2_SPECIAL_ZERO, 8000), 2);
  CHECK_EQ_INT(sc->nbytes, 12000);
  memset(buf, 0xff, sizeof(buf));
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 1, buf, sizeof(buf)), 4000);
  CHECK(buf[0] == 0.0 && buf[499] == 0.0);
  blosc2_schunk_free(sc);

  /* A zero chunk appended to a frame file becomes a special offset: no data
     is stored for it, and it reads back as zeros. */
  const char *zpath = "test_schunk_api_zeros.b2frame";
  blosc2_remove_urlpath(zpath);
  blosc2_storage fstorage = {.contiguous = true, .urlpath = (char *)zpath, .cparams = &cparams};
  sc = blosc2_schunk_new(&fstorage);
  double ones[1000];
  for (int i = 0; i < 1000; i++) ones[i] = 1.0;
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, ones, sizeof(ones)), 1);
  int64_t cbytes_before = sc->cbytes;
  uint8_t zchunk[BLOSC_EXTENDED_HEADER_LENGTH + 8];
  int zlen = blosc2_chunk_zeros(cparams, sizeof(ones), zchunk, sizeof(zchunk));
  CHECK(zlen > 0);
  CHECK_EQ_INT(blosc2_schunk_append_chunk(sc, zchunk, true), 2);
  CHECK_EQ_INT(sc->nbytes, 2 * (int64_t)sizeof(ones));
  CHECK_EQ_INT(sc->cbytes, cbytes_before);
  int64_t *offs = blosc2_frame_get_offsets(sc);
  CHECK(offs != NULL && offs[0] >= 0 && offs[1] < 0);
  free(offs);
  memset(buf, 0xff, sizeof(buf));
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 1, buf, sizeof(buf)), 8000);
  CHECK(buf[0] == 0.0 && buf[999] == 0.0);
  uint8_t *zc;
  bool zfree;
  int zc_len = blosc2_schunk_get_chunk(sc, 1, &zc, &zfree);
  CHECK(zc_len > 0 && zc_len <= (int)sizeof(zchunk));
  if (zfree) free(zc);
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(zpath);

  sc = blosc2_schunk_new(&storage);
  CHECK_EQ_INT(blosc2_schunk_fill_special(sc, 10, 99, 8000), BLOSC2_ERROR_INVALID_PARAM);
  CHECK(blosc2_schunk_fill_special(sc, 10, BLOSC2_SPECIAL_ZERO, 12) < 0);
  blosc2_schunk_free(sc);
}

static void append_file_and_offsets(void) {
  const char *path = "test_schunk_api_multi.bin";
  blosc2_remove_urlpath(path);
  FILE *f = fopen(path, "wb");
  fputs("some prefix bytes that are not a frame", f);
  fclose(f);
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 4;
  blosc2_storage storage = {.contiguous = true, .cparams = &cparams};
  blosc2_schunk *a = blosc2_schunk_new(&storage);
  blosc2_schunk *b = blosc2_schunk_new(&storage);
  int32_t data[CHUNK_ITEMS];
  fill_chunk(data, 1);
  blosc2_schunk_append_buffer(a, data, sizeof(data));
  fill_chunk(data, 2);
  blosc2_schunk_append_buffer(b, data, sizeof(data));
  blosc2_schunk_append_buffer(b, data, sizeof(data));
  int64_t off_a = blosc2_schunk_append_file(a, path);
  int64_t off_b = blosc2_schunk_append_file(b, path);
  CHECK_EQ_INT(off_a, strlen("some prefix bytes that are not a frame"));
  CHECK_EQ_INT(off_b, off_a + blosc2_schunk_frame_len(a));
  blosc2_schunk *ra = blosc2_schunk_open_offset(path, off_a);
  blosc2_schunk *rb = blosc2_schunk_open_offset(path, off_b);
  CHECK(ra != NULL && rb != NULL);
  if (ra && rb) {
    CHECK_EQ_INT(ra->nchunks, 1);
    CHECK_EQ_INT(rb->nchunks, 2);
    check_chunk_is(ra, 0, 1);
    check_chunk_is(rb, 1, 2);
  }
  blosc2_schunk_free(ra);
  blosc2_schunk_free(rb);
  CHECK(blosc2_schunk_open_offset(path, 0) == NULL);  /* the prefix is not a frame */
  CHECK(blosc2_schunk_open_offset(path, -5) == NULL);
  CHECK(blosc2_schunk_open(path) == NULL);

  /* A truncated frame and a missing path are rejected. */
  uint8_t *cf;
  bool nf;
  int64_t len = blosc2_schunk_to_buffer(b, &cf, &nf);
  CHECK(!nf); /* b is an in-memory frame: its own buffer */
  CHECK(blosc2_schunk_from_buffer(cf, len - 10, true) == NULL);
  CHECK(blosc2_schunk_from_buffer(cf, 20, false) == NULL);
  f = fopen("test_schunk_api_trunc.b2frame", "wb");
  fwrite(cf, 1, (size_t)(len / 2), f);
  fclose(f);
  CHECK(blosc2_schunk_open("test_schunk_api_trunc.b2frame") == NULL);
  CHECK(blosc2_schunk_open("test_schunk_api_does_not_exist.b2frame") == NULL);
  CHECK(blosc2_schunk_open(NULL) == NULL);
  if (nf) free(cf);

  /* Rename and remove. */
  CHECK_EQ_INT(blosc2_rename_urlpath("test_schunk_api_trunc.b2frame", "test_schunk_api_moved.b2frame"), 0);
  struct stat st;
  CHECK(stat("test_schunk_api_moved.b2frame", &st) == 0);
  CHECK_EQ_INT(blosc2_rename_urlpath("test_schunk_api_trunc.b2frame", "x"), BLOSC2_ERROR_FAILURE);
  CHECK_EQ_INT(blosc2_remove_urlpath("test_schunk_api_moved.b2frame"), 0);
  CHECK_EQ_INT(blosc2_remove_urlpath("test_schunk_api_moved.b2frame"), 0);
  CHECK_EQ_INT(blosc2_remove_urlpath(NULL), 0);
  CHECK_EQ_INT(blosc2_remove_dir("test_schunk_api_no_dir"), BLOSC2_ERROR_NOT_FOUND);
  blosc2_remove_urlpath(path);

  /* Packed super-chunks round-trip. */
  uint8_t *packed = NULL;
  int64_t plen = b2nd_packed_pack(b, &packed);
  CHECK(plen > 96);
  blosc2_schunk *up = b2nd_packed_unpack(packed, plen);
  CHECK(up != NULL);
  if (up) {
    CHECK_EQ_INT(up->nchunks, 2);
    check_chunk_is(up, 1, 2);
    blosc2_schunk_free(up);
  }
  CHECK(b2nd_packed_unpack(packed, 50) == NULL);
  CHECK(b2nd_packed_unpack(NULL, 50) == NULL);
  /* The data-starts block (at 96) listing chunk 0 twice is refused. */
  memcpy(packed + 96 + 8, packed + 96, 8);
  CHECK(b2nd_packed_unpack(packed, plen) == NULL);
  free(packed);

  blosc2_schunk_free(a);
  blosc2_schunk_free(b);
}

static void index_utils(void) {
  int64_t shape[3] = {4, 5, 6};
  int64_t idx[3];
  blosc2_unidim_to_multidim(3, shape, 2 * 30 + 3 * 6 + 4, idx);
  CHECK_EQ_INT(idx[0], 2);
  CHECK_EQ_INT(idx[1], 3);
  CHECK_EQ_INT(idx[2], 4);
  int64_t strides[3] = {30, 6, 1};
  int64_t lin = -1;
  blosc2_multidim_to_unidim(idx, 3, strides, &lin);
  CHECK_EQ_INT(lin, 82);

  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 4;
  blosc2_storage storage = {.cparams = &cparams};
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  int64_t start = 1500, stop = 5000, *chunks = NULL;
  CHECK_EQ_INT(blosc2_get_slice_nchunks(sc, &start, &stop, &chunks), 0);
  int32_t data[CHUNK_ITEMS];
  for (int k = 0; k < 6; k++) {
    fill_chunk(data, k);
    blosc2_schunk_append_buffer(sc, data, sizeof(data));
  }
  CHECK_EQ_INT(blosc2_get_slice_nchunks(sc, &start, &stop, &chunks), 4);
  if (chunks) {
    CHECK_EQ_INT(chunks[0], 1);
    CHECK_EQ_INT(chunks[3], 4);
    free(chunks);
  }
  CHECK_EQ_INT(blosc2_get_slice_nchunks(NULL, &start, &stop, &chunks), BLOSC2_ERROR_NULL_POINTER);
  blosc2_schunk_free(sc);

  /* NULL super-chunks give errors, not crashes. */
  CHECK_EQ_INT(blosc2_schunk_append_buffer(NULL, data, 4), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_delete_chunk(NULL, 0), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_schunk_free(NULL), 0);
  CHECK(blosc2_schunk_copy(NULL, NULL) == NULL);
  CHECK_EQ_INT(blosc2_schunk_frame_len(NULL), BLOSC2_ERROR_NULL_POINTER);
  CHECK(blosc2_frame_get_offsets(NULL) == NULL);
}

/* Prefilter: doubles every int32 and adds 1000 * the chunk number. */
static int double_items(blosc2_prefilter_params *p) {
  const int32_t *in = (const int32_t *)p->input;
  int32_t *out = (int32_t *)p->output;
  for (int i = 0; i < p->output_size / 4; i++) out[i] = in[i] * 2 + (int32_t)p->nchunk * 1000;
  return 0;
}

/* Postfilter: adds 1 to every int32. */
static int add_one(blosc2_postfilter_params *p) {
  const int32_t *in = (const int32_t *)p->input;
  int32_t *out = (int32_t *)p->output;
  for (int i = 0; i < p->size / 4; i++) out[i] = in[i] + 1;
  return 0;
}

/* Filters given in the storage run on append_buffer / decompress_chunk. */
static void filter_callbacks(void) {
  blosc2_prefilter_params pre = {0};
  blosc2_postfilter_params post = {0};
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 4;
  cparams.prefilter = double_items;
  cparams.preparams = &pre;
  blosc2_dparams dparams = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage storage = {.contiguous = false, .cparams = &cparams, .dparams = &dparams};
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  int32_t src[CHUNK_ITEMS], dst[CHUNK_ITEMS];
  for (int i = 0; i < CHUNK_ITEMS; i++) src[i] = i;
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, src, sizeof(src)), 1);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, src, sizeof(src)), 2);
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 1, dst, sizeof(dst)), sizeof(dst));
  CHECK_EQ_INT(dst[0], 1000);
  CHECK_EQ_INT(dst[999], 999 * 2 + 1000);
  /* Round trip through a buffer: a new super-chunk with a postfilter. */
  uint8_t *cframe;
  bool needs_free;
  int64_t len = blosc2_schunk_to_buffer(sc, &cframe, &needs_free);
  blosc2_schunk_free(sc);
  dparams.postfilter = add_one;
  dparams.postparams = &post;
  blosc2_storage st2 = {.contiguous = true, .dparams = &dparams, .cparams = NULL};
  cparams.prefilter = NULL;
  cparams.preparams = NULL;
  st2.cparams = &cparams;
  blosc2_schunk *sc2 = blosc2_schunk_new(&st2);
  blosc2_schunk *from = blosc2_schunk_from_buffer(cframe, len, true);
  uint8_t *chunk;
  int clen = blosc2_schunk_get_chunk(from, 0, &chunk, &needs_free);
  CHECK(clen > 0);
  CHECK_EQ_INT(blosc2_schunk_append_chunk(sc2, chunk, true), 1);
  if (needs_free) free(chunk);
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc2, 0, dst, sizeof(dst)), sizeof(dst));
  CHECK_EQ_INT(dst[0], 1);
  CHECK_EQ_INT(dst[10], 21);
  blosc2_schunk_free(from);
  blosc2_schunk_free(sc2);
  free(cframe);
}

/* The contexts in sc->cctx / sc->dctx compress with the super-chunk's
   parameters; their chunks append like any other. */
static void contexts(void) {
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 4;
  cparams.clevel = 7;
  blosc2_storage storage = {.contiguous = true, .cparams = &cparams};
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  CHECK(sc->cctx != NULL && sc->dctx != NULL);
  blosc2_cparams cp;
  CHECK_EQ_INT(blosc2_ctx_get_cparams(sc->cctx, &cp), 0);
  CHECK_EQ_INT(cp.typesize, 4);
  CHECK_EQ_INT(cp.clevel, 7);
  int32_t src[CHUNK_ITEMS], dst[CHUNK_ITEMS];
  fill_chunk(src, 7);
  uint8_t cbuf[CHUNK_ITEMS * 4 + BLOSC2_MAX_OVERHEAD];
  int csize = blosc2_compress_ctx(sc->cctx, src, (int32_t)sizeof(src), cbuf, (int32_t)sizeof(cbuf));
  CHECK(csize > 0);
  CHECK_EQ_INT(blosc2_decompress_ctx(sc->dctx, cbuf, csize, dst, (int32_t)sizeof(dst)), sizeof(dst));
  CHECK(memcmp(src, dst, sizeof(src)) == 0);
  CHECK_EQ_INT(blosc2_schunk_append_chunk(sc, cbuf, true), 1);
  check_chunk_is(sc, 0, 7);
  blosc2_schunk_free(sc);
}

int main(void) {
  blosc2_init();
  contexts();
  filter_callbacks();
  run_storage(false, NULL);
  run_storage(true, NULL);
  run_storage(true, "test_schunk_api_cont.b2frame");
  run_storage(false, "test_schunk_api_sparse.b2frame");
  special_fills();
  append_file_and_offsets();
  index_utils();
  blosc2_destroy();
  return test_finish("test_schunk_api");
}
