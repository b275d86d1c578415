/* Codecs and filters registered without callbacks load them from a plugin library, as in the
 * reference: libblosc2_<name>.so on the dynamic linker's path (CTest puts tests-c/plugins' builds
 * there), else where a `blosc2_<name>` Python package says. A plugin that cannot be found or
 * named fails the call with the reference's code and nothing is written. */
#include "test_common.h"
#include <caterva.h>
#include <blosc2/codecs-registry.h>
#include <dlfcn.h>

enum { N = 40000, ROOM = N + 4096 };

/* Compresses `src` with `cp` into `chunk`; returns what blosc2_compress_ctx returned. */
static int compress_with(blosc2_cparams cp, const uint8_t *src, uint8_t *chunk) {
  blosc2_context *cctx = blosc2_create_cctx(cp);
  if (cctx == NULL) return BLOSC2_ERROR_NULL_POINTER;
  int rc = blosc2_compress_ctx(cctx, src, N, chunk, ROOM);
  blosc2_free_ctx(cctx);
  return rc;
}

static int decompress(const uint8_t *chunk, int32_t csize, uint8_t *out) {
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 2;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  int rc = blosc2_decompress_ctx(dctx, chunk, csize, out, N);
  blosc2_free_ctx(dctx);
  return rc;
}

/* Whether `hay` holds `len` bytes equal to `needle` somewhere. */
static int contains(const uint8_t *hay, int32_t hay_len, const uint8_t *needle, int32_t len) {
  for (int32_t i = 0; i + len <= hay_len; i++) {
    if (memcmp(hay + i, needle, (size_t)len) == 0) return 1;
  }
  return 0;
}

static blosc2_cparams plain_cparams(uint8_t compcode) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = compcode;
  cp.typesize = 4;
  cp.nthreads = 2;
  cp.blocksize = 8192; /* several blocks, on both threads */
  for (int i = 0; i < BLOSC2_MAX_FILTERS; i++) cp.filters[i] = 0;
  return cp;
}

static void test_codec_from_plugin(const uint8_t *src, uint8_t *chunk, uint8_t *out) {
  blosc2_codec codec = {0};
  codec.compcode = 200;
  codec.compname = "testcodec";
  codec.complib = 200;
  codec.version = 1;
  CHECK_EQ_INT(blosc2_register_codec(&codec), 0);

  int c = compress_with(plain_cparams(200), src, chunk);
  /* Header, block starts, and per block a stream size, the tag and half the block. */
  CHECK_EQ_INT(c, 32 + 4 * (N / 8192 + 1) + (N / 8192 + 1) * (4 + 4) + N / 2);
  CHECK_EQ_INT(chunk[22], 200);
  /* Each block is the plugin's tag followed by one byte of each pair, XORed with 0x3C. */
  uint8_t expect[12] = {'B', '2', 'P', 'L'};
  for (int i = 0; i < 8; i++) expect[4 + i] = (uint8_t)(src[8192 + 2 * i] ^ 0x3C);
  CHECK(c > 0 && contains(chunk, c, expect, 12));
  memset(out, 0, N);
  CHECK_EQ_INT(decompress(chunk, c, out), N);
  CHECK(memcmp(src, out, N) == 0);
}

static void test_filter_from_plugin(const uint8_t *src, uint8_t *chunk, uint8_t *out) {
  blosc2_filter filter = {0};
  filter.id = 201;
  filter.name = "testfilter";
  filter.version = 1;
  CHECK_EQ_INT(blosc2_register_filter(&filter), 0);

  /* The plugin filter, then the plugin codec: the stream shows both ran (byte + 7, then ^ 0x3C). */
  blosc2_cparams cp = plain_cparams(200);
  cp.filters[5] = 201;
  cp.filters_meta[5] = 7;
  int c = compress_with(cp, src, chunk);
  CHECK(c > 0);
  uint8_t expect[8];
  for (int i = 0; i < 8; i++) expect[i] = (uint8_t)((uint8_t)(src[2 * i] + 7) ^ 0x3C);
  CHECK(c > 0 && contains(chunk, c, expect, 8));
  memset(out, 0, N);
  CHECK_EQ_INT(decompress(chunk, c, out), N);
  CHECK(memcmp(src, out, N) == 0);
}

