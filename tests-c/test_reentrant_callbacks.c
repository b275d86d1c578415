/* Callbacks that read the super-chunk or array their own call is writing:
 * a user codec, a user filter and a prefilter, on the calling thread and on
 * worker threads (nthreads 1 and 2), during blosc2_schunk_append_buffer,
 * blosc2_schunk_set_slice_buffer, b2nd_set_slice_cbuffer and
 * b2nd_set_orthogonal_selection, b2nd_append and b2nd_insert. Their reads
 * (a chunk, a vlmetalayer, an array slice) return the contents from before
 * the data is written (after the array grew, for appends and inserts);
 * their writes to it are refused with BLOSC2_ERROR_FAILURE rather than
 * waiting for themselves; the outer write lands whole. Issue 58. */
#include "test_common.h"

#include <stdint.h>

enum kind { CODEC, FILTER, PREFILTER };
static const char *kind_name[] = {"codec", "filter", "prefilter"};

#define CODEC_ID 180
#define FILTER_ID 200
#define N 4096 /* int32 items per chunk: 4 blocks of 4 KiB */
#define ROWS 256
#define COLS 64

static blosc2_schunk *probe_sc; /* what the callbacks read */
static b2nd_array_t *probe_arr; /* NULL: a bare super-chunk */
static enum kind probe_kind;
static int probing;
static int reads_ok, reads_bad, writes_refused, writes_done;

static void count(int *c) { __atomic_add_fetch(c, 1, __ATOMIC_RELAXED); }

static int32_t cell(int64_t r, int64_t c) { return (int32_t)(r * COLS + c); }

/* What every callback does while `probing`: read what its call writes, then
 * try to write to it. */
static void probe(enum kind k, blosc2_schunk *given) {
  if (!__atomic_load_n(&probing, __ATOMIC_RELAXED) || k != probe_kind) return;
  if (given != NULL && given != probe_sc) {
    count(&reads_bad);
    return;
  }
  uint8_t *content = NULL;
  int32_t len = 0;
  int32_t buf[N];
  int good = blosc2_schunk_decompress_chunk(probe_sc, 0, buf, sizeof buf) == (int)sizeof buf;
  for (int i = 0; good && i < N; i++) good = buf[i] == (probe_arr ? cell(i / COLS, i % COLS) : i);
  good = good && blosc2_vlmeta_get(probe_sc, "note", &content, &len) >= 0 && len == 5 &&
         memcmp(content, "hello", 5) == 0;
  free(content);
  if (probe_arr) {
    int64_t start[2] = {3, 0}, stop[2] = {4, 8}, shape[2] = {1, 8};
    int32_t row[8];
    good = good && b2nd_get_slice_cbuffer(probe_arr, start, stop, row, shape, sizeof row) == 0;
    for (int j = 0; good && j < 8; j++) good = row[j] == cell(3, j);
  }
  count(good ? &reads_ok : &reads_bad);
  int wrote;
  if (probe_arr) {
    int64_t start[2] = {0, 0}, stop[2] = {1, 1}, shape[2] = {1, 1};
    int32_t v = -1;
    wrote = b2nd_set_slice_cbuffer(&v, shape, sizeof v, start, stop, probe_arr);
  } else {
    wrote = (int)blosc2_schunk_append_buffer(probe_sc, buf, sizeof buf);
  }
  count(wrote == BLOSC2_ERROR_FAILURE ? &writes_refused : &writes_done);
}

static int copy_encoder(const uint8_t *input, int32_t input_len, uint8_t *output, int32_t output_len,
                        uint8_t meta, blosc2_cparams *cparams, const void *chunk) {
  (void)meta; (void)chunk;
  probe(CODEC, cparams->schunk);
  if (output_len < input_len) return 0;
  memcpy(output, input, (size_t)input_len);
  return input_len;
}

static int copy_decoder(const uint8_t *input, int32_t input_len, uint8_t *output, int32_t output_len,
                        uint8_t meta, blosc2_dparams *dparams, const void *chunk) {
  (void)meta; (void)dparams; (void)chunk;
  if (output_len < input_len) return BLOSC2_ERROR_WRITE_BUFFER;
  memcpy(output, input, (size_t)input_len);
  return input_len;
}

static int copy_forward(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta,
                        blosc2_cparams *cparams, uint8_t id) {
  (void)meta; (void)id;
  probe(FILTER, cparams->schunk);
  memcpy(dest, src, (size_t)size);
  return 0;
}

static int copy_backward(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta,
                         blosc2_dparams *dparams, uint8_t id) {
  (void)meta; (void)dparams; (void)id;
  memcpy(dest, src, (size_t)size);
  return 0;
}

static int copy_prefilter(blosc2_prefilter_params *p) {
  probe(PREFILTER, NULL);
  memcpy(p->output, p->input, (size_t)p->output_size);
  return 0;
}

