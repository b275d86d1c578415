/* The chunk API through C: contexts, round trips over codecs x filters x
 * typesizes, getitem, masks, VL blocks, special chunks, threads and the
 * error codes of bad input. */
#include "test_common.h"

#include <math.h>
#include <stdint.h>

#define N_ITEMS 20000

/* Compressible but not trivial data: a slow ramp with some noise. */
static void fill(uint8_t *buf, size_t n, unsigned seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    buf[i] = (uint8_t)((i / 64) + ((i % 16 == 0) ? ((x >> 16) & 3) : 0));
  }
}

static int round_trip(blosc2_cparams cp, const uint8_t *src, int32_t n, int32_t *csize) {
  int ok = 1;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  uint8_t *chunk = malloc((size_t)n + BLOSC2_MAX_OVERHEAD);
  uint8_t *out = malloc((size_t)n);
  if (cctx == NULL || dctx == NULL) {
    fprintf(stderr, "context creation failed (codec %d, typesize %d)\n", cp.compcode, cp.typesize);
    ok = 0;
    goto done;
  }
  int c = blosc2_compress_ctx(cctx, src, n, chunk, n + BLOSC2_MAX_OVERHEAD);
  if (c <= 0) {
    fprintf(stderr, "compress failed %d (codec %d, typesize %d, filters %d,%d)\n", c, cp.compcode,
            cp.typesize, cp.filters[4], cp.filters[5]);
    ok = 0;
    goto done;
  }
  *csize = c;
  int d = blosc2_decompress_ctx(dctx, chunk, c, out, n);
  if (d != n || memcmp(out, src, (size_t)n) != 0) {
    /* trunc_prec is lossy: only sizes are compared for it */
    int lossy = 0;
    for (int i = 0; i < BLOSC2_MAX_FILTERS; i++) lossy |= cp.filters[i] == BLOSC_TRUNC_PREC;
    if (!(lossy && d == n)) {
      fprintf(stderr, "round trip failed: d=%d (codec %d, typesize %d)\n", d, cp.compcode, cp.typesize);
      ok = 0;
    }
  }
  /* blosc2_decompress (no context) agrees */
  memset(out, 0, (size_t)n);
  if (blosc2_decompress(chunk, c, out, n) != n) ok = 0;
done:
  blosc2_free_ctx(cctx);
  blosc2_free_ctx(dctx);
  free(chunk);
  free(out);
  return ok;
}

static void test_matrix(void) {
  const int codecs[] = {BLOSC_BLOSCLZ, BLOSC_LZ4, BLOSC_LZ4HC, BLOSC_ZLIB, BLOSC_ZSTD};
  const int typesizes[] = {1, 2, 4, 8, 16};
  const int filters[][2] = {{0, 0}, {0, BLOSC_SHUFFLE}, {0, BLOSC_BITSHUFFLE},
                            {BLOSC_DELTA, BLOSC_SHUFFLE}, {BLOSC_TRUNC_PREC, BLOSC_SHUFFLE}};
  int32_t n = N_ITEMS * 8;
  uint8_t *src = malloc((size_t)n);
  fill(src, (size_t)n, 1);
  int runs = 0, failures = 0;
  for (size_t c = 0; c < 5; c++) {
    for (size_t t = 0; t < 5; t++) {
      for (size_t f = 0; f < 5; f++) {
        /* trunc_prec only applies to 4- and 8-byte floats */
        if (filters[f][0] == BLOSC_TRUNC_PREC && typesizes[t] != 4 && typesizes[t] != 8) continue;
        blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.compcode = (uint8_t)codecs[c];
        cp.typesize = typesizes[t];
        cp.clevel = 5;
        cp.filters[4] = (uint8_t)filters[f][0];
        cp.filters[5] = (uint8_t)filters[f][1];
        if (filters[f][0] == BLOSC_TRUNC_PREC) cp.filters_meta[4] = 10;
        int32_t csize = 0;
        runs++;
        if (!round_trip(cp, src, n, &csize)) failures++;
        else if (filters[f][0] != BLOSC_TRUNC_PREC && csize >= n) {
          fprintf(stderr, "no gain: codec %d ts %d filters %d,%d: %d\n", codecs[c], typesizes[t],
                  filters[f][0], filters[f][1], csize);
          failures++;
        }
      }
    }
  }
  CHECK(runs > 100);
  CHECK_EQ_INT(failures, 0);
  free(src);
}

