/* The public struct fields are live state both ways, as in the reference (docs/live-structs.md):
 * what the library writes there is current after every call, and what a caller may write there
 * is what the next call uses. Each case here is one a client of C-Blosc2 relies on. */
#include "test_common.h"

#include <stdint.h>

#define N 1000

static void fill(int32_t *buf, int32_t start) {
  for (int i = 0; i < N; i++) buf[i] = start + i;
}

/* python-blosc2's expression prefilters read the chunks of in-memory inputs at sc->data[n]. */
static void test_chunk_pointers_of_an_in_memory_schunk(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.cparams = &cp;
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK(sc != NULL && sc->frame == NULL);
  CHECK(sc->data == NULL && sc->data_len == 0);
  int32_t buf[N], out[N];
  for (int k = 0; k < 3; k++) {
    fill(buf, 100 * k);
    CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, sizeof buf), k + 1);
  }
  /* The reference grows its pointer array 4 KiB at a time. */
  CHECK_EQ_INT(sc->data_len, 4096);
  for (int k = 0; k < 3; k++) {
    int32_t nbytes, cbytes, blocksize;
    CHECK_EQ_INT(blosc2_cbuffer_sizes(sc->data[k], &nbytes, &cbytes, &blocksize), 0);
    CHECK_EQ_INT(nbytes, sizeof buf);
    CHECK_EQ_INT(blosc2_decompress(sc->data[k], cbytes, out, sizeof out), sizeof out);
    CHECK_EQ_INT(out[7], 100 * k + 7);
  }
  /* They follow deletions and updates. */
  CHECK_EQ_INT(blosc2_schunk_delete_chunk(sc, 0), 2);
  int32_t cbytes;
  CHECK_EQ_INT(blosc2_cbuffer_sizes(sc->data[0], NULL, &cbytes, NULL), 0);
  CHECK_EQ_INT(blosc2_decompress(sc->data[0], cbytes, out, sizeof out), sizeof out);
  CHECK_EQ_INT(out[0], 100);
  blosc2_schunk_free(sc);

  /* A frame has no such array, as in the reference. */
  st.contiguous = true;
  sc = blosc2_schunk_new(&st);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, sizeof buf), 1);
  CHECK(sc->frame != NULL && sc->data == NULL && sc->data_len == 0);
  blosc2_schunk_free(sc);
}

/* python-blosc2's SChunk(chunksize=...) sets sc->chunksize right after creating it. */
static void test_chunksize_written_by_the_caller(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.cparams = &cp;
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK_EQ_INT(sc->chunksize, -1);
  sc->chunksize = 8192;
  blosc2_cparams *got = NULL;
  CHECK_EQ_INT(blosc2_schunk_get_cparams(sc, &got), 0);
  free(got);
  CHECK_EQ_INT(sc->chunksize, 8192);
  static uint8_t data[3 * 8192];
  for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7);
  /* A first chunk larger than the size set is refused, as in the reference. */
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, data, 9000), BLOSC2_ERROR_CHUNK_APPEND);
  CHECK_EQ_INT(sc->nchunks, 0);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, data, 8192), 1);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, data + 8192, 277), 2);
  CHECK_EQ_INT(sc->chunksize, 8192);
  CHECK_EQ_INT(sc->nbytes, 8192 + 277);
  uint8_t back[8192 + 277];
  CHECK_EQ_INT(blosc2_schunk_get_slice_buffer(sc, 0, 8192 + 277, back), 0);
  CHECK(memcmp(back, data, sizeof back) == 0);
  blosc2_schunk_free(sc);

  /* In a frame file the header records it from the first write on. */
  blosc2_remove_urlpath("live_chunksize.b2frame");
  st.contiguous = true;
  st.urlpath = "live_chunksize.b2frame";
  sc = blosc2_schunk_new(&st);
  sc->chunksize = 4096;
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, data, 1000), 1);
  blosc2_schunk_free(sc);
  sc = blosc2_schunk_open("live_chunksize.b2frame");
  CHECK(sc != NULL && sc->chunksize == 4096 && sc->nbytes == 1000);
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath("live_chunksize.b2frame");
}

