/* VL-block chunks read lazily: blosc2_vldecompress_block_ctx on a lazy
   chunk (blosc2_schunk_get_lazychunk of an
   on-disk frame, contiguous or sparse), through a context whose dparams name
   the super-chunk (its own dctx, or a new one), with and without a
   dictionary. Each block is read from the frame on its own. A lazy chunk
   cut before the end of its trailer is BLOSC2_ERROR_READ_BUFFER, a block
   size too small to hold the block's length BLOSC2_ERROR_INVALID_HEADER, a
   context naming no super-chunk BLOSC2_ERROR_INVALID_PARAM. */
#include "test_common.h"

#include <stdint.h>

enum { NBLOCKS = 24, MAXLEN = 600 };

static char text[NBLOCKS][MAXLEN];
static const void *srcs[NBLOCKS];
static int32_t sizes[NBLOCKS];

/* Blocks of different lengths, alike enough for a dictionary to pay. */
static void make_blocks(void) {
  for (int i = 0; i < NBLOCKS; i++) {
    int n = 0;
    for (int line = 0; line <= i % 5 + 2; line++) {
      n += snprintf(text[i] + n, (size_t)(MAXLEN - n),
                    "station=%02d reading=%d unit=kPa status=%s; ", i, line * 37 + i,
                    (i + line) % 3 ? "nominal" : "check");
    }
    sizes[i] = n;
    srcs[i] = text[i];
  }
}

static blosc2_schunk *frame_of_vl_chunks(const char *path, bool contiguous, int compcode,
                                         bool dict) {
  blosc2_remove_urlpath(path);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  cp.compcode = (uint8_t)compcode;
  cp.use_dict = dict;
  cp.nthreads = 1;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage storage = {.contiguous = contiguous, .urlpath = (char *)path,
                            .cparams = &cp, .dparams = &dp};
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  if (sc == NULL) return NULL;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int32_t cap = NBLOCKS * MAXLEN + BLOSC2_MAX_OVERHEAD + NBLOCKS * 64 + BLOSC2_MAXDICTSIZE;
  uint8_t *chunk = malloc((size_t)cap);
  for (int k = 0; k < 2; k++) {
    int cbytes = blosc2_vlcompress_ctx(cctx, srcs, sizes, NBLOCKS, chunk, cap);
    CHECK(cbytes > 0);
    if (dict) CHECK(chunk[BLOSC2_CHUNK_BLOSC2_FLAGS] & BLOSC2_USEDICT);
    CHECK_EQ_INT(blosc2_schunk_append_chunk(sc, chunk, true), k + 1);
  }
  free(chunk);
  blosc2_free_ctx(cctx);
  return sc;
}

/* Every third block of every lazy chunk through `dctx`, last first. */
static void read_lazily(blosc2_schunk *sc, blosc2_context *dctx, const char *what) {
  for (int64_t n = 0; n < sc->nchunks; n++) {
    uint8_t *lazy;
    bool needs_free;
    int len = blosc2_schunk_get_lazychunk(sc, n, &lazy, &needs_free);
    CHECK(len > 0);
    if (len <= 0) continue;
    CHECK(lazy[BLOSC2_CHUNK_BLOSC2_FLAGS] & 0x08); /* lazy */
    int32_t nb = -1;
    CHECK_EQ_INT(blosc2_vlchunk_get_nblocks(lazy, len, &nb), 0);
    CHECK_EQ_INT(nb, NBLOCKS);
    for (int i = NBLOCKS - 1; i >= 0; i -= 3) {
      uint8_t *blk = NULL;
      int32_t blen = -1;
      int rc = blosc2_vldecompress_block_ctx(dctx, lazy, len, i, &blk, &blen);
      if (rc != sizes[i]) fprintf(stderr, "%s: chunk %d block %d: rc %d\n", what, (int)n, i, rc);
      CHECK_EQ_INT(rc, sizes[i]);
      CHECK_EQ_INT(blen, sizes[i]);
      if (blk != NULL) {
        CHECK(memcmp(blk, srcs[i], (size_t)sizes[i]) == 0);
        free(blk);
      }
    }
    uint8_t *blk = NULL;
    int32_t blen;
    CHECK_EQ_INT(blosc2_vldecompress_block_ctx(dctx, lazy, len, NBLOCKS, &blk, &blen),
                 BLOSC2_ERROR_INVALID_PARAM);
    if (needs_free) free(lazy);
  }
}

static void corrupt_trailers(blosc2_schunk *sc) {
  uint8_t *lazy;
  bool needs_free;
  int len = blosc2_schunk_get_lazychunk(sc, 1, &lazy, &needs_free);
  CHECK(len > 0);
  if (len <= 0) return;
  uint8_t *blk = NULL;
  int32_t blen;
  /* Cut inside the last block's compressed size in the trailer. */
  CHECK_EQ_INT(blosc2_vldecompress_block_ctx(sc->dctx, lazy, len - 1, 0, &blk, &blen),
               BLOSC2_ERROR_READ_BUFFER);
  /* Block 2 said to take 3 bytes: too few for its own length. */
  int32_t at = BLOSC_EXTENDED_HEADER_LENGTH + 4 * NBLOCKS + 4 + 8 + 4 * 2;
  int32_t three = 3;
  memcpy(lazy + at, &three, 4);
  CHECK_EQ_INT(blosc2_vldecompress_block_ctx(sc->dctx, lazy, len, 2, &blk, &blen),
               BLOSC2_ERROR_INVALID_HEADER);
  /* The other blocks still read. */
  CHECK_EQ_INT(blosc2_vldecompress_block_ctx(sc->dctx, lazy, len, 3, &blk, &blen), sizes[3]);
  free(blk);
  /* No super-chunk to read the blocks from. */
  blosc2_context *bare = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  blk = NULL;
  CHECK_EQ_INT(blosc2_vldecompress_block_ctx(bare, lazy, len, 3, &blk, &blen),
               BLOSC2_ERROR_INVALID_PARAM);
  CHECK(blk == NULL);
  blosc2_free_ctx(bare);
  if (needs_free) free(lazy);
}

int main(void) {
  blosc2_init();
  make_blocks();
  struct {
    bool contiguous;
    int compcode;
    bool dict;
  } cases[] = {{true, BLOSC_BLOSCLZ, false}, {false, BLOSC_BLOSCLZ, false},
               {true, BLOSC_LZ4, true},     {false, BLOSC_LZ4, true},
               {true, BLOSC_ZSTD, true},    {false, BLOSC_ZSTD, true}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    const char *path = cases[c].contiguous ? "test_vl_lazy.b2frame" : "test_vl_lazy_s.b2frame";
    blosc2_schunk *sc = frame_of_vl_chunks(path, cases[c].contiguous, cases[c].compcode,
                                           cases[c].dict);
    CHECK(sc != NULL);
    if (sc == NULL) continue;
    char what[64];
    snprintf(what, sizeof what, "case %d, own dctx", (int)c);
    read_lazily(sc, sc->dctx, what);
    blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.schunk = sc;
    blosc2_context *dctx = blosc2_create_dctx(dp);
    snprintf(what, sizeof what, "case %d, new dctx", (int)c);
    read_lazily(sc, dctx, what);
    blosc2_free_ctx(dctx);
    if (c < 2) corrupt_trailers(sc);
    blosc2_schunk_free(sc);
    blosc2_remove_urlpath(path);
  }
  blosc2_destroy();
  return test_finish("test_vl_lazy");
}