static void test_small_dest_and_errors(void) {
  int32_t n = 4096 * 4;
  uint8_t *src = malloc((size_t)n);
  uint8_t *chunk = malloc((size_t)n + 64);
  uint8_t *out = malloc((size_t)n);
  /* incompressible bytes */
  uint32_t x = 7;
  for (int32_t i = 0; i < n; i++) { x = x * 1664525u + 1013904223u; src[i] = (uint8_t)(x >> 24); }
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  /* dest too small -> 0 */
  CHECK_EQ_INT(blosc2_compress_ctx(cctx, src, n, chunk, n / 2), 0);
  /* dest smaller than the overhead -> MAX_BUFSIZE_EXCEEDED */
  CHECK_EQ_INT(blosc2_compress_ctx(cctx, src, n, chunk, 16), BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED);
  /* dest of exactly n + overhead: the blocks stored raw do not fit with
     their offsets, so the chunk is a plain copy (the memcpyed flag) */
  int c = blosc2_compress_ctx(cctx, src, n, chunk, n + BLOSC2_MAX_OVERHEAD);
  CHECK_EQ_INT(c, n + BLOSC2_MAX_OVERHEAD);
  CHECK(chunk[BLOSC2_CHUNK_FLAGS] & BLOSC_MEMCPYED);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n), n);
  CHECK(memcmp(out, src, (size_t)n) == 0);
  /* nbytes larger than dest */
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n - 1), BLOSC2_ERROR_WRITE_BUFFER);
  CHECK_EQ_INT(blosc2_decompress(chunk, c, out, n - 1), BLOSC2_ERROR_WRITE_BUFFER);
  /* NULL pointers */
  CHECK_EQ_INT(blosc2_compress_ctx(NULL, src, n, chunk, n + 64), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_compress_ctx(cctx, NULL, n, chunk, n + 64), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_compress_ctx(cctx, src, n, NULL, n + 64), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_decompress_ctx(NULL, chunk, c, out, n), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, NULL, c, out, n), BLOSC2_ERROR_NULL_POINTER);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, NULL, n), BLOSC2_ERROR_NULL_POINTER);
  /* negative sizes */
  CHECK_EQ_INT(blosc2_compress_ctx(cctx, src, -1, chunk, n + 64), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, -1, out, n), BLOSC2_ERROR_READ_BUFFER);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, -1), BLOSC2_ERROR_WRITE_BUFFER);
  /* contexts used for the wrong direction */
  CHECK_EQ_INT(blosc2_decompress_ctx(cctx, chunk, c, out, n), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_compress_ctx(dctx, src, n, chunk, n + 64), BLOSC2_ERROR_INVALID_PARAM);
  /* truncated chunks */
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, 10, out, n), BLOSC2_ERROR_READ_BUFFER);
  CHECK(blosc2_decompress_ctx(dctx, chunk, c - 1, out, n) < 0);

  /* a compressed (not memcpyed) chunk, truncated and corrupted */
  fill(src, (size_t)n, 3);
  c = blosc2_compress_ctx(cctx, src, n, chunk, n + 64);
  CHECK(c > 32 && c < n);
  CHECK(blosc2_decompress_ctx(dctx, chunk, c / 2, out, n) < 0);
  uint8_t *bad = malloc((size_t)c);
  memcpy(bad, chunk, (size_t)c);
  bad[12] = 0xff; bad[13] = 0xff; bad[14] = 0xff; bad[15] = 0x7f; /* cbytes way too large */
  CHECK(blosc2_decompress_ctx(dctx, bad, c, out, n) < 0);
  memcpy(bad, chunk, (size_t)c);
  bad[8] = 0; bad[9] = 0; bad[10] = 0; bad[11] = 0; /* blocksize 0 */
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, bad, c, out, n), BLOSC2_ERROR_INVALID_HEADER);
  memcpy(bad, chunk, (size_t)c);
  for (int i = 48; i < c; i += 7) bad[i] ^= 0x5a; /* garbage streams: an error or wrong bytes, never a crash */
  (void)blosc2_decompress_ctx(dctx, bad, c, out, n);
  free(bad);

  /* invalid parameters refuse to create a context */
  blosc2_cparams badcp = BLOSC2_CPARAMS_DEFAULTS;
  badcp.clevel = 10;
  CHECK(blosc2_create_cctx(badcp) == NULL);
  badcp = BLOSC2_CPARAMS_DEFAULTS;
  badcp.filters[0] = 20; /* undefined filter id */
  CHECK(blosc2_create_cctx(badcp) == NULL);
  badcp = BLOSC2_CPARAMS_DEFAULTS;
  badcp.tuner_id = 200; /* not registered */
  CHECK(blosc2_create_cctx(badcp) == NULL);

  /* ctx_get_cparams / dparams */
  blosc2_cparams got;
  CHECK_EQ_INT(blosc2_ctx_get_cparams(cctx, &got), 0);
  CHECK_EQ_INT(got.typesize, 4);
  CHECK_EQ_INT(got.compcode, BLOSC_BLOSCLZ);
  CHECK_EQ_INT(got.filters[5], BLOSC_SHUFFLE);
  {
    /* the block size used last, as the chunk header records it */
    int32_t hn, hc, hb;
    CHECK_EQ_INT(blosc2_cbuffer_sizes(chunk, &hn, &hc, &hb), 0);
    CHECK(hb > 0);
    CHECK_EQ_INT(got.blocksize, hb);
  }
  CHECK_EQ_INT(blosc2_ctx_get_cparams(NULL, &got), BLOSC2_ERROR_NULL_POINTER);
  blosc2_dparams gotd;
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n), n);
  CHECK_EQ_INT(blosc2_ctx_get_dparams(dctx, &gotd), 0);
  CHECK_EQ_INT(gotd.nthreads, 1);
  CHECK_EQ_INT(gotd.typesize, 4);

  blosc2_free_ctx(cctx);
  blosc2_free_ctx(dctx);
  blosc2_free_ctx(NULL);
  free(src);
  free(chunk);
  free(out);
}