static void test_missing_plugins_fail_cleanly(const uint8_t *src, uint8_t *chunk) {
  blosc2_codec codec = {0};
  codec.compcode = 202;
  codec.compname = "b2nd_no_such_plugin";
  codec.complib = 202;
  CHECK_EQ_INT(blosc2_register_codec(&codec), 0);
  memset(chunk, 0xEE, ROOM);
  CHECK_EQ_INT(compress_with(plain_cparams(202), src, chunk), BLOSC2_ERROR_CODEC_SUPPORT);

  /* A name that cannot be a library name is never looked up. */
  codec.compcode = 203;
  codec.compname = "../testcodec";
  CHECK_EQ_INT(blosc2_register_codec(&codec), 0);
  CHECK_EQ_INT(compress_with(plain_cparams(203), src, chunk), BLOSC2_ERROR_CODEC_SUPPORT);

  blosc2_filter filter = {0};
  filter.id = 204;
  filter.name = "b2nd_no_such_filter";
  CHECK_EQ_INT(blosc2_register_filter(&filter), 0);
  blosc2_cparams cp = plain_cparams(BLOSC_LZ4);
  cp.filters[5] = 204;
  CHECK_EQ_INT(compress_with(cp, src, chunk), BLOSC2_ERROR_FILTER_PIPELINE);

}

/* The plugin sees the super-chunk it works for in cparams->schunk and dparams->schunk, as in the
 * reference (the JPEG 2000 plugins read the "b2nd" metalayer through it). */
static void test_plugin_sees_its_super_chunk(const uint8_t *src, uint8_t *out) {
  void *lib = dlopen("libblosc2_testcodec.so", RTLD_NOW | RTLD_NOLOAD);
  CHECK(lib != NULL);
  if (lib == NULL) return;
  void **seen_c = (void **)dlsym(lib, "testcodec_last_cschunk");
  void **seen_d = (void **)dlsym(lib, "testcodec_last_dschunk");
  CHECK(seen_c != NULL && seen_d != NULL);
  if (seen_c == NULL || seen_d == NULL) return;

  int *cmeta = (int *)dlsym(lib, "testcodec_last_cmeta");
  int *dmeta = (int *)dlsym(lib, "testcodec_last_dmeta");
  int *cvlmeta = (int *)dlsym(lib, "testcodec_last_cvlmeta");
  int *free_at_encode = (int *)dlsym(lib, "testcodec_free_at_encode");
  int *cfree = (int *)dlsym(lib, "testcodec_last_cfree");
  CHECK(cmeta && dmeta && cvlmeta && free_at_encode && cfree);
  if (!(cmeta && dmeta && cvlmeta && free_at_encode && cfree)) return;

  blosc2_cparams cp = plain_cparams(200);
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.cparams = &cp;
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK(sc != NULL);
  /* A metalayer the plugin reads during the calls (named "b2nd" because that is the one the
   * test codec reads; its content is not an array's). */
  uint8_t layer[5] = {1, 2, 3, 4, 5};
  CHECK_EQ_INT(blosc2_meta_add(sc, "b2nd", layer, 5), 0);
  *seen_c = *seen_d = NULL;
  *cmeta = *dmeta = *cvlmeta = 0;
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, src, N), 1);
  CHECK(*seen_c == (void *)sc);
  CHECK_EQ_INT(*cmeta, 5);
  /* Reads of its vlmetalayers from inside the call are served (from what the super-chunk showed
   * when the call began), as C-Blosc2's test_urcodecs needs: "none" is not there. */
  CHECK_EQ_INT(*cvlmeta, BLOSC2_ERROR_NOT_FOUND);
  CHECK_EQ_INT(blosc2_vlmeta_exists(sc, "none"), BLOSC2_ERROR_NOT_FOUND);
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 0, out, N), N);
  CHECK(*seen_d == (void *)sc);
  CHECK_EQ_INT(*dmeta, 5);
  CHECK(memcmp(src, out, N) == 0);

  /* Freeing it from inside the call is refused; the super-chunk stays whole. */
  *free_at_encode = 1;
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, src, N), 2);
  CHECK_EQ_INT(*cfree, BLOSC2_ERROR_FAILURE);
  CHECK_EQ_INT(sc->nchunks, 2);
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 1, out, N), N);
  CHECK(memcmp(src, out, N) == 0);
  CHECK_EQ_INT(blosc2_schunk_free(sc), 0);

}

