/*
 * Speed of the standalone shuffle filters, one block in cache at a time: blosc2_shuffle and
 * blosc2_unshuffle (or, with --bit, blosc2_bitshuffle and blosc2_bitunshuffle) over the same
 * block again and again. Built against either library's headers (it uses only names both
 * declare), so scripts/shuffle-bench.sh can put the two side by side.
 *
 * Why a program of its own: in the chunk benchmark (bench.c) a filter's time is mixed with its
 * codec's and with reading the input from memory, so a kernel twice as slow as it could be shows
 * as a few percent. Here the block and its output stay in L2, so what is timed is the kernel.
 *
 * Usage: shuffle [--bit] [--typesizes T,T,...] [--blocksizes B,B,...]
 * Prints one line per (typesize, blocksize): kind, typesize, blocksize, then the forward and
 * inverse speeds in GB/s (bytes of the block per second), each the best of 5 timings.
 */
#define _POSIX_C_SOURCE 200809L
#include <b2nd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int parse_list(const char *s, int32_t *out, int max) {
  int n = 0;
  while (*s && n < max) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v <= 0 || v > (1L << 30)) return -1;
    out[n++] = (int32_t)v;
    s = *end == ',' ? end + 1 : end;
  }
  return *s ? -1 : n;
}

typedef int32_t (*filter_fn)(int32_t typesize, int32_t blocksize, const void *src, void *dest);

/* Best seconds for `reps` calls of `f`, over 5 timings. */
static double best_of(filter_fn f, int32_t typesize, int32_t blocksize, const void *src,
                      void *dest, int reps) {
  double best = 1e30;
  for (int t = 0; t < 5; t++) {
    double t0 = now();
    for (int i = 0; i < reps; i++) {
      if (f(typesize, blocksize, src, dest) < 0) {
        fprintf(stderr, "filter failed: typesize %d blocksize %d\n", typesize, blocksize);
        exit(1);
      }
    }
    double dt = now() - t0;
    if (dt < best) best = dt;
  }
  return best;
}

int main(int argc, char **argv) {
  int bit = 0;
  /* 1000 and 8000 bytes: blocks whose item count is not a multiple of 32, whose last items
     the vector kernels do not cover in whole groups (a small b2nd block, a chunk's last one). */
  int32_t typesizes[16] = {4, 8, 16},
          blocksizes[16] = {1000, 8000, 32768, 65536, 262144, 262144 + 1024};
  int ntypes = 3, nblocks = 6;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--bit")) {
      bit = 1;
    } else if (!strcmp(argv[i], "--typesizes") && i + 1 < argc) {
      ntypes = parse_list(argv[++i], typesizes, 16);
    } else if (!strcmp(argv[i], "--blocksizes") && i + 1 < argc) {
      nblocks = parse_list(argv[++i], blocksizes, 16);
    } else {
      ntypes = -1;
    }
    if (ntypes < 0 || nblocks < 0) {
      fprintf(stderr, "usage: %s [--bit] [--typesizes T,T,...] [--blocksizes B,B,...]\n", argv[0]);
      return 2;
    }
  }
  blosc2_init();
  filter_fn forward = bit ? blosc2_bitshuffle : blosc2_shuffle;
  filter_fn inverse = bit ? blosc2_bitunshuffle : blosc2_unshuffle;
  for (int b = 0; b < nblocks; b++) {
    int32_t bs = blocksizes[b];
    /* Page-aligned, as a codec's scratch usually is. */
    void *s = NULL, *d = NULL;
    if (posix_memalign(&s, 4096, (size_t)bs) != 0 || posix_memalign(&d, 4096, (size_t)bs) != 0) {
      fprintf(stderr, "out of memory (%d bytes)\n", bs);
      return 1;
    }
    uint8_t *src = s, *dst = d;
    for (int32_t i = 0; i < bs; i++) src[i] = (uint8_t)(i * 7 + i / 13);
    memset(dst, 0, (size_t)bs);
    /* About 0.2 s per timing set. */
    int reps = (int)(2e8 / bs) + 1;
    for (int t = 0; t < ntypes; t++) {
      int32_t ts = typesizes[t];
      if (bit && bs % (8 * ts) != 0) continue; /* the bitshuffle needs whole groups of 8 items */
      double fwd = best_of(forward, ts, bs, src, dst, reps);
      double inv = best_of(inverse, ts, bs, dst, src, reps);
      printf("%s\t%d\t%d\t%.2f\t%.2f\n", bit ? "bitshuffle" : "shuffle", ts, bs,
             (double)bs * reps / fwd / 1e9, (double)bs * reps / inv / 1e9);
    }
    free(src);
    free(dst);
  }
  blosc2_destroy();
  return 0;
}