static void test_getitem_and_mask(void) {
  int32_t nitems = 50000;
  int32_t n = nitems * 4;
  int32_t *src = malloc((size_t)n);
  for (int32_t i = 0; i < nitems; i++) src[i] = i * 3;
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.blocksize = 16384;
  cp.filters[4] = BLOSC_DELTA;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  uint8_t *chunk = malloc((size_t)n + 64);
  int c = blosc2_compress_ctx(cctx, src, n, chunk, n + 64);
  CHECK(c > 0);
  int32_t got[300];
  /* ranges inside a block, across blocks, at the end */
  const int starts[] = {0, 4000, 4090, 12345, nitems - 300};
  for (size_t k = 0; k < 5; k++) {
    memset(got, 0, sizeof(got));
    CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, c, starts[k], 300, got, (int32_t)sizeof(got)), 1200);
    CHECK(memcmp(got, src + starts[k], 1200) == 0);
    memset(got, 0, sizeof(got));
    CHECK_EQ_INT(blosc2_getitem(chunk, c, starts[k], 300, got, (int32_t)sizeof(got)), 1200);
    CHECK(memcmp(got, src + starts[k], 1200) == 0);
    memset(got, 0, sizeof(got));
    CHECK_EQ_INT(blosc2_getitem_bytes_ctx(dctx, chunk, c, starts[k] * 4, 1200, got, (int32_t)sizeof(got)), 1200);
    CHECK(memcmp(got, src + starts[k], 1200) == 0);
  }
  /* getitem on a compression context works too */
  CHECK_EQ_INT(blosc2_getitem_ctx(cctx, chunk, c, 10, 5, got, 20), 20);
  CHECK(memcmp(got, src + 10, 20) == 0);
  /* getitem errors */
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, c, 0, 0, got, 4), 0);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, c, 0, -1, got, 4), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, c, -1, 1, got, 4), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, c, nitems - 1, 2, got, 8), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, c, 0, 10, got, 39), BLOSC2_ERROR_WRITE_BUFFER);
  CHECK_EQ_INT(blosc2_getitem_bytes_ctx(dctx, chunk, c, 2, 8, got, 40), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_getitem_bytes_ctx(dctx, chunk, c, 0, 6, got, 40), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, 8, 0, 1, got, 4), BLOSC2_ERROR_READ_BUFFER);

  /* maskout: masked blocks are left untouched, the others decoded */
  int32_t nbytes, cbytes, blocksize;
  CHECK_EQ_INT(blosc2_cbuffer_sizes(chunk, &nbytes, &cbytes, &blocksize), 0);
  CHECK_EQ_INT(nbytes, n);
  CHECK_EQ_INT(cbytes, c);
  CHECK_EQ_INT(blocksize, 16384);
  int nblocks = (n + blocksize - 1) / blocksize;
  bool *mask = calloc((size_t)nblocks, sizeof(bool));
  for (int b = 0; b < nblocks; b += 2) mask[b] = true;
  uint8_t *out = malloc((size_t)n);
  memset(out, 0xee, (size_t)n);
  CHECK_EQ_INT(blosc2_set_maskout(dctx, mask, nblocks), 0);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n), n);
  for (int b = 0; b < nblocks; b++) {
    int32_t off = b * blocksize;
    int32_t len = (off + blocksize > n) ? n - off : blocksize;
    if (mask[b]) {
      CHECK(out[off] == 0xee && out[off + len - 1] == 0xee);
    } else {
      CHECK(memcmp(out + off, (uint8_t *)src + off, (size_t)len) == 0);
    }
  }
  /* the mask applies once */
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n), n);
  CHECK(memcmp(out, src, (size_t)n) == 0);
  /* a mask of the wrong length is an error at decompression */
  CHECK_EQ_INT(blosc2_set_maskout(dctx, mask, nblocks - 1), 0);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n), BLOSC2_ERROR_DATA);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n), n);
  CHECK_EQ_INT(blosc2_set_maskout(NULL, mask, nblocks), BLOSC2_ERROR_NULL_POINTER);
  free(mask);
  free(out);
  free(chunk);
  free(src);
  blosc2_free_ctx(cctx);
  blosc2_free_ctx(dctx);
}