static void register_plugins(void) {
  blosc2_codec codec = {0};
  codec.compcode = CODEC_ID;
  codec.compname = "reentrant_copy";
  codec.complib = CODEC_ID;
  codec.version = 1;
  codec.encoder = copy_encoder;
  codec.decoder = copy_decoder;
  CHECK_EQ_INT(blosc2_register_codec(&codec), 0);
  blosc2_filter filter = {0};
  filter.id = FILTER_ID;
  filter.name = "reentrant_copy";
  filter.version = 1;
  filter.forward = copy_forward;
  filter.backward = copy_backward;
  CHECK_EQ_INT(blosc2_register_filter(&filter), 0);
}

static blosc2_cparams cparams_for(enum kind k, int nthreads) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.blocksize = 4096;
  cp.nthreads = (int16_t)nthreads;
  if (k == CODEC) cp.compcode = CODEC_ID;
  if (k == FILTER) cp.filters[BLOSC2_MAX_FILTERS - 1] = FILTER_ID;
  return cp;
}

/* Installs the prefilter the way python-blosc2 does: a new `sc->cctx`. */
static void install_prefilter(blosc2_schunk *sc, blosc2_prefilter_params *pp) {
  blosc2_cparams *cp = NULL;
  CHECK_EQ_INT(blosc2_schunk_get_cparams(sc, &cp), 0);
  cp->prefilter = copy_prefilter;
  cp->preparams = pp;
  cp->schunk = sc;
  blosc2_free_ctx(sc->cctx);
  sc->cctx = blosc2_create_cctx(*cp);
  free(cp);
}

static void start_probing(void) {
  reads_ok = reads_bad = writes_refused = writes_done = 0;
  __atomic_store_n(&probing, 1, __ATOMIC_RELAXED);
}

/* Every callback read its object whole and right, and its write was refused. */
static void check_probes(const char *what, enum kind k, int nthreads) {
  __atomic_store_n(&probing, 0, __ATOMIC_RELAXED);
  if (reads_ok < 1 || reads_bad != 0 || writes_done != 0 || writes_refused != reads_ok)
    fprintf(stderr, "%s with a %s, %d thread(s): reads ok %d bad %d, writes refused %d done %d\n",
            what, kind_name[k], nthreads, reads_ok, reads_bad, writes_refused, writes_done);
  CHECK(reads_ok >= 1);
  CHECK_EQ_INT(reads_bad, 0);
  CHECK_EQ_INT(writes_done, 0);
  CHECK_EQ_INT(writes_refused, reads_ok);
}

static void test_schunk(enum kind k, int nthreads) {
  blosc2_cparams cp = cparams_for(k, nthreads);
  blosc2_prefilter_params pp = {0};
  if (k == PREFILTER) {
    cp.prefilter = copy_prefilter;
    cp.preparams = &pp;
  }
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (int16_t)nthreads;
  blosc2_storage storage = {.cparams = &cp, .dparams = &dp, .contiguous = true};
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  probe_sc = sc;
  probe_arr = NULL;
  probe_kind = k;
  static int32_t data[N];
  for (int i = 0; i < N; i++) data[i] = i;
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, data, sizeof data), 1);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, data, sizeof data), 2);
  CHECK(blosc2_vlmeta_add(sc, "note", (uint8_t *)"hello", 5, NULL) >= 0);

  start_probing();
  CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, data, sizeof data), 3);
  check_probes("append_buffer", k, nthreads);
  CHECK_EQ_INT(sc->nchunks, 3);
  CHECK_EQ_INT(sc->current_nchunk, 2);

  int32_t patch[20];
  for (int i = 0; i < 20; i++) patch[i] = -i - 1;
  start_probing();
  CHECK_EQ_INT(blosc2_schunk_set_slice_buffer(sc, N + 10, N + 30, patch), 0);
  check_probes("set_slice_buffer", k, nthreads);

  static int32_t back[N];
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 1, back, sizeof back), (int)sizeof back);
  for (int i = 0; i < N; i++) CHECK_EQ_INT(back[i], i >= 10 && i < 30 ? -(i - 10) - 1 : i);
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 2, back, sizeof back), (int)sizeof back);
  CHECK(memcmp(back, data, sizeof data) == 0);
  blosc2_schunk_free(sc);
}

static void check_array(b2nd_array_t *arr, const int32_t *model, int64_t rows) {
  int32_t *got = malloc(sizeof(int32_t) * (size_t)(rows * COLS));
  CHECK_EQ_INT(arr->shape[0], rows);
  CHECK_EQ_INT(b2nd_to_cbuffer(arr, got, (int64_t)sizeof(int32_t) * rows * COLS), 0);
  int64_t diffs = 0;
  for (int64_t i = 0; i < rows * COLS; i++) diffs += got[i] != model[i];
  CHECK_EQ_INT(diffs, 0);
  free(got);
}

