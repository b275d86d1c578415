/* Opt-in frame locking: with `blosc2_stdio_params.locking`, a
   blosc2_schunk_lock()/unlock() bracket holds an exclusive flock on the
   sidecar `<file>.b2lock` (`<dir>/.b2lock` for sparse frames), re-entrantly;
   another handle's operations see the writes made in between; without
   locking both calls are no-ops and no sidecar appears. */
#define _DEFAULT_SOURCE
#include "test_common.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define ITEMS 1000

static bool exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

/* Whether a non-blocking exclusive flock on `path` fails with EWOULDBLOCK
   (someone holds the lock); a successful probe is released at once. */
static bool lock_is_held(const char *path) {
  int fd = open(path, O_RDWR);
  CHECK(fd >= 0);
  if (fd < 0) return false;
  int rc = flock(fd, LOCK_EX | LOCK_NB);
  bool held = rc != 0 && errno == EWOULDBLOCK;
  if (rc == 0) flock(fd, LOCK_UN);
  close(fd);
  return held;
}

static void fill(int32_t *d, int k) {
  for (int i = 0; i < ITEMS; i++) d[i] = k * 7 + i;
}

static void run(bool contiguous) {
  const char *path = contiguous ? "test_schunk_lock.b2frame" : "test_schunk_lock_dir.b2frame";
  char lockpath[128];
  snprintf(lockpath, sizeof(lockpath), contiguous ? "%s.b2lock" : "%s/.b2lock", path);
  blosc2_remove_urlpath(path);
  remove(lockpath);

  blosc2_stdio_params locking = {.locking = true};
  blosc2_io io = {.id = BLOSC2_IO_FILESYSTEM, .name = "filesystem", .params = &locking};
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_storage st = {.contiguous = contiguous, .urlpath = (char *)path, .cparams = &cp,
                       .io = &io};
  blosc2_schunk *a = blosc2_schunk_new(&st);
  CHECK(a != NULL);
  if (a == NULL) return;
  int32_t data[ITEMS];
  fill(data, 0);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(a, data, sizeof(data)), 1);
  CHECK(exists(lockpath));
  CHECK(!lock_is_held(lockpath)); /* released after the operation */

  blosc2_schunk *b = blosc2_schunk_open_udio(path, &io);
  CHECK(b != NULL);
  if (b == NULL) {
    blosc2_schunk_free(a);
    return;
  }
  CHECK_EQ_INT(b->nchunks, 1);

  /* The bracket holds the lock, re-entrantly. */
  CHECK_EQ_INT(blosc2_schunk_lock(a), 0);
  CHECK(lock_is_held(lockpath));
  CHECK_EQ_INT(blosc2_schunk_lock(a), 0);
  fill(data, 1);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(a, data, sizeof(data)), 2); /* nests */
  CHECK_EQ_INT(blosc2_schunk_unlock(a), 0);
  CHECK(lock_is_held(lockpath)); /* still at depth 1 */
  CHECK_EQ_INT(blosc2_schunk_unlock(a), 0);
  CHECK(!lock_is_held(lockpath));
  CHECK_EQ_INT(blosc2_schunk_unlock(a), 0); /* not held: no-op */

  /* `b` has not seen the append; its next mutation re-reads the frame
     first, so it appends after chunk 1 instead of overwriting it. */
  CHECK_EQ_INT(b->nchunks, 1);
  fill(data, 2);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(b, data, sizeof(data)), 3);
  CHECK_EQ_INT(blosc2_schunk_refresh(a), 1);
  CHECK_EQ_INT(a->nchunks, 3);
  CHECK_EQ_INT(blosc2_schunk_refresh(a), 0);
  int32_t got[ITEMS];
  /* Any call on a locking handle first catches up with other handles. */
  fill(data, 3);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(b, data, sizeof(data)), 4);
  CHECK_EQ_INT(a->nchunks, 3);
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(a, 3, got, sizeof(got)), sizeof(got));
  CHECK(memcmp(got, data, sizeof(got)) == 0);
  CHECK_EQ_INT(a->nchunks, 4);
  for (int k = 0; k < 3; k++) {
    fill(data, k);
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(a, k, got, sizeof(got)), sizeof(got));
    CHECK(memcmp(got, data, sizeof(got)) == 0);
  }
  blosc2_schunk_free(b);
  blosc2_schunk_free(a);

  /* Without locking: no-ops, no sidecar. */
  blosc2_remove_urlpath(path);
  remove(lockpath);
  st.io = NULL;
  blosc2_schunk *c = blosc2_schunk_new(&st);
  CHECK(c != NULL);
  if (c) {
    CHECK_EQ_INT(blosc2_schunk_lock(c), 0);
    CHECK_EQ_INT(blosc2_schunk_append_buffer(c, data, sizeof(data)), 1);
    CHECK_EQ_INT(blosc2_schunk_unlock(c), 0);
    CHECK(!exists(lockpath));
    blosc2_schunk_free(c);
  }
  /* In-memory super-chunks never lock. */
  blosc2_storage mem = BLOSC2_STORAGE_DEFAULTS;
  mem.cparams = &cp;
  blosc2_schunk *m = blosc2_schunk_new(&mem);
  CHECK_EQ_INT(blosc2_schunk_lock(m), 0);
  CHECK_EQ_INT(blosc2_schunk_unlock(m), 0);
  blosc2_schunk_free(m);
  CHECK_EQ_INT(blosc2_schunk_lock(NULL), BLOSC2_ERROR_NULL_POINTER);
  blosc2_remove_urlpath(path);
  remove(lockpath);
}

int main(void) {
  blosc2_init();
  run(true);
  run(false);
  /* BLOSC_LOCKING turns locking on for file-system handles. */
  const char *path = "test_schunk_lock_env.b2frame";
  blosc2_remove_urlpath(path);
  remove("test_schunk_lock_env.b2frame.b2lock");
  setenv("BLOSC_LOCKING", "1", 1);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_storage st = {.contiguous = true, .urlpath = (char *)path, .cparams = &cp};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  CHECK(sc != NULL);
  if (sc) {
    CHECK_EQ_INT(blosc2_schunk_lock(sc), 0);
    CHECK(lock_is_held("test_schunk_lock_env.b2frame.b2lock"));
    CHECK_EQ_INT(blosc2_schunk_unlock(sc), 0);
    blosc2_schunk_free(sc);
  }
  setenv("BLOSC_LOCKING", "0", 1);
  sc = blosc2_schunk_open(path);
  CHECK(sc != NULL);
  if (sc) {
    remove("test_schunk_lock_env.b2frame.b2lock");
    CHECK_EQ_INT(blosc2_schunk_lock(sc), 0);
    CHECK(!exists("test_schunk_lock_env.b2frame.b2lock"));
    CHECK_EQ_INT(blosc2_schunk_unlock(sc), 0);
    blosc2_schunk_free(sc);
  }
  unsetenv("BLOSC_LOCKING");
  blosc2_remove_urlpath(path);
  remove("test_schunk_lock_env.b2frame.b2lock");
  blosc2_destroy();
  return test_finish("test_schunk_lock");
}