/* What the test codec last saw: the super-chunks and the "b2nd" metalayer lengths it read. */
typedef struct {
  void **cschunk, **dschunk;
  int *cmeta, *dmeta, *cvlmeta;
} codec_view;

static int resolve_view(codec_view *v) {
  void *lib = dlopen("libblosc2_testcodec.so", RTLD_NOW | RTLD_NOLOAD);
  if (lib == NULL) return 0;
  v->cschunk = (void **)dlsym(lib, "testcodec_last_cschunk");
  v->dschunk = (void **)dlsym(lib, "testcodec_last_dschunk");
  v->cmeta = (int *)dlsym(lib, "testcodec_last_cmeta");
  v->dmeta = (int *)dlsym(lib, "testcodec_last_dmeta");
  v->cvlmeta = (int *)dlsym(lib, "testcodec_last_cvlmeta");
  return v->cschunk && v->dschunk && v->cmeta && v->dmeta && v->cvlmeta;
}

static void forget(codec_view *v) {
  *v->cschunk = *v->dschunk = NULL;
  *v->cmeta = *v->dmeta = *v->cvlmeta = 0;
}

/* Whether the last encode saw the super-chunk `sc` and read its "b2nd" metalayer through it. */
static int encoded_in(const codec_view *v, blosc2_schunk *sc) {
  int32_t len = 0;
  uint8_t *meta = NULL;
  if (blosc2_meta_get(sc, "b2nd", &meta, &len) < 0) return 0;
  free(meta);
  return *v->cschunk == (void *)sc && *v->cmeta == len && len > 0;
}

static int encoded_for(const codec_view *v, const b2nd_array_t *arr) {
  return encoded_in(v, arr->sc);
}

/* Chunks of b2nd arrays, made or changed through any call, reach the plugin with the array's
 * super-chunk, and its "b2nd" metalayer reads through it, also while the array is being made. */
static void test_plugin_sees_the_array(const uint8_t *src, uint8_t *out) {
  codec_view v;
  CHECK(resolve_view(&v));
  if (!resolve_view(&v)) return;

  blosc2_cparams cp = plain_cparams(200);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 2;
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.cparams = &cp;
  st.dparams = &dp;
  int64_t shape[1] = {N / 4};
  int32_t chunkshape[1] = {N / 8}, blockshape[1] = {2048};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 1, shape, chunkshape, blockshape, NULL, 0, NULL, 0);
  CHECK(ctx != NULL);
  if (ctx == NULL) return;

  b2nd_array_t *arr = NULL;
  forget(&v);
  CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &arr, src, N), 0);
  if (arr == NULL) return;
  CHECK_EQ_INT(arr->sc->compcode, 200);
  CHECK(encoded_for(&v, arr));
  /* The array holds its super-chunk's contents during the call: vlmetalayer reads are served
   * from what it showed when the call began, not from a stand-in. Between calls they work. */
  CHECK_EQ_INT(*v.cvlmeta, BLOSC2_ERROR_NOT_FOUND);
  CHECK_EQ_INT(blosc2_vlmeta_exists(arr->sc, "none"), BLOSC2_ERROR_NOT_FOUND);

  forget(&v);
  int64_t start[1] = {100}, stop[1] = {300}, part[1] = {200};
  CHECK_EQ_INT(b2nd_set_slice_cbuffer(src, part, 800, start, stop, arr), 0);
  CHECK(encoded_for(&v, arr));

  forget(&v);
  memset(out, 0, N);
  CHECK_EQ_INT(b2nd_to_cbuffer(arr, out, N), 0);
  CHECK(*v.dschunk == (void *)arr->sc);
  CHECK(*v.dmeta > 0);
  uint8_t *expect = malloc(N);
  memcpy(expect, src, N);
  memcpy(expect + 400, src, 800);
  CHECK(memcmp(expect, out, N) == 0);
  free(expect);

  b2nd_array_t *slice = NULL, *copy = NULL, *joined = NULL;
  forget(&v);
  CHECK_EQ_INT(b2nd_get_slice(ctx, &slice, arr, start, stop), 0);
  CHECK(slice != NULL && encoded_for(&v, slice));
  forget(&v);
  /* A copy or a join whose chunks match its source's takes them as they are: other shapes here,
   * so that chunks are encoded. */
  int32_t chunkshape2[1] = {N / 16}, blockshape2[1] = {1024};
  b2nd_context_t *ctx2 =
      b2nd_create_ctx(&st, 1, shape, chunkshape2, blockshape2, NULL, 0, NULL, 0);
  CHECK_EQ_INT(b2nd_copy(ctx2, arr, &copy), 0);
  CHECK(copy != NULL && encoded_for(&v, copy));
  forget(&v);
  CHECK_EQ_INT(b2nd_concatenate(ctx, slice, arr, 0, true, &joined), 0);
  CHECK(joined != NULL && encoded_for(&v, joined));
  b2nd_free_ctx(ctx2);
  b2nd_free(joined);
  b2nd_free(copy);
  b2nd_free(slice);
  b2nd_free(arr);
  b2nd_free_ctx(ctx);
}

