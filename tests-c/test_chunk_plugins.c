/* User codecs, user filters, tuners, prefilters and postfilters through the C API. */
#include "test_common.h"

#include <blosc2/filters-registry.h>
#include <stdint.h>

/* ---- A user codec: halves streams made of byte pairs (and xors them) ------------ */
static int encoder_calls = 0, decoder_calls = 0;
static int seen_meta = -1, seen_typesize = -1;
/* What the plugins receive in their params' codec_params / filter_params / schunk. */
static void *seen_codec_params = NULL, *seen_filter_params = NULL, *seen_dschunk = NULL;

static int xor_encoder(const uint8_t *input, int32_t input_len, uint8_t *output, int32_t output_len,
                       uint8_t meta, blosc2_cparams *cparams, const void *chunk) {
  (void)chunk;
  encoder_calls++;
  seen_meta = meta;
  seen_typesize = cparams->typesize;
  seen_codec_params = cparams->codec_params;
  if (input_len % 2 != 0 || output_len < input_len / 2) return 0;
  for (int32_t i = 0; i < input_len; i += 2) {
    if (input[i] != input[i + 1]) return 0; /* not for us: stored raw */
    output[i / 2] = input[i] ^ 0x5a;
  }
  return input_len / 2;
}

static int xor_decoder(const uint8_t *input, int32_t input_len, uint8_t *output, int32_t output_len,
                       uint8_t meta, blosc2_dparams *dparams, const void *chunk) {
  (void)meta; (void)chunk;
  decoder_calls++;
  seen_dschunk = dparams->schunk;
  if (output_len != 2 * input_len) return BLOSC2_ERROR_WRITE_BUFFER;
  for (int32_t i = 0; i < input_len; i++) output[2 * i] = output[2 * i + 1] = input[i] ^ 0x5a;
  return output_len;
}

/* ---- A user filter: add `meta` to every byte -------------------------------------- */
static int fwd_calls = 0, bwd_calls = 0;

static int add_forward(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta,
                       blosc2_cparams *cparams, uint8_t id) {
  seen_filter_params = cparams->filter_params[4];
  fwd_calls++;
  if (id != 200) return BLOSC2_ERROR_FAILURE;
  for (int32_t i = 0; i < size; i++) dest[i] = (uint8_t)(src[i] + meta);
  return 0;
}

static int add_backward(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta,
                        blosc2_dparams *dparams, uint8_t id) {
  (void)dparams; (void)id;
  bwd_calls++;
  for (int32_t i = 0; i < size; i++) dest[i] = (uint8_t)(src[i] - meta);
  return 0;
}

/* Another forward callback, for a re-registration with different callbacks. */
static int other_forward(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta,
                         blosc2_cparams *cparams, uint8_t id) {
  (void)meta; (void)cparams; (void)id;
  memcpy(dest, src, (size_t)size);
  return 0;
}