static void test_array(enum kind k, int nthreads) {
  blosc2_cparams cp = cparams_for(k, nthreads);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = (int16_t)nthreads;
  blosc2_storage storage = {.cparams = &cp, .dparams = &dp, .contiguous = false};
  int64_t shape[2] = {ROWS, COLS};
  int32_t chunkshape[2] = {64, COLS}; /* 4096 items */
  int32_t blockshape[2] = {16, COLS}; /* 4 blocks of 4 KiB */
  b2nd_context_t *ctx = b2nd_create_ctx(&storage, 2, shape, chunkshape, blockshape, "<i4", 0, NULL, 0);
  int32_t *model = malloc(sizeof(int32_t) * (ROWS + 138) * COLS);
  for (int64_t i = 0; i < ROWS * COLS; i++) model[i] = cell(i / COLS, i % COLS);
  b2nd_array_t *arr = NULL;
  CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &arr, model, sizeof(int32_t) * ROWS * COLS), 0);
  b2nd_free_ctx(ctx);
  CHECK(blosc2_vlmeta_add(arr->sc, "note", (uint8_t *)"hello", 5, NULL) >= 0);
  blosc2_prefilter_params pp = {0};
  if (k == PREFILTER) install_prefilter(arr->sc, &pp);
  probe_sc = arr->sc;
  probe_arr = arr;
  probe_kind = k;

  /* Rows 64..80 (chunk 1): the callbacks read chunk 0. */
  int32_t rows[16 * COLS];
  for (int i = 0; i < 16 * COLS; i++) rows[i] = -i - 1;
  int64_t start[2] = {64, 0}, stop[2] = {80, COLS}, bshape[2] = {16, COLS};
  start_probing();
  CHECK_EQ_INT(b2nd_set_slice_cbuffer(rows, bshape, sizeof rows, start, stop, arr), 0);
  check_probes("b2nd_set_slice_cbuffer", k, nthreads);
  memcpy(model + 64 * COLS, rows, sizeof rows);

  /* Rows 70 and 130, columns 3 and 5 (chunks 1 and 2). */
  int64_t r_sel[2] = {70, 130}, c_sel[2] = {3, 5};
  int64_t *selection[2] = {r_sel, c_sel};
  int64_t selection_size[2] = {2, 2}, sshape[2] = {2, 2};
  int32_t four[4] = {1001, 1002, 1003, 1004};
  start_probing();
  CHECK_EQ_INT(b2nd_set_orthogonal_selection(arr, selection, selection_size, four, sshape, sizeof four), 0);
  check_probes("b2nd_set_orthogonal_selection", k, nthreads);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) model[r_sel[i] * COLS + c_sel[j]] = four[i * 2 + j];
  check_array(arr, model, ROWS);

  /* A new chunk of rows at the end, appended whole. */
  static int32_t more[64 * COLS];
  for (int i = 0; i < 64 * COLS; i++) more[i] = 5000000 + i;
  start_probing();
  CHECK_EQ_INT(b2nd_append(arr, more, sizeof more, 0), 0);
  check_probes("b2nd_append", k, nthreads);
  memcpy(model + ROWS * COLS, more, sizeof more);
  check_array(arr, model, ROWS + 64);

  /* A chunk of rows inserted at row 128 (room first, then the data). */
  static int32_t ins[64 * COLS];
  for (int i = 0; i < 64 * COLS; i++) ins[i] = 7000000 + i;
  start_probing();
  CHECK_EQ_INT(b2nd_insert(arr, ins, sizeof ins, 0, 128), 0);
  check_probes("b2nd_insert", k, nthreads);
  memmove(model + 192 * COLS, model + 128 * COLS, sizeof(int32_t) * (ROWS + 64 - 128) * COLS);
  memcpy(model + 128 * COLS, ins, sizeof ins);
  check_array(arr, model, ROWS + 128);

  /* 10 rows appended along axis 0, through room and slices. */
  static int32_t tail[10 * COLS];
  for (int i = 0; i < 10 * COLS; i++) tail[i] = 9000000 + i;
  start_probing();
  CHECK_EQ_INT(b2nd_append(arr, tail, sizeof tail, 0), 0);
  check_probes("b2nd_append (rows)", k, nthreads);
  memcpy(model + (ROWS + 128) * COLS, tail, sizeof tail);
  check_array(arr, model, ROWS + 138);

  b2nd_free(arr);
  free(model);
}

int main(void) {
  blosc2_init();
  register_plugins();
  for (int k = CODEC; k <= PREFILTER; k++) {
    for (int nthreads = 1; nthreads <= 2; nthreads++) {
      test_schunk((enum kind)k, nthreads);
      test_array((enum kind)k, nthreads);
    }
  }
  blosc2_destroy();
  return test_finish("test_reentrant_callbacks");
}