static void test_vl_blocks(void) {
  const int32_t sizes[] = {1000, 1, 70000, 333};
  const void *srcs[4];
  uint8_t *bufs[4];
  int32_t total = 0;
  for (int i = 0; i < 4; i++) {
    bufs[i] = malloc((size_t)sizes[i]);
    fill(bufs[i], (size_t)sizes[i], (unsigned)i + 10);
    srcs[i] = bufs[i];
    total += sizes[i];
  }
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  cp.compcode = BLOSC_ZSTD;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  int32_t destsize = total + 4 * 64 + 64;
  uint8_t *chunk = malloc((size_t)destsize);
  int c = blosc2_vlcompress_ctx(cctx, srcs, sizes, 4, chunk, destsize);
  CHECK(c > 0);
  blosc2_cparams got;
  CHECK_EQ_INT(blosc2_ctx_get_cparams(cctx, &got), 0);
  CHECK_EQ_INT(got.blocksize, 70000); /* the largest block */
  int32_t nb = 0;
  CHECK_EQ_INT(blosc2_vlchunk_get_nblocks(chunk, c, &nb), 0);
  CHECK_EQ_INT(nb, 4);
  void *dests[8] = {0};
  int32_t dsizes[8] = {0};
  CHECK_EQ_INT(blosc2_vldecompress_ctx(dctx, chunk, c, dests, dsizes, 8), 4);
  for (int i = 0; i < 4; i++) {
    CHECK_EQ_INT(dsizes[i], sizes[i]);
    CHECK(dests[i] != NULL && memcmp(dests[i], bufs[i], (size_t)sizes[i]) == 0);
    free(dests[i]);
  }
  uint8_t *one = NULL;
  int32_t onesize = 0;
  CHECK_EQ_INT(blosc2_vldecompress_block_ctx(dctx, chunk, c, 2, &one, &onesize), sizes[2]);
  CHECK_EQ_INT(onesize, sizes[2]);
  CHECK(one != NULL && memcmp(one, bufs[2], (size_t)sizes[2]) == 0);
  free(one);
  /* errors */
  CHECK_EQ_INT(blosc2_vldecompress_block_ctx(dctx, chunk, c, 4, &one, &onesize), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_vldecompress_block_ctx(dctx, chunk, c, -1, &one, &onesize), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_vldecompress_ctx(dctx, chunk, c, dests, dsizes, 3), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_vlchunk_get_nblocks(NULL, c, &nb), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, c, 0, 1, &nb, 4), BLOSC2_ERROR_INVALID_PARAM);
  const int32_t badsizes[] = {10, 0};
  CHECK_EQ_INT(blosc2_vlcompress_ctx(cctx, srcs, badsizes, 2, chunk, destsize), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_vlcompress_ctx(cctx, srcs, sizes, 0, chunk, destsize), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_vlcompress_ctx(cctx, NULL, sizes, 4, chunk, destsize), BLOSC2_ERROR_INVALID_PARAM);
  /* a regular chunk is not a VL-block chunk */
  uint8_t plain[200];
  int pc = blosc2_compress_ctx(cctx, bufs[0], 100, plain, 200);
  CHECK(pc > 0);
  CHECK_EQ_INT(blosc2_vlchunk_get_nblocks(plain, pc, &nb), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_vldecompress_ctx(dctx, plain, pc, dests, dsizes, 8), BLOSC2_ERROR_INVALID_PARAM);
  free(chunk);
  for (int i = 0; i < 4; i++) free(bufs[i]);
  blosc2_free_ctx(cctx);
  blosc2_free_ctx(dctx);
}