static void test_user_codec_and_filter(void) {
  blosc2_codec codec = {0};
  codec.compcode = 180;
  codec.compname = "xor5a";
  codec.complib = 180;
  codec.version = 3;
  codec.encoder = xor_encoder;
  codec.decoder = xor_decoder;
  CHECK_EQ_INT(blosc2_register_codec(&codec), 0);
  CHECK_EQ_INT(blosc2_register_codec(&codec), 0); /* same id and name: no-op */
  blosc2_codec other = codec;
  other.compname = "other";
  CHECK_EQ_INT(blosc2_register_codec(&other), BLOSC2_ERROR_CODEC_PARAM);
  other.compcode = 100;
  CHECK_EQ_INT(blosc2_register_codec(&other), BLOSC2_ERROR_CODEC_PARAM);
  CHECK_EQ_INT(blosc2_register_codec(NULL), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_compname_to_compcode("xor5a"), 180);
  const char *name = NULL;
  CHECK_EQ_INT(blosc2_compcode_to_compname(180, &name), 180);
  CHECK(name != NULL && strcmp(name, "xor5a") == 0);

  blosc2_filter filter = {0};
  filter.id = 200;
  filter.name = "add";
  filter.version = 1;
  filter.forward = add_forward;
  filter.backward = add_backward;
  CHECK_EQ_INT(blosc2_register_filter(&filter), 0);
  blosc2_filter badf = filter;
  badf.id = 100;
  CHECK_EQ_INT(blosc2_register_filter(&badf), BLOSC2_ERROR_FAILURE);
  /* A filter given with both callbacks is known by them, not by its name, which
     python-blosc2 leaves unset (here NULL): the same id again with the same
     callbacks is already registered, with other callbacks it is refused. */
  badf.id = 200;
  badf.name = NULL;
  CHECK_EQ_INT(blosc2_register_filter(&badf), 0);
  badf.forward = other_forward;
  CHECK_EQ_INT(blosc2_register_filter(&badf), BLOSC2_ERROR_FAILURE);
  blosc2_filter unnamed = {0};
  unnamed.id = 201;
  unnamed.forward = add_forward;
  unnamed.backward = add_backward;
  CHECK_EQ_INT(blosc2_register_filter(&unnamed), 0);
  /* Without callbacks the name says which plugin to load, so it is needed. */
  unnamed.id = 202;
  unnamed.forward = NULL;
  unnamed.backward = NULL;
  CHECK_EQ_INT(blosc2_register_filter(&unnamed), BLOSC2_ERROR_INVALID_PARAM);

  int32_t n = 10000 * 4;
  uint8_t *src = malloc((size_t)n), *chunk = malloc((size_t)n + 256), *out = malloc((size_t)n);
  for (int32_t i = 0; i < n; i++) src[i] = (uint8_t)((i / 2) * 7);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.filters[5] = 0; /* keep byte pairs together */
  cp.compcode = 180;
  cp.compcode_meta = 42;
  cp.typesize = 4;
  cp.filters[4] = 200;
  cp.filters_meta[4] = 9;
  int codec_cfg = 1, filter_cfg = 2;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  blosc2_schunk *owner = blosc2_schunk_new(&st);
  cp.codec_params = &codec_cfg;
  cp.filter_params[4] = &filter_cfg;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.schunk = owner;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  blosc2_context *dctx = blosc2_create_dctx(dp);
  CHECK(cctx != NULL && dctx != NULL);
  int c = blosc2_compress_ctx(cctx, src, n, chunk, n + 256);
  CHECK(c > 32 && c < n * 6 / 10); /* the codec halved the streams */
  CHECK(encoder_calls > 0 && fwd_calls > 0);
  CHECK_EQ_INT(seen_meta, 42);
  CHECK_EQ_INT(seen_typesize, 4);
  /* The caller's own parameter pointers reach the plugins, as in the reference. */
  CHECK(seen_codec_params == &codec_cfg);
  CHECK(seen_filter_params == &filter_cfg);
  int version = 0, versionlz = 0;
  blosc2_cbuffer_versions(chunk, &version, &versionlz);
  CHECK_EQ_INT(versionlz, 3); /* the codec's version */
  CHECK_EQ_INT(chunk[22], 180); /* udcompcode */
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n), n);
  CHECK(memcmp(src, out, (size_t)n) == 0);
  CHECK(decoder_calls > 0 && bwd_calls > 0);
  CHECK(seen_dschunk == (void *)owner);
  blosc2_schunk_free(owner);
  blosc2_free_ctx(cctx);
  blosc2_free_ctx(dctx);

  /* an unregistered user codec: the context is refused or compression fails */
  cp.compcode = 190;
  cp.filters[4] = 0;
  cctx = blosc2_create_cctx(cp);
  if (cctx != NULL) {
    CHECK(blosc2_compress_ctx(cctx, src, n, chunk, n + 256) < 0);
    blosc2_free_ctx(cctx);
  }
  free(src);
  free(chunk);
  free(out);
}

