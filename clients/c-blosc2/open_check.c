/*
 * open_check: does a file written by an example open and decompress with the
 * library this program is linked to (the harness links it to the reference)?
 *
 * Usage: open_check PATH...   (a contiguous frame file or a sparse-frame dir)
 * For each path: open it as a super-chunk, decompress every chunk (variable-
 * length-block chunks block by block), and when it carries a "b2nd" metalayer
 * also open it as an n-dimensional array.  Prints one line per path; exits 1 if
 * any path fails.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "blosc2.h"
#include "b2nd.h"

/* Decompress chunk `nchunk` of `schunk`; returns 0 on success. */
static int check_chunk(blosc2_schunk *schunk, int64_t nchunk) {
  uint8_t *chunk = NULL;
  bool needs_free = false;
  int cbytes = blosc2_schunk_get_chunk(schunk, nchunk, &chunk, &needs_free);
  if (cbytes < 0 || chunk == NULL) {
    return -1;
  }
  int rc = 0;
  int32_t nbytes = 0;
  if (blosc2_cbuffer_sizes(chunk, &nbytes, NULL, NULL) < 0) {
    rc = -1;
  }
  int32_t nblocks = 0;
  if (rc == 0 && blosc2_vlchunk_get_nblocks(chunk, cbytes, &nblocks) == 0) {
    /* Variable-length blocks: each block comes back in its own buffer. */
    void **dests = calloc((size_t) nblocks + 1, sizeof(void *));
    int32_t *sizes = calloc((size_t) nblocks + 1, sizeof(int32_t));
    int got = blosc2_vldecompress_ctx(schunk->dctx, chunk, cbytes, dests, sizes, nblocks);
    if (got != nblocks) {
      rc = -1;
    }
    for (int32_t i = 0; i < nblocks; i++) {
      free(dests[i]);
    }
    free(dests);
    free(sizes);
  } else if (rc == 0) {
    void *dest = malloc(nbytes > 0 ? (size_t) nbytes : 1);
    int dsize = blosc2_decompress_ctx(schunk->dctx, chunk, cbytes, dest, nbytes);
    if (dsize != nbytes) {
      rc = -1;
    }
    free(dest);
  }
  if (needs_free) {
    free(chunk);
  }
  return rc;
}

static int check_path(const char *path) {
  blosc2_schunk *schunk = blosc2_schunk_open(path);
  if (schunk == NULL) {
    printf("FAIL %s: blosc2_schunk_open failed\n", path);
    return -1;
  }
  for (int64_t i = 0; i < schunk->nchunks; i++) {
    if (check_chunk(schunk, i) != 0) {
      printf("FAIL %s: chunk %lld does not decompress\n", path, (long long) i);
      blosc2_schunk_free(schunk);
      return -1;
    }
  }
  int64_t nchunks = schunk->nchunks;
  bool is_b2nd = blosc2_meta_exists(schunk, "b2nd") >= 0;
  blosc2_schunk_free(schunk);
  if (is_b2nd) {
    b2nd_array_t *array = NULL;
    if (b2nd_open(path, &array) < 0 || array == NULL) {
      printf("FAIL %s: b2nd_open failed\n", path);
      return -1;
    }
    b2nd_free(array);
  }
  printf("ok   %s: %lld chunks%s\n", path, (long long) nchunks, is_b2nd ? ", b2nd array" : "");
  return 0;
}

int main(int argc, char **argv) {
  int failed = 0;
  blosc2_init();
  for (int i = 1; i < argc; i++) {
    if (check_path(argv[i]) != 0) {
      failed = 1;
    }
  }
  blosc2_destroy();
  return failed;
}