static int postfilter_calls = 0;
static int64_t postfilter_nchunk = -2;
static int minus_one(blosc2_postfilter_params *p) {
  postfilter_calls++;
  postfilter_nchunk = p->nchunk;
  for (int i = 0; i < p->size / 4; i++) ((int32_t *)p->output)[i] = ((const int32_t *)p->input)[i] - 1;
  return 0;
}

/* python-blosc2's SChunk.postfilter: edit sc->storage->dparams, then swap in a new sc->dctx. */
static void test_dctx_replaced_by_the_caller(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.cparams = &cp;
  st.dparams = &dp;
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  int32_t buf[N], out[N];
  fill(buf, 0);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, sizeof buf), 1);
  fill(buf, N);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, sizeof buf), 2);
  CHECK(sc->storage->dparams != &dp); /* the super-chunk's own copy */
  blosc2_dparams *d = sc->storage->dparams;
  blosc2_postfilter_params pp;
  memset(&pp, 0, sizeof pp);
  d->postfilter = minus_one;
  d->postparams = &pp;
  blosc2_free_ctx(sc->dctx);
  sc->dctx = blosc2_create_dctx(*d);
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 1, out, sizeof out), sizeof out);
  CHECK_EQ_INT(postfilter_calls, 1);
  CHECK_EQ_INT(postfilter_nchunk, 1);
  CHECK_EQ_INT(out[0], N - 1);
  postfilter_calls = 0;
  CHECK_EQ_INT(blosc2_schunk_get_slice_buffer(sc, 0, N, out), 0);
  CHECK(postfilter_calls >= 1);
  CHECK_EQ_INT(out[5], 4);
  /* What the caller wrote to the storage's dparams stays. */
  CHECK(sc->storage->dparams->postparams == &pp && sc->storage->dparams->postfilter == minus_one);
  /* Removing it again, as python-blosc2 does, goes back to plain reads. */
  sc->storage->dparams->postfilter = NULL;
  sc->storage->dparams->postparams = NULL;
  blosc2_free_ctx(sc->dctx);
  sc->dctx = blosc2_create_dctx(*sc->storage->dparams);
  postfilter_calls = 0;
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 0, out, sizeof out), sizeof out);
  CHECK_EQ_INT(postfilter_calls, 0);
  CHECK_EQ_INT(out[5], 5);
  /* A NULL context left there is freed by nobody but the caller. */
  blosc2_free_ctx(sc->dctx);
  sc->dctx = NULL;
  CHECK_EQ_INT(blosc2_schunk_free(sc), 0);
}

static int64_t prefilter_nchunks[4];
static int prefilter_calls = 0;
static int plus_ten(blosc2_prefilter_params *p) {
  if (prefilter_calls < 4) prefilter_nchunks[prefilter_calls] = p->nchunk;
  prefilter_calls++;
  for (int i = 0; i < p->output_size / 4; i++) ((int32_t *)p->output)[i] = ((const int32_t *)p->input)[i] + 10;
  return 0;
}

/* python-blosc2's prefilters: a new sc->cctx made from the edited storage cparams. */
static void test_cctx_replaced_by_the_caller(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.nthreads = 1;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.cparams = &cp;
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  int32_t buf[N], out[N];
  fill(buf, 0);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, sizeof buf), 1);
  blosc2_prefilter_params pre;
  memset(&pre, 0, sizeof pre);
  sc->storage->cparams->prefilter = plus_ten;
  sc->storage->cparams->preparams = &pre;
  blosc2_free_ctx(sc->cctx);
  sc->cctx = blosc2_create_cctx(*sc->storage->cparams);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, sizeof buf), 2);
  CHECK(prefilter_calls >= 1);
  CHECK_EQ_INT(prefilter_nchunks[0], 1);
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 0, out, sizeof out), sizeof out);
  CHECK_EQ_INT(out[3], 3);
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 1, out, sizeof out), sizeof out);
  CHECK_EQ_INT(out[3], 13);
  /* A caller compressing with sc->cctx itself sets current_nchunk first. */
  prefilter_calls = 0;
  sc->current_nchunk = 7;
  uint8_t chunk[sizeof buf + BLOSC2_MAX_OVERHEAD];
  CHECK(blosc2_compress_ctx(sc->cctx, buf, sizeof buf, chunk, sizeof chunk) > 0);
  CHECK_EQ_INT(prefilter_nchunks[0], 7);
  blosc2_schunk_free(sc);
}

