/* When a user I/O backend's streams are open, and in which modes.

   As the reference does with every backend but its own file system's, a
   super-chunk opens a user backend's file for one call and closes it before
   the call returns: between two calls no stream is open. Files are opened
   "wb" to create them, "rb+" to write and "rb" to read (no other mode), the
   frame is truncated to its length as it is written, and destroy(params)
   comes once per super-chunk, after its last close. */
#include "test_common.h"

#include <stdint.h>

typedef struct {
  int open_now;   /* streams open at the moment */
  int opens, closes, truncates, destroys;
  int bad_modes;  /* opens in a mode other than rb, rb+, wb */
  int after_destroy; /* callbacks on a stream after destroy(params) */
  int destroyed;
} streams;

typedef struct {
  blosc2_stdio_file *file;
  streams *st;
} stream;

static void *s_open(const char *urlpath, const char *mode, void *params) {
  streams *st = params;
  if (st->destroyed) st->after_destroy++;
  if (strcmp(mode, "rb") != 0 && strcmp(mode, "rb+") != 0 && strcmp(mode, "wb") != 0) {
    st->bad_modes++;
  }
  blosc2_stdio_file *f = blosc2_stdio_open(urlpath, mode, NULL);
  if (f == NULL) return NULL;
  stream *s = malloc(sizeof *s);
  s->file = f;
  s->st = st;
  st->opens++;
  st->open_now++;
  return s;
}

static int s_close(void *p) {
  stream *s = p;
  if (s->st->destroyed) s->st->after_destroy++;
  s->st->closes++;
  s->st->open_now--;
  int rc = blosc2_stdio_close(s->file);
  free(s);
  return rc;
}

static int64_t s_size(void *p) {
  stream *s = p;
  return blosc2_stdio_size(s->file);
}

static int64_t s_write(const void *ptr, int64_t size, int64_t nitems, int64_t pos, void *p) {
  stream *s = p;
  return blosc2_stdio_write(ptr, size, nitems, pos, s->file);
}

static int64_t s_read(void **ptr, int64_t size, int64_t nitems, int64_t pos, void *p) {
  stream *s = p;
  return blosc2_stdio_read(ptr, size, nitems, pos, s->file);
}

static int s_truncate(void *p, int64_t size) {
  stream *s = p;
  s->st->truncates++;
  return blosc2_stdio_truncate(s->file, size);
}

static int s_destroy(void *params) {
  streams *st = params;
  st->destroys++;
  st->destroyed = 1;
  return 0;
}

#define ID 210
#define ITEMS 20000

/* No stream is open between calls. */
#define BETWEEN(st, what)                                                      \
  do {                                                                         \
    if ((st)->open_now != 0) {                                                 \
      fprintf(stderr, "%s: %d stream(s) open after %s\n", label, (st)->open_now, what); \
      test_failures++;                                                         \
    }                                                                          \
  } while (0)