/* ---- Prefilter and postfilter ------------------------------------------------------ */
typedef struct {
  int calls;
  int bad;
  int32_t blocksize;
  int64_t total;
} pre_state;

static int my_prefilter(blosc2_prefilter_params *p) {
  pre_state *st = (pre_state *)p->user_data;
  st->calls++;
  if (p->output_typesize != 4 || p->output_offset != p->nblock * st->blocksize || p->nchunk != -1 ||
      p->ctx == NULL || p->ttmp == NULL || p->ttmp_nbytes == 0 || p->output_size <= 0) {
    st->bad++;
  }
  /* output = input * 2 as int32 */
  const int32_t *in = (const int32_t *)p->input;
  int32_t *outp = (int32_t *)p->output;
  for (int32_t i = 0; i < p->output_size / 4; i++) outp[i] = in[i] * 2;
  st->total += p->output_size;
  return 0;
}

static int my_postfilter(blosc2_postfilter_params *p) {
  pre_state *st = (pre_state *)p->user_data;
  st->calls++;
  if (p->typesize != 4 || p->offset != p->nblock * st->blocksize || p->ctx == NULL || p->size <= 0) {
    st->bad++;
  }
  const int32_t *in = (const int32_t *)p->input;
  int32_t *outp = (int32_t *)p->output;
  for (int32_t i = 0; i < p->size / 4; i++) outp[i] = in[i] + 1;
  st->total += p->size;
  return 0;
}

static int failing_postfilter(blosc2_postfilter_params *p) {
  (void)p;
  return -1;
}

static void test_pre_and_postfilters(void) {
  int32_t nitems = 30000, n = nitems * 4;
  int32_t *src = malloc((size_t)n), *out = malloc((size_t)n);
  uint8_t *chunk = malloc((size_t)n + 64);
  for (int32_t i = 0; i < nitems; i++) src[i] = i;

  pre_state pst = {0, 0, 8192, 0};
  blosc2_prefilter_params pparams = {0};
  pparams.user_data = &pst;
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.blocksize = 8192;
  cp.prefilter = my_prefilter;
  cp.preparams = &pparams;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK(cctx != NULL);
  int c = blosc2_compress_ctx(cctx, src, n, chunk, n + 64);
  CHECK(c > 0);
  CHECK_EQ_INT(pst.calls, (n + 8191) / 8192);
  CHECK_EQ_INT(pst.bad, 0);
  CHECK_EQ_INT(pst.total, n);
  blosc2_cparams got;
  CHECK_EQ_INT(blosc2_ctx_get_cparams(cctx, &got), 0);
  CHECK(got.prefilter == my_prefilter);
  CHECK(got.preparams != NULL && got.preparams->user_data == &pst);

  /* the chunk holds the prefiltered data */
  blosc2_context *plain = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  CHECK_EQ_INT(blosc2_decompress_ctx(plain, chunk, c, out, n), n);
  int ok = 1;
  for (int32_t i = 0; i < nitems; i++) ok &= out[i] == 2 * i;
  CHECK(ok);

  pre_state qst = {0, 0, 8192, 0};
  blosc2_postfilter_params qparams = {0};
  qparams.user_data = &qst;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.postfilter = my_postfilter;
  dp.postparams = &qparams;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  CHECK(dctx != NULL);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n), n);
  CHECK_EQ_INT(qst.calls, (n + 8191) / 8192);
  CHECK_EQ_INT(qst.bad, 0);
  ok = 1;
  for (int32_t i = 0; i < nitems; i++) ok &= out[i] == 2 * i + 1;
  CHECK(ok);
  blosc2_dparams gotd;
  CHECK_EQ_INT(blosc2_ctx_get_dparams(dctx, &gotd), 0);
  CHECK(gotd.postfilter == my_postfilter);

  /* a failing postfilter is BLOSC2_ERROR_POSTFILTER */
  dp.postfilter = failing_postfilter;
  blosc2_context *fctx = blosc2_create_dctx(dp);
  CHECK_EQ_INT(blosc2_decompress_ctx(fctx, chunk, c, out, n), BLOSC2_ERROR_POSTFILTER);
  /* a prefilter writing wider items than the chunk's is refused (they would not fit a block) */
  pparams.output_typesize = 8;
  CHECK(blosc2_create_cctx(cp) == NULL);
  pparams.output_typesize = 0;
  /* a prefilter without params is refused */
  cp.preparams = NULL;
  CHECK(blosc2_create_cctx(cp) == NULL);

  blosc2_free_ctx(fctx);
  blosc2_free_ctx(cctx);
  blosc2_free_ctx(dctx);
  blosc2_free_ctx(plain);
  free(src);
  free(out);
  free(chunk);
}