/* python-blosc2's update_cparams writes the settings to the public fields. */
static void test_settings_written_by_the_caller(void) {
  blosc2_remove_urlpath("live_settings.b2frame");
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_storage st = {.contiguous = true, .urlpath = "live_settings.b2frame", .cparams = &cp};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  sc->compcode = BLOSC_ZSTD;
  sc->clevel = 7;
  sc->filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_BITSHUFFLE;
  blosc2_cparams *got = NULL;
  CHECK_EQ_INT(blosc2_schunk_get_cparams(sc, &got), 0);
  CHECK(got->compcode == BLOSC_ZSTD && got->clevel == 7 &&
        got->filters[BLOSC2_MAX_FILTERS - 1] == BLOSC_BITSHUFFLE && got->schunk == sc);
  free(got);
  int32_t buf[N];
  fill(buf, 0);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, sizeof buf), 1);
  CHECK(sc->compcode == BLOSC_ZSTD && sc->clevel == 7);
  blosc2_schunk_free(sc);
  /* The frame header records them. */
  sc = blosc2_schunk_open("live_settings.b2frame");
  CHECK(sc != NULL && sc->compcode == BLOSC_ZSTD && sc->clevel == 7 &&
        sc->filters[BLOSC2_MAX_FILTERS - 1] == BLOSC_BITSHUFFLE);
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath("live_settings.b2frame");
}

/* C-Blosc2's b2nd/test_b2nd_deserialize_meta_security edits an entry's content_len. */
static void test_metalayer_entries_are_what_meta_get_reads(void) {
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  uint8_t content[5] = {1, 2, 3, 4, 5};
  CHECK_EQ_INT(blosc2_meta_add(sc, "m", content, 5), 0);
  blosc2_metalayer *m = sc->metalayers[0];
  CHECK(m != NULL && strcmp(m->name, "m") == 0 && m->content_len == 5);
  int32_t saved = m->content_len;
  m->content_len = -1;
  uint8_t *got = NULL;
  int32_t len = 0;
  CHECK_EQ_INT(blosc2_meta_get(sc, "m", &got, &len), BLOSC2_ERROR_DATA);
  CHECK(got == NULL && len == 0);
  m->content_len = 3;
  CHECK_EQ_INT(blosc2_meta_get(sc, "m", &got, &len), 0);
  CHECK(len == 3 && got != NULL && got[2] == 3);
  free(got);
  m->content_len = saved;
  CHECK_EQ_INT(blosc2_meta_exists(sc, "m"), 0);
  CHECK_EQ_INT(blosc2_meta_exists(sc, "nope"), BLOSC2_ERROR_NOT_FOUND);
  blosc2_schunk_free(sc);
}

/* A user codec reading its super-chunk's vlmetalayer while it compresses (test_urcodecs). */
static blosc2_schunk *codec_schunk = NULL;
static int codec_vlmeta_rc = -100;
static int reading_encoder(const uint8_t *in, int32_t ilen, uint8_t *out, int32_t olen, uint8_t meta,
                           blosc2_cparams *cparams, const void *chunk) {
  (void)in; (void)ilen; (void)out; (void)olen; (void)meta; (void)chunk;
  uint8_t *content = NULL;
  int32_t clen = 0;
  codec_vlmeta_rc = blosc2_vlmeta_get((blosc2_schunk *)cparams->schunk, "param", &content, &clen);
  if (codec_vlmeta_rc >= 0 && (clen != 1 || content[0] != 42)) codec_vlmeta_rc = -99;
  free(content);
  return 0; /* not compressible: stored as a copy */
}
static int failing_decoder(const uint8_t *in, int32_t ilen, uint8_t *out, int32_t olen, uint8_t meta,
                           blosc2_dparams *dparams, const void *chunk) {
  (void)in; (void)ilen; (void)out; (void)olen; (void)meta; (void)dparams; (void)chunk;
  return -1;
}