static void test_specials(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  int32_t n = 8000 * 8;
  uint8_t chunk[64];
  double *out = malloc((size_t)n);
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);

  cp.typesize = 8;
  memset(out, 0x55, (size_t)n);
  CHECK_EQ_INT(blosc2_chunk_zeros(cp, n, chunk, sizeof(chunk)), BLOSC_EXTENDED_HEADER_LENGTH);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, 32, out, n), n);
  int ok = 1;
  for (int i = 0; i < n / 8; i++) ok &= out[i] == 0.0;
  CHECK(ok);
  int32_t nbytes, cbytes, bs;
  CHECK_EQ_INT(blosc2_cbuffer_sizes(chunk, &nbytes, &cbytes, &bs), 0);
  CHECK_EQ_INT(nbytes, n);
  CHECK_EQ_INT(cbytes, 32);

  CHECK_EQ_INT(blosc2_chunk_nans(cp, n, chunk, sizeof(chunk)), BLOSC_EXTENDED_HEADER_LENGTH);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, 32, out, n), n);
  ok = 1;
  for (int i = 0; i < n / 8; i++) ok &= isnan(out[i]);
  CHECK(ok);

  cp.typesize = 4;
  float *fout = (float *)out;
  CHECK_EQ_INT(blosc2_chunk_nans(cp, n, chunk, sizeof(chunk)), BLOSC_EXTENDED_HEADER_LENGTH);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, 32, out, n), n);
  ok = 1;
  for (int i = 0; i < n / 4; i++) ok &= isnan(fout[i]);
  CHECK(ok);

  cp.typesize = 8;
  double val = 3.25;
  CHECK_EQ_INT(blosc2_chunk_repeatval(cp, n, chunk, sizeof(chunk), &val), BLOSC_EXTENDED_HEADER_LENGTH + 8);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, 40, out, n), n);
  ok = 1;
  for (int i = 0; i < n / 8; i++) ok &= out[i] == 3.25;
  CHECK(ok);
  double part[3];
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, 40, 100, 3, part, sizeof(part)), 24);
  CHECK(part[0] == 3.25 && part[2] == 3.25);

  /* uninit: decodes without error; the bytes are unspecified */
  CHECK_EQ_INT(blosc2_chunk_uninit(cp, n, chunk, sizeof(chunk)), BLOSC_EXTENDED_HEADER_LENGTH);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, 32, out, n), n);
  CHECK_EQ_INT(blosc2_cbuffer_sizes(chunk, &nbytes, &cbytes, &bs), 0);
  CHECK_EQ_INT(nbytes, n);

  /* errors: dest too small, nbytes not a multiple of typesize */
  CHECK_EQ_INT(blosc2_chunk_zeros(cp, n, chunk, 31), BLOSC2_ERROR_DATA);
  CHECK_EQ_INT(blosc2_chunk_repeatval(cp, n, chunk, 39, &val), BLOSC2_ERROR_DATA);
  CHECK_EQ_INT(blosc2_chunk_nans(cp, n + 1, chunk, sizeof(chunk)), BLOSC2_ERROR_DATA);
  CHECK_EQ_INT(blosc2_chunk_uninit(cp, n + 3, chunk, sizeof(chunk)), BLOSC2_ERROR_DATA);
  CHECK_EQ_INT(blosc2_chunk_repeatval(cp, n, chunk, sizeof(chunk), NULL), BLOSC2_ERROR_NULL_POINTER);
  free(out);
  blosc2_free_ctx(dctx);
}