/* ---- Tuners -------------------------------------------------------------------------- */
static int t_init = 0, t_blocksize = 0, t_cparams = 0, t_update = 0, t_free = 0;
static double t_last_time = -1;

static int tuner_init(void *config, blosc2_context *cctx, blosc2_context *dctx) {
  (void)dctx;
  t_init++;
  if (config != NULL && *(int *)config != 1234) return -1;
  return cctx != NULL ? 0 : -1;
}
static int tuner_next_blocksize(blosc2_context *ctx) { (void)ctx; t_blocksize++; return 0; }
static int tuner_next_cparams(blosc2_context *ctx) {
  blosc2_cparams cp;
  t_cparams++;
  return blosc2_ctx_get_cparams(ctx, &cp) == 0 && cp.tuner_id == 170 ? 0 : -1;
}
static int tuner_update(blosc2_context *ctx, double ctime) { (void)ctx; t_update++; t_last_time = ctime; return 0; }
static int tuner_free(blosc2_context *ctx) { (void)ctx; t_free++; return 0; }
static int tuner_fail(blosc2_context *ctx) { (void)ctx; return -1; }

static void test_tuner(void) {
  blosc2_tuner tuner = {0};
  tuner.init = tuner_init;
  tuner.next_blocksize = tuner_next_blocksize;
  tuner.next_cparams = tuner_next_cparams;
  tuner.update = tuner_update;
  tuner.free = tuner_free;
  tuner.id = 170;
  tuner.name = "counting";
  CHECK_EQ_INT(blosc2_register_tuner(&tuner), 0);
  CHECK_EQ_INT(blosc2_register_tuner(&tuner), 0);
  blosc2_tuner bad = tuner;
  bad.id = 100;
  CHECK_EQ_INT(blosc2_register_tuner(&bad), BLOSC2_ERROR_FAILURE);
  bad.id = 170;
  bad.name = "renamed";
  CHECK_EQ_INT(blosc2_register_tuner(&bad), BLOSC2_ERROR_FAILURE);
  CHECK_EQ_INT(blosc2_register_tuner(NULL), BLOSC2_ERROR_INVALID_PARAM);

  int32_t n = 100000;
  uint8_t *src = malloc((size_t)n), *chunk = malloc((size_t)n + 64), *out = malloc((size_t)n);
  for (int32_t i = 0; i < n; i++) src[i] = (uint8_t)(i / 100);

  /* without tuner_params: init, then next_blocksize per chunk */
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  cp.tuner_id = 170;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK(cctx != NULL);
  CHECK_EQ_INT(t_init, 1);
  int c = blosc2_compress_ctx(cctx, src, n, chunk, n + 64);
  CHECK(c > 0);
  CHECK_EQ_INT(t_blocksize, 1);
  CHECK_EQ_INT(t_update, 0);
  CHECK_EQ_INT(blosc2_decompress(chunk, c, out, n), n);
  CHECK(memcmp(src, out, (size_t)n) == 0);
  blosc2_free_ctx(cctx);
  CHECK_EQ_INT(t_free, 0);

  /* with tuner_params: next_cparams before, update after, free at release */
  int config = 1234;
  cp.tuner_params = &config;
  cctx = blosc2_create_cctx(cp);
  CHECK(cctx != NULL);
  CHECK_EQ_INT(blosc2_compress_ctx(cctx, src, n, chunk, n + 64), c); /* same bytes as without tuner */
  CHECK_EQ_INT(t_cparams, 1);
  CHECK_EQ_INT(t_update, 1);
  CHECK(t_last_time >= 0);
  blosc2_free_ctx(cctx);
  CHECK_EQ_INT(t_free, 1);

  /* a tuner whose init fails refuses the context; one whose step fails fails the call */
  int wrong = 1;
  cp.tuner_params = &wrong;
  CHECK(blosc2_create_cctx(cp) == NULL);
  blosc2_tuner failing = tuner;
  failing.id = 171;
  failing.name = "failing";
  failing.next_blocksize = tuner_fail;
  CHECK_EQ_INT(blosc2_register_tuner(&failing), 0);
  cp.tuner_id = 171;
  cp.tuner_params = NULL;
  cctx = blosc2_create_cctx(cp);
  CHECK(cctx != NULL);
  CHECK_EQ_INT(blosc2_compress_ctx(cctx, src, n, chunk, n + 64), BLOSC2_ERROR_TUNER);
  blosc2_free_ctx(cctx);
  free(src);
  free(chunk);
  free(out);
}