/* The same through the Caterva API. */
static void test_plugin_sees_the_caterva_array(const uint8_t *src) {
  codec_view v;
  if (!resolve_view(&v)) return;
  caterva_config_t cfg = CATERVA_CONFIG_DEFAULTS;
  cfg.compcodec = 200;
  cfg.nthreads = 2;
  for (int i = 0; i < BLOSC2_MAX_FILTERS; i++) cfg.filters[i] = 0;
  caterva_ctx_t *ctx = NULL;
  CHECK_EQ_INT(caterva_ctx_new(&cfg, &ctx), CATERVA_SUCCEED);
  if (ctx == NULL) return;
  caterva_params_t params;
  memset(&params, 0, sizeof(params));
  params.itemsize = 4;
  params.ndim = 1;
  params.shape[0] = N / 4;
  caterva_storage_t st;
  memset(&st, 0, sizeof(st));
  st.chunkshape[0] = N / 8;
  st.blockshape[0] = 2048;
  caterva_array_t *arr = NULL;
  forget(&v);
  CHECK_EQ_INT(caterva_from_buffer(ctx, (void *)src, N, &params, &st, &arr), CATERVA_SUCCEED);
  CHECK(arr != NULL && encoded_in(&v, arr->sc));
  caterva_array_t *slice = NULL;
  int64_t start[1] = {100}, stop[1] = {300};
  forget(&v);
  CHECK_EQ_INT(caterva_get_slice(ctx, arr, start, stop, &st, &slice), CATERVA_SUCCEED);
  CHECK(slice != NULL && encoded_in(&v, slice->sc));
  caterva_free(ctx, &slice);
  caterva_free(ctx, &arr);
  caterva_ctx_free(&ctx);
}

/* blosc2_init registers the reference's plugin-only codecs by name, as the reference does. */
static void test_reference_plugin_names(void) {
  const char *names[] = {"openhtj2k", "grok", "openzl", "j2k", "htj2k"};
  for (int i = 0; i < 5; i++) {
    const char *name = NULL;
    CHECK_EQ_INT(blosc2_compcode_to_compname(BLOSC_CODEC_OPENHTJ2K + i, &name),
                 BLOSC_CODEC_OPENHTJ2K + i);
    CHECK(name != NULL && strcmp(name, names[i]) == 0);
    CHECK_EQ_INT(blosc2_compname_to_compcode(names[i]), BLOSC_CODEC_OPENHTJ2K + i);
  }
  /* Their ids are the reference's: not free for user codecs. */
  blosc2_codec codec = {0};
  codec.compcode = BLOSC_CODEC_GROK;
  codec.compname = "mine";
  CHECK_EQ_INT(blosc2_register_codec(&codec), BLOSC2_ERROR_CODEC_PARAM);
}

int main(void) {
  blosc2_init();
  uint8_t *src = malloc(N), *chunk = malloc(ROOM), *out = malloc(N);
  /* Byte pairs, which the test codec compresses to half. */
  for (int32_t i = 0; i < N; i++) src[i] = (uint8_t)((i / 2) * 131 + (i >> 9));
  test_codec_from_plugin(src, chunk, out);
  test_filter_from_plugin(src, chunk, out);
  test_plugin_sees_its_super_chunk(src, out);
  test_plugin_sees_the_array(src, out);
  test_plugin_sees_the_caterva_array(src);
  test_missing_plugins_fail_cleanly(src, chunk);
  test_reference_plugin_names();
  free(src);
  free(chunk);
  free(out);
  blosc2_destroy();
  return test_finish("test_plugin_loading");
}