static void test_threads_identical(void) {
  int32_t n = 1 << 20;
  uint8_t *src = malloc((size_t)n);
  fill(src, (size_t)n, 5);
  const int codecs[] = {BLOSC_BLOSCLZ, BLOSC_LZ4, BLOSC_ZSTD, BLOSC_ZLIB};
  for (int k = 0; k < 4; k++) {
    uint8_t *c1 = malloc((size_t)n + 64), *c2 = malloc((size_t)n + 64);
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 4;
    cp.compcode = (uint8_t)codecs[k];
    cp.blocksize = 32 * 1024;
    cp.nthreads = 1;
    blosc2_context *a = blosc2_create_cctx(cp);
    cp.nthreads = 2;
    blosc2_context *b = blosc2_create_cctx(cp);
    int s1 = blosc2_compress_ctx(a, src, n, c1, n + 64);
    int s2 = blosc2_compress_ctx(b, src, n, c2, n + 64);
    CHECK(s1 > 0);
    CHECK_EQ_INT(s1, s2);
    CHECK(memcmp(c1, c2, (size_t)s1) == 0);
    blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
    dp.nthreads = 2;
    blosc2_context *d = blosc2_create_dctx(dp);
    uint8_t *out = malloc((size_t)n);
    CHECK_EQ_INT(blosc2_decompress_ctx(d, c1, s1, out, n), n);
    CHECK(memcmp(out, src, (size_t)n) == 0);
    free(out);
    blosc2_free_ctx(a);
    blosc2_free_ctx(b);
    blosc2_free_ctx(d);
    free(c1);
    free(c2);
  }
  free(src);
}