/* ---- Threads callback ------------------------------------------------------------------ */
static int cb_calls = 0;
static void my_threads(void *data, void (*dojob)(void *), int numjobs, size_t elsize, void *jobdata) {
  (void)data;
  cb_calls++;
  for (int i = 0; i < numjobs; i++) dojob((char *)jobdata + (size_t)i * elsize);
}

static void test_threads_callback(void) {
  /* With a callback set, multi-threaded calls hand their jobs to it; results
     stay identical. NULL restores the library's own threads. */
  blosc2_set_threads_callback(my_threads, NULL);
  cb_calls = 0;
  int32_t n = 1 << 20;
  uint8_t *src = malloc((size_t)n), *chunk = malloc((size_t)n + 64), *out = malloc((size_t)n);
  for (int32_t i = 0; i < n; i++) src[i] = (uint8_t)(i / 1000);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  cp.nthreads = 2;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int c = blosc2_compress_ctx(cctx, src, n, chunk, n + 64);
  CHECK(c > 0);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 2;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n), n);
  CHECK(memcmp(src, out, (size_t)n) == 0);
  CHECK_EQ_INT(cb_calls, 2); /* one compression, one decompression */
  blosc2_set_threads_callback(NULL, NULL);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n), n);
  CHECK(memcmp(src, out, (size_t)n) == 0);
  CHECK_EQ_INT(cb_calls, 2); /* not called once reset */
  blosc2_free_ctx(cctx);
  blosc2_free_ctx(dctx);
  free(src);
  free(chunk);
  free(out);
}