static void run(bool contiguous) {
  const char *label = contiguous ? "contiguous" : "sparse";
  const char *path = contiguous ? "test_udio_streams.b2frame" : "test_udio_streams_s.b2frame";
  blosc2_remove_urlpath(path);
  streams st = {0};
  blosc2_io io = {.id = ID, .name = "streams", .params = &st};
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 4;
  cparams.blocksize = 16 * 1024;
  cparams.nthreads = 2;
  blosc2_storage storage = {.contiguous = contiguous, .urlpath = (char *)path,
                            .cparams = &cparams, .io = &io};
  int32_t *data = malloc(ITEMS * 4), *back = malloc(ITEMS * 4);

  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  CHECK(sc != NULL);
  if (sc == NULL) return;
  BETWEEN(&st, "new");
  CHECK(st.opens > 0);
  for (int k = 0; k < 4; k++) {
    for (int i = 0; i < ITEMS; i++) data[i] = i * (k + 1);
    CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, data, ITEMS * 4), k + 1);
    BETWEEN(&st, "append");
  }
  CHECK(st.truncates > 0);
  for (int i = 0; i < ITEMS; i++) data[i] = -i;
  uint8_t *chunk = malloc(ITEMS * 4 + BLOSC2_MAX_OVERHEAD);
  int cbytes = blosc2_compress_ctx(sc->cctx, data, ITEMS * 4, chunk, ITEMS * 4 + BLOSC2_MAX_OVERHEAD);
  CHECK(cbytes > 0);
  CHECK_EQ_INT(blosc2_schunk_update_chunk(sc, 1, chunk, true), 4);
  BETWEEN(&st, "update");
  CHECK_EQ_INT(blosc2_schunk_insert_chunk(sc, 0, chunk, true), 5);
  BETWEEN(&st, "insert");
  CHECK_EQ_INT(blosc2_schunk_delete_chunk(sc, 0), 4);
  BETWEEN(&st, "delete");
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 1, back, ITEMS * 4), ITEMS * 4);
  CHECK_EQ_INT(back[7], -7);
  BETWEEN(&st, "decompress");
  CHECK_EQ_INT(blosc2_vlmeta_add(sc, "note", (uint8_t *)"hi", 2, NULL), 0);
  BETWEEN(&st, "vlmeta_add");
  blosc2_schunk_free(sc);
  CHECK_EQ_INT(st.destroys, 1);
  CHECK_EQ_INT(st.opens, st.closes);

  /* Reopened through the backend: reads only, each call on its own. */
  st.destroyed = 0;
  int writes_before = st.truncates;
  sc = blosc2_schunk_open_udio(path, &io);
  CHECK(sc != NULL);
  if (sc) {
    BETWEEN(&st, "open");
    CHECK_EQ_INT(sc->nchunks, 4);
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 3, back, ITEMS * 4), ITEMS * 4);
    CHECK_EQ_INT(back[5], 20);
    BETWEEN(&st, "decompress");
    int32_t few[3];
    CHECK_EQ_INT(blosc2_schunk_get_slice_buffer(sc, 2 * ITEMS + 4, 2 * ITEMS + 7, few), 0);
    CHECK_EQ_INT(few[0], 12);
    BETWEEN(&st, "get_slice_buffer");
    uint8_t *lazy;
    bool lazy_free;
    int lazy_len = blosc2_schunk_get_lazychunk(sc, 2, &lazy, &lazy_free);
    CHECK(lazy_len > 0);
    BETWEEN(&st, "get_lazychunk");
    CHECK_EQ_INT(blosc2_decompress_ctx(sc->dctx, lazy, lazy_len, back, ITEMS * 4), ITEMS * 4);
    CHECK_EQ_INT(back[9], 27);
    BETWEEN(&st, "a lazy chunk's decode");
    if (lazy_free) free(lazy);
    CHECK_EQ_INT(st.truncates, writes_before); /* nothing written */
    blosc2_schunk_free(sc);
    CHECK_EQ_INT(st.destroys, 2);
  }
  CHECK_EQ_INT(st.opens, st.closes);
  CHECK_EQ_INT(st.bad_modes, 0);
  CHECK_EQ_INT(st.after_destroy, 0);
  free(chunk);
  free(data);
  free(back);
  blosc2_remove_urlpath(path);
}

/* A b2nd context made with the backend holds its params until it is freed, and the array made
   from it until the array is freed: python-blosc2 frees its mmap params in destroy(), and makes
   the array after the call that made the context returned. The params are destroyed once, after
   both are gone. */
static void run_b2nd_context(void) {
  const char *path = "test_udio_streams.b2nd";
  blosc2_remove_urlpath(path);
  streams st = {0};
  blosc2_io io = {.id = ID, .name = "streams", .params = &st};
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 4;
  blosc2_storage storage = {.contiguous = true, .urlpath = (char *)path, .cparams = &cparams,
                            .io = &io};
  int64_t shape[1] = {ITEMS};
  int32_t chunkshape[1] = {ITEMS / 4}, blockshape[1] = {ITEMS / 16};
  b2nd_context_t *ctx = b2nd_create_ctx(&storage, 1, shape, chunkshape, blockshape, NULL, 0, NULL, 0);
  CHECK(ctx != NULL);
  CHECK_EQ_INT(st.destroys, 0);
  int32_t *data = malloc(ITEMS * 4);
  for (int i = 0; i < ITEMS; i++) data[i] = 3 * i;
  b2nd_array_t *arr = NULL;
  CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &arr, data, ITEMS * 4), 0);
  CHECK_EQ_INT(st.destroys, 0);
  CHECK_EQ_INT(b2nd_free_ctx(ctx), 0);
  CHECK_EQ_INT(st.destroys, 0);
  int32_t item[1];
  int64_t start[1] = {123}, stop[1] = {124}, one[1] = {1};
  CHECK_EQ_INT(b2nd_get_slice_cbuffer(arr, start, stop, item, one, sizeof item), 0);
  CHECK_EQ_INT(item[0], 369);
  CHECK_EQ_INT(st.after_destroy, 0);
  CHECK_EQ_INT(b2nd_free(arr), 0);
  CHECK_EQ_INT(st.destroys, 1);
  CHECK_EQ_INT(st.opens, st.closes);
  free(data);
  blosc2_remove_urlpath(path);
}

int main(void) {
  blosc2_init();
  blosc2_io_cb cb = {.id = ID, .name = "streams", .is_allocation_necessary = true,
                     .open = s_open, .close = s_close, .size = s_size, .write = s_write,
                     .read = s_read, .truncate = s_truncate, .destroy = s_destroy};
  CHECK_EQ_INT(blosc2_register_io_cb(&cb), 0);
  run(true);
  run(false);
  run_b2nd_context();
  blosc2_destroy();
  return test_finish("test_udio_streams");
}
