/* A process that used several threads forks, and the child uses several
   threads too. The child inherits the library's worker pools but not their
   threads: it once queued its blocks for workers that do not exist and
   waited for ever, as the reference still does. It must make workers of
   its own and get the same bytes; the parent's keep working. An alarm
   stops a hung child, which then fails the test. */
#include "test_common.h"

#include <sys/wait.h>
#include <unistd.h>

#define NITEMS (1 << 20)

static int32_t src[NITEMS], out[NITEMS];
static uint8_t chunk[sizeof src + BLOSC2_MAX_OVERHEAD];

/* Compresses and decompresses with `nthreads` through contexts and the
   global calls; the number of steps that gave the expected result (of 4). */
static int round_trips(int16_t nthreads) {
  int good = 0;
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = sizeof(int32_t);
  cp.nthreads = nthreads;
  cp.blocksize = 32 * 1024; /* 128 blocks to share */
  blosc2_context *cctx = blosc2_create_cctx(cp);
  int csize = cctx ? blosc2_compress_ctx(cctx, src, sizeof src, chunk, sizeof chunk) : -1;
  blosc2_free_ctx(cctx);
  good += csize > 0 && csize < (int)sizeof src;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = nthreads;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  memset(out, 0, sizeof out);
  int dsize = dctx && csize > 0 ? blosc2_decompress_ctx(dctx, chunk, csize, out, sizeof out) : -1;
  blosc2_free_ctx(dctx);
  good += dsize == (int)sizeof src && memcmp(out, src, sizeof src) == 0;

  blosc2_set_nthreads(nthreads);
  csize = blosc2_compress(5, BLOSC_BITSHUFFLE, sizeof(int32_t), src, sizeof src, chunk, sizeof chunk);
  good += csize > 0 && csize < (int)sizeof src;
  memset(out, 0, sizeof out);
  dsize = csize > 0 ? blosc2_decompress(chunk, csize, out, sizeof out) : -1;
  good += dsize == (int)sizeof src && memcmp(out, src, sizeof src) == 0;
  return good;
}

int main(void) {
  blosc2_init();
  for (int i = 0; i < NITEMS; i++) src[i] = i / 3 + (i % 7) * 1000;
  /* The parent's pools (two threads, then four) exist before the fork. */
  CHECK_EQ_INT(round_trips(2), 4);
  CHECK_EQ_INT(round_trips(4), 4);
  fflush(stdout);
  fflush(stderr);
  pid_t child = fork();
  CHECK(child >= 0);
  if (child == 0) {
    alarm(20);
    int ok = round_trips(2) == 4 && round_trips(4) == 4 && round_trips(1) == 4;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  CHECK_EQ_INT(waitpid(child, &status, 0), child);
  CHECK(!WIFSIGNALED(status)); /* SIGALRM: the child hung */
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  /* And the parent's own workers still run its calls. */
  CHECK_EQ_INT(round_trips(2), 4);
  CHECK_EQ_INT(round_trips(4), 4);
  blosc2_destroy();
  return test_finish("test_fork");
}