static void test_header_queries(void) {
  uint8_t src[4000];
  fill(src, sizeof(src), 9);
  uint8_t chunk[4100];
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = BLOSC_LZ4;
  cp.typesize = 2;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int c = blosc2_compress_ctx(cctx, src, sizeof(src), chunk, sizeof(chunk));
  CHECK(c > 0);
  int version = -1, versionlz = -1;
  blosc2_cbuffer_versions(chunk, &version, &versionlz);
  CHECK_EQ_INT(version, BLOSC2_VERSION_FORMAT_STABLE);
  CHECK_EQ_INT(versionlz, 1);
  const char *lib = blosc2_cbuffer_complib(chunk);
  CHECK(lib != NULL && strcmp(lib, "LZ4") == 0);
  uint8_t junk[32] = {0};
  CHECK(blosc2_cbuffer_complib(junk) == NULL);
  blosc2_cbuffer_versions(junk, &version, &versionlz);
  CHECK_EQ_INT(version, 0);
  int32_t nb = 7, cb = 7, bs = 7;
  CHECK(blosc2_cbuffer_sizes(junk, &nb, &cb, &bs) < 0);
  CHECK(nb == 0 && cb == 0 && bs == 0);

  /* names */
  const char *name = NULL;
  CHECK_EQ_INT(blosc2_compcode_to_compname(BLOSC_ZLIB, &name), BLOSC_ZLIB);
  CHECK(name != NULL && strcmp(name, "zlib") == 0);
  CHECK_EQ_INT(blosc2_compcode_to_compname(99, &name), -1);
  CHECK(name == NULL);
  CHECK_EQ_INT(blosc2_compname_to_compcode("lz4hc"), BLOSC_LZ4HC);
  CHECK_EQ_INT(blosc2_compname_to_compcode("zstd"), BLOSC_ZSTD);
  CHECK_EQ_INT(blosc2_compname_to_compcode("nope"), -1);
  CHECK(strcmp(blosc2_list_compressors(), "blosclz,lz4,lz4hc,zlib,zstd") == 0);
  char *complib = NULL, *ver = NULL;
  CHECK_EQ_INT(blosc2_get_complib_info("lz4hc", &complib, &ver), BLOSC_LZ4_LIB);
  CHECK(complib && strcmp(complib, "LZ4") == 0);
  CHECK(ver && ver[0] >= '1' && ver[0] <= '9');
  free(complib);
  free(ver);
  CHECK_EQ_INT(blosc2_get_complib_info("blosclz", &complib, &ver), BLOSC_BLOSCLZ_LIB);
  CHECK(strcmp(complib, "BloscLZ") == 0);
  free(complib);
  free(ver);
  CHECK_EQ_INT(blosc2_get_complib_info("zlib", &complib, &ver), BLOSC_ZLIB_LIB);
  CHECK(strcmp(complib, "Zlib") == 0);
  free(complib);
  free(ver);
  /* The codecs the reference registers at init are each a library of their own, named after
     the codec (python-blosc2 asks this to tell which codecs a build has). */
  CHECK_EQ_INT(blosc2_get_complib_info("zfp_acc", &complib, &ver), 33);
  CHECK(strcmp(complib, "zfp_acc") == 0 && strcmp(ver, "unknown") == 0);
  free(complib);
  free(ver);
  CHECK_EQ_INT(blosc2_get_complib_info("ndlz", &complib, &ver), 32);
  CHECK(strcmp(complib, "ndlz") == 0);
  free(complib);
  free(ver);
  CHECK_EQ_INT(blosc2_get_complib_info("unknown", &complib, &ver), BLOSC2_ERROR_NOT_FOUND);
  blosc2_free_ctx(cctx);
}

static void test_shuffles(void) {
  uint8_t src[1003], a[1003], b[1003];
  fill(src, sizeof(src), 11);
  for (int ts = 1; ts <= 16; ts *= 2) {
    CHECK_EQ_INT(blosc2_shuffle(ts, sizeof(src), src, a), (int)sizeof(src));
    CHECK_EQ_INT(blosc2_unshuffle(ts, sizeof(src), a, b), (int)sizeof(src));
    CHECK(memcmp(src, b, sizeof(src)) == 0);
    CHECK_EQ_INT(blosc2_bitshuffle(ts, sizeof(src), src, a), (int)sizeof(src));
    CHECK_EQ_INT(blosc2_bitunshuffle(ts, sizeof(src), a, b), (int)sizeof(src));
    CHECK(memcmp(src, b, sizeof(src)) == 0);
  }
  /* byte shuffle of 4-byte items puts byte 0 of every item first */
  uint8_t s4[8] = {1, 2, 3, 4, 5, 6, 7, 8}, d4[8];
  CHECK_EQ_INT(blosc2_shuffle(4, 8, s4, d4), 8);
  CHECK(d4[0] == 1 && d4[1] == 5 && d4[2] == 2 && d4[7] == 8);
  CHECK_EQ_INT(blosc2_shuffle(0, 8, s4, d4), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_bitshuffle(300, 8, s4, d4), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_unshuffle(4, -8, s4, d4), BLOSC2_ERROR_INVALID_PARAM);
}

int main(void) {
  blosc2_init();
  test_matrix();
  test_small_dest_and_errors();
  test_getitem_and_mask();
  test_vl_blocks();
  test_specials();
  test_threads_identical();
  test_header_queries();
  test_shuffles();
  blosc2_destroy();
  return test_finish("test_chunk_api");
}