static void test_vlmeta_read_from_a_codec(void) {
  blosc2_codec codec = {.compcode = 251, .version = 1, .complib = 251, .compname = "vlreader",
                        .encoder = reading_encoder, .decoder = failing_decoder};
  CHECK_EQ_INT(blosc2_register_codec(&codec), 0);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = 251;
  cp.typesize = 4;
  cp.nthreads = 1;
  blosc2_storage st = {.cparams = &cp, .contiguous = true};
  codec_schunk = blosc2_schunk_new(&st);
  uint8_t v = 42;
  CHECK_EQ_INT(blosc2_vlmeta_add(codec_schunk, "param", &v, 1, NULL), 0);
  int32_t buf[N];
  fill(buf, 0);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(codec_schunk, buf, sizeof buf), 1);
  CHECK_EQ_INT(codec_vlmeta_rc, 0);
  blosc2_schunk_free(codec_schunk);
}

/* python-blosc2 registers filters from a stack struct whose name it never sets. */
static int copy_forward(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta,
                        blosc2_cparams *cparams, uint8_t id) {
  (void)meta; (void)cparams; (void)id;
  memcpy(dest, src, (size_t)size);
  return 0;
}
static int copy_backward(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta,
                         blosc2_dparams *dparams, uint8_t id) {
  (void)meta; (void)dparams; (void)id;
  memcpy(dest, src, (size_t)size);
  return 0;
}

static void test_filter_registered_without_a_name(void) {
  blosc2_filter f;
  memset(&f, 0, sizeof f);
  f.id = 240;
  f.name = NULL;
  f.forward = copy_forward;
  f.backward = copy_backward;
  CHECK_EQ_INT(blosc2_register_filter(&f), 0);
  CHECK_EQ_INT(blosc2_register_filter(&f), 0); /* again, as python's tests do */
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.filters[4] = 240;
  int32_t buf[N], out[N];
  fill(buf, 3);
  uint8_t chunk[sizeof buf + BLOSC2_MAX_OVERHEAD];
  blosc2_context *c = blosc2_create_cctx(cp);
  int csize = blosc2_compress_ctx(c, buf, sizeof buf, chunk, sizeof chunk);
  CHECK(csize > 0);
  blosc2_free_ctx(c);
  blosc2_context *d = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  CHECK_EQ_INT(blosc2_decompress_ctx(d, chunk, csize, out, sizeof out), sizeof out);
  CHECK(memcmp(buf, out, sizeof buf) == 0);
  blosc2_free_ctx(d);
}

/* frame_simple.c and frame_offset.c open "file:///name": the reference drops the prefix. */
static void test_file_url_prefix(void) {
  blosc2_remove_urlpath("live_url.b2frame");
  blosc2_storage st = {.contiguous = true, .urlpath = "file:///live_url.b2frame"};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK(sc != NULL);
  int32_t buf[N];
  fill(buf, 0);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, buf, sizeof buf), 1);
  CHECK(strcmp(sc->storage->urlpath, "live_url.b2frame") == 0);
  blosc2_schunk_free(sc);
  sc = blosc2_schunk_open("file:///live_url.b2frame");
  CHECK(sc != NULL && sc->nchunks == 1);
  if (sc) {
    CHECK(strcmp(sc->storage->urlpath, "file:///live_url.b2frame") == 0);
    blosc2_schunk_free(sc);
  }
  sc = blosc2_schunk_open("live_url.b2frame");
  CHECK(sc != NULL);
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath("live_url.b2frame");
}

