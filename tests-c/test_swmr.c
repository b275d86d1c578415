/* Growth-SWMR through the C API, as C-Blosc2 3.3 has it: a reader handle on
   an on-disk array or super-chunk follows another handle's writes without
   reopening. Unlocked, every call polls the frame length first; the
   refresh calls return 1 when they re-read, 0 when current. With locking on
   (also asked for through the b2nd context's storage), the generation
   counter catches a rewrite that keeps the frame length, and
   blosc2_remove_urlpath() takes the sidecar along. */
#define _DEFAULT_SOURCE
#include "test_common.h"

#include <sys/stat.h>

static bool exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

static b2nd_array_t *make(const char *path, blosc2_io *io, int64_t rows, int32_t chunkrows) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_storage st = {.contiguous = true, .urlpath = (char *)path, .cparams = &cp, .io = io};
  int64_t shape[2] = {rows, 10};
  int32_t chunk[2] = {chunkrows, chunkrows < 10 ? chunkrows : 10};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 2, shape, chunk, chunk, NULL, 0, NULL, 0);
  CHECK(ctx != NULL);
  b2nd_array_t *a = NULL;
  CHECK_EQ_INT(b2nd_zeros(ctx, &a), 0);
  b2nd_free_ctx(ctx);
  return a;
}

static void unlocked_array(void) {
  const char *path = "test_swmr.b2nd";
  blosc2_remove_urlpath(path);
  b2nd_array_t *w = make(path, NULL, 10, 5);
  b2nd_array_t *r = NULL;
  CHECK_EQ_INT(b2nd_open(path, &r), 0);
  if (w == NULL || r == NULL) return;
  CHECK_EQ_INT(b2nd_refresh(r), 0);

  int64_t grown[2] = {20, 10};
  CHECK_EQ_INT(b2nd_resize(w, grown, NULL), 0);
  int32_t buf[100];
  for (int i = 0; i < 100; i++) buf[i] = 100 + i;
  int64_t start[2] = {10, 0}, stop[2] = {20, 10}, bshape[2] = {10, 10};
  CHECK_EQ_INT(b2nd_set_slice_cbuffer(buf, bshape, sizeof(buf), start, stop, w), 0);

  /* The reader reads the grown region without a refresh of its own. */
  int32_t row[10] = {0};
  int64_t rs[2] = {15, 0}, re[2] = {16, 10}, rshape[2] = {1, 10};
  CHECK_EQ_INT(b2nd_get_slice_cbuffer(r, rs, re, row, rshape, sizeof(row)), 0);
  CHECK_EQ_INT(r->shape[0], 20);
  for (int i = 0; i < 10; i++) CHECK_EQ_INT(row[i], 150 + i);
  CHECK_EQ_INT(b2nd_refresh(r), 0); /* already current */

  /* refresh() alone observes a shrink that drops chunks. */
  int64_t shrunk[2] = {5, 10};
  CHECK_EQ_INT(b2nd_resize(w, shrunk, NULL), 0);
  CHECK_EQ_INT(b2nd_refresh(r), 1);
  CHECK_EQ_INT(r->shape[0], 5);
  CHECK_EQ_INT(r->nitems, 50);
  CHECK_EQ_INT(r->sc->nchunks, w->sc->nchunks);

  /* Another chunkshape renamed over the path is not followed. */
  b2nd_free(w);
  blosc2_remove_urlpath("test_swmr_other.b2nd");
  w = make("test_swmr_other.b2nd", NULL, 10, 2);
  b2nd_free(w);
  CHECK_EQ_INT(rename("test_swmr_other.b2nd", path), 0);
  CHECK_EQ_INT(b2nd_refresh(r), BLOSC2_ERROR_DATA);
  b2nd_free(r);
  blosc2_remove_urlpath(path);
}

static void unlocked_schunk(void) {
  const char *path = "test_swmr.b2frame";
  blosc2_remove_urlpath(path);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_storage st = {.contiguous = true, .urlpath = (char *)path, .cparams = &cp};
  blosc2_schunk *w = blosc2_schunk_new(&st);
  CHECK(w != NULL);
  if (w == NULL) return;
  int32_t data[1000];
  for (int i = 0; i < 1000; i++) data[i] = i;
  CHECK_EQ_INT(blosc2_schunk_append_buffer(w, data, sizeof(data)), 1);
  blosc2_schunk *r = blosc2_schunk_open(path);
  CHECK(r != NULL);
  if (r == NULL) return;
  CHECK_EQ_INT(blosc2_schunk_refresh(r), 0);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(w, data, sizeof(data)), 2);
  CHECK_EQ_INT(r->nchunks, 1); /* the struct shows the last call's view */
  CHECK_EQ_INT(blosc2_schunk_refresh(r), 1);
  CHECK_EQ_INT(r->nchunks, 2);
  CHECK_EQ_INT(r->nbytes, w->nbytes);

  /* A vlmetalayer written by the writer is read by the reader's next call. */
  CHECK(blosc2_vlmeta_add(w, "beat", (uint8_t *)"new and longer", 14, NULL) >= 0);
  uint8_t *content = NULL;
  int32_t len = 0;
  CHECK(blosc2_vlmeta_get(r, "beat", &content, &len) >= 0);
  CHECK_EQ_INT(len, 14);
  CHECK(content != NULL && memcmp(content, "new and longer", 14) == 0);
  free(content);
  blosc2_schunk_free(w);
  blosc2_schunk_free(r);
  blosc2_remove_urlpath(path);
}

static void locked_same_length(void) {
  const char *path = "test_swmr_locked.b2nd";
  const char *lockpath = "test_swmr_locked.b2nd.b2lock";
  blosc2_remove_urlpath(path);
  blosc2_stdio_params locking = {.locking = true};
  blosc2_io io = {.id = BLOSC2_IO_FILESYSTEM, .name = "filesystem", .params = &locking};
  b2nd_array_t *w = make(path, &io, 10, 10);
  CHECK(exists(lockpath)); /* the array was made locking */
  /* As python-blosc2 opens a locking array. */
  blosc2_schunk *rsc = blosc2_schunk_open_offset_udio(path, 0, &io);
  CHECK(rsc != NULL);
  b2nd_array_t *r = NULL;
  if (rsc != NULL) CHECK_EQ_INT(b2nd_from_schunk(rsc, &r), 0);
  if (w == NULL || r == NULL) return;
  struct stat before;
  CHECK(stat(path, &before) == 0);
  CHECK_EQ_INT(b2nd_refresh(r), 0);

  /* A shrink within the one chunk rewrites the metalayer only: the frame
     keeps its length, and only the generation counter tells. */
  int64_t shrunk[2] = {8, 10};
  CHECK_EQ_INT(b2nd_resize(w, shrunk, NULL), 0);
  struct stat after;
  CHECK(stat(path, &after) == 0);
  CHECK_EQ_INT(after.st_size, before.st_size);
  CHECK_EQ_INT(b2nd_refresh(r), 1);
  CHECK_EQ_INT(r->shape[0], 8);
  b2nd_free(w);
  b2nd_free(r);

  CHECK_EQ_INT(blosc2_remove_urlpath(path), 0);
  CHECK(!exists(path));
  CHECK(!exists(lockpath));
}

int main(void) {
  blosc2_init();
  unlocked_array();
  unlocked_schunk();
  locked_same_length();
  blosc2_destroy();
  return test_finish("test_swmr");
}