/* ---- The reference's global filters: BYTEDELTA, INT_TRUNC, NDCELL ------------------- */
static void test_global_filters(void) {
  int32_t nitems = 20000, n = nitems * 4;
  int32_t *src = malloc((size_t)n), *out = malloc((size_t)n);
  uint8_t *chunk = malloc((size_t)n + BLOSC2_MAX_OVERHEAD);
  for (int32_t i = 0; i < nitems; i++) src[i] = 1000 + 3 * i + (i % 7);

  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.compcode = BLOSC_ZSTD;
  cp.filters[4] = BLOSC_SHUFFLE;
  cp.filters[5] = BLOSC_FILTER_BYTEDELTA; /* meta 0: the typesize, recorded as 4 */
  blosc2_context *cctx = blosc2_create_cctx(cp);
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  int c = blosc2_compress_ctx(cctx, src, n, chunk, n + BLOSC2_MAX_OVERHEAD);
  CHECK(c > 0 && c < n / 4);
  CHECK_EQ_INT(chunk[BLOSC2_CHUNK_FILTER_CODES + 5], BLOSC_FILTER_BYTEDELTA);
  CHECK_EQ_INT(chunk[BLOSC2_CHUNK_FILTER_META + 5], 4);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n), n);
  CHECK(memcmp(src, out, (size_t)n) == 0);
  blosc2_free_ctx(cctx);

  /* INT_TRUNC keeps the top 20 bits of each int32; decompression keeps them as they are */
  cp.filters[4] = BLOSC_FILTER_INT_TRUNC;
  cp.filters_meta[4] = 20;
  cctx = blosc2_create_cctx(cp);
  c = blosc2_compress_ctx(cctx, src, n, chunk, n + BLOSC2_MAX_OVERHEAD);
  CHECK(c > 0);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n), n);
  int ok = 1;
  for (int32_t i = 0; i < nitems; i++) ok &= out[i] == (int32_t)((uint32_t)src[i] & 0xFFFFF000u);
  CHECK(ok);
  blosc2_free_ctx(cctx);
  /* keeping 0 bits is an error */
  cp.filters_meta[4] = 0;
  cctx = blosc2_create_cctx(cp);
  CHECK(blosc2_compress_ctx(cctx, src, n, chunk, n + BLOSC2_MAX_OVERHEAD) < 0);
  blosc2_free_ctx(cctx);

  /* NDCELL works on the block shape of the "b2nd" layer of cparams.schunk / dparams.schunk:
     one 100x200 block of int32, 4x4 cells */
  int64_t shape[2] = {100, 200};
  int32_t cshape[2] = {100, 200}, bshape[2] = {100, 200};
  uint8_t *smeta = NULL;
  int32_t smeta_len = b2nd_serialize_meta(2, shape, cshape, bshape, "<i4", 0, &smeta);
  CHECK(smeta_len > 0);
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK(sc != NULL);
  CHECK(blosc2_meta_add(sc, "b2nd", smeta, smeta_len) >= 0);
  free(smeta);
  cp.filters[4] = BLOSC_FILTER_NDCELL;
  cp.filters_meta[4] = 4;
  cp.filters[5] = BLOSC_SHUFFLE;
  cp.filters_meta[5] = 0;
  cp.blocksize = n;
  /* without a super-chunk there is no block shape: the pipeline fails */
  cctx = blosc2_create_cctx(cp);
  CHECK(cctx != NULL);
  CHECK_EQ_INT(blosc2_compress_ctx(cctx, src, n, chunk, n + BLOSC2_MAX_OVERHEAD),
               BLOSC2_ERROR_FILTER_PIPELINE);
  blosc2_free_ctx(cctx);
  cp.schunk = sc;
  cctx = blosc2_create_cctx(cp);
  c = blosc2_compress_ctx(cctx, src, n, chunk, n + BLOSC2_MAX_OVERHEAD);
  CHECK(c > 0 && c < n / 2);
  CHECK_EQ_INT(chunk[BLOSC2_CHUNK_FILTER_CODES + 4], BLOSC_FILTER_NDCELL);
  CHECK_EQ_INT(chunk[BLOSC2_CHUNK_FILTER_META + 4], 4);
  blosc2_free_ctx(cctx);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, c, out, n), BLOSC2_ERROR_FILTER_PIPELINE);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.schunk = sc;
  blosc2_context *sdctx = blosc2_create_dctx(dp);
  memset(out, 0, (size_t)n);
  CHECK_EQ_INT(blosc2_decompress_ctx(sdctx, chunk, c, out, n), n);
  CHECK(memcmp(src, out, (size_t)n) == 0);
  blosc2_free_ctx(sdctx);
  blosc2_schunk_free(sc);

  blosc2_free_ctx(dctx);
  free(src);
  free(out);
  free(chunk);
}

int main(void) {
  blosc2_init();
  test_user_codec_and_filter();
  test_pre_and_postfilters();
  test_tuner();
  test_threads_callback();
  test_global_filters();
  blosc2_destroy();
  return test_finish("test_chunk_plugins");
}