/* test_schunk_min_header_chunk: a chunk with only the 16-byte Blosc1 header. */
static void test_min_header_chunk(void) {
  uint8_t chunk[BLOSC_MIN_HEADER_LENGTH];
  memset(chunk, 0, sizeof chunk);
  chunk[0] = BLOSC2_VERSION_FORMAT;
  chunk[1] = 1;
  chunk[2] = BLOSC_MEMCPYED;
  chunk[3] = 1;
  chunk[BLOSC2_CHUNK_BLOCKSIZE] = 1;
  chunk[BLOSC2_CHUNK_CBYTES] = BLOSC_MIN_HEADER_LENGTH;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK_EQ_INT(blosc2_schunk_append_chunk(sc, chunk, true), 1);
  CHECK_EQ_INT(blosc2_schunk_insert_chunk(sc, 0, chunk, true), 2);
  CHECK_EQ_INT(blosc2_schunk_update_chunk(sc, 1, chunk, true), 2);
  CHECK_EQ_INT(sc->nbytes, 0);
  blosc2_schunk_free(sc);
}

/* A frame whose header says nbytes 0 while its index lists chunks is refused, not opened empty. */
static void test_frame_with_nbytes_zero_and_chunks(void) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_storage st = {.contiguous = true, .cparams = &cp};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  int32_t buf[N];
  for (int k = 0; k < 4; k++) {
    fill(buf, k);
    blosc2_schunk_append_buffer(sc, buf, sizeof buf);
  }
  uint8_t *frame = NULL;
  bool needs_free = false;
  int64_t len = blosc2_schunk_to_buffer(sc, &frame, &needs_free);
  CHECK(len > 0);
  uint8_t *bad = malloc((size_t)len);
  memcpy(bad, frame, (size_t)len);
  if (needs_free) free(frame);
  blosc2_schunk_free(sc);
  /* nbytes is the big-endian int64 after the 0xd3 marker at offset 29 (README_CFRAME_FORMAT). */
  CHECK_EQ_INT(bad[29], 0xd3);
  memset(bad + 30, 0, 8);
  blosc2_schunk *opened = blosc2_schunk_from_buffer(bad, len, true);
  CHECK(opened == NULL);
  opened = blosc2_schunk_from_buffer(bad, len, false);
  CHECK(opened == NULL);
  blosc2_schunk_free(opened);
  free(bad);
}

/* Every way of reading a frame agrees on its chunk size, also without chunks. */
static void test_chunksize_of_a_frame_without_chunks(void) {
  int64_t shape[2] = {0, 5};
  int32_t chunkshape[2] = {2, 5}, blockshape[2] = {1, 5};
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_storage st = {.contiguous = true, .cparams = &cp};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 2, shape, chunkshape, blockshape, "<i4", DTYPE_NUMPY_FORMAT, NULL, 0);
  b2nd_array_t *arr = NULL;
  CHECK_EQ_INT(b2nd_empty(ctx, &arr), 0);
  uint8_t *frame = NULL;
  bool needs_free = false;
  int64_t len = blosc2_schunk_to_buffer(arr->sc, &frame, &needs_free);
  CHECK(len > 0);
  blosc2_schunk *viewed = blosc2_schunk_from_buffer(frame, len, false);
  blosc2_schunk *copied = blosc2_schunk_from_buffer(frame, len, true);
  CHECK(viewed != NULL && copied != NULL);
  if (viewed && copied) {
    CHECK_EQ_INT(viewed->chunksize, 40);
    CHECK_EQ_INT(copied->chunksize, viewed->chunksize);
  }
  blosc2_schunk_free(viewed);
  blosc2_schunk_free(copied);
  if (needs_free) free(frame);
  b2nd_free(arr);
  b2nd_free_ctx(ctx);
}

int main(void) {
  blosc2_init();
  test_chunk_pointers_of_an_in_memory_schunk();
  test_chunksize_written_by_the_caller();
  test_dctx_replaced_by_the_caller();
  test_cctx_replaced_by_the_caller();
  test_settings_written_by_the_caller();
  test_metalayer_entries_are_what_meta_get_reads();
  test_vlmeta_read_from_a_codec();
  test_filter_registered_without_a_name();
  test_file_url_prefix();
  test_min_header_chunk();
  test_frame_with_nbytes_zero_and_chunks();
  test_chunksize_of_a_frame_without_chunks();
  blosc2_destroy();
  return test_finish("test_live_fields");
}
