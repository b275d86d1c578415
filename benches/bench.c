/*
 * Side-by-side benchmark, written against the reference b2nd.h/blosc2.h API only, so the
 * same source builds against libb2nd and against the reference libblosc2. Prints one TSV
 * line per measurement:
 *   <row>\t<metric>\t<value>
 * metrics: cMBps, dMBps (uncompressed MB per second), ratio, slice_us (median microseconds),
 * call_ns (nanoseconds per call of a small-call row), memcpy_MBps (the machine's memory
 * bandwidth, the ceiling).
 *
 * Usage: bench [--quick] [--only SUBSTRING] [--exact ROW] [--list] [--out FILE] [--tmp DIR]
 *              [--reps N] [--clevels L,L,...] [--median]
 *   --exact runs the one row (configuration) of that name, --list prints the names of the
 *   rows that would run instead of running them, --out appends the lines to FILE, --reps runs
 *   each timed operation exactly N times, --median reports each timed operation's median call
 *   instead of its fastest.
 * -DBENCH_NO_SCHUNK / -DBENCH_NO_B2ND leave out the super-chunk / b2nd rows (for a
 * library that does not export those calls yet).
 * -DBENCH_PLUGIN builds a shared object exporting bench_run(argc, argv) instead of main:
 * scripts/bench.py builds one against each library and benches/driver.c loads both into
 * one process, so each row is measured for the two libraries seconds apart.
 */
/* POSIX 2008 with the XSI extensions: clock_gettime, and sync for settle_disk. */
#define _XOPEN_SOURCE 700
#include <b2nd.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* Every buffer the rows time starts on a page boundary, so that both libraries work between
   buffers at the same offsets in every process. With plain malloc a large buffer's offset
   depends on what the process allocated and freed before (glibc moves its mmap threshold as
   blocks are freed), which differs between the driver, where both libraries allocate, and a
   plain run: in an ad-hoc comparison the random-byte decompression rows (a plain copy in both
   libraries) put b2nd ahead in separate processes and behind in the driver; page-aligned, both
   settings ranked the libraries alike. */
static void *bench_alloc(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 4096, n ? n : 1) != 0) {
    fprintf(stderr, "bench: out of memory (%zu bytes)\n", n);
    exit(1);
  }
  return p;
}

typedef struct {
  const char *name;
  int32_t typesize;
  uint8_t *data;
  int32_t nbytes;
} dataset;

/* 3-D float64 smooth field, int32 random small range, float32 noisy sine, constant, random bytes. */
static void make_datasets(dataset *ds, int32_t nbytes) {
  int32_t n8 = nbytes / 8, n4 = nbytes / 4;
  double *f64 = bench_alloc((size_t)n8 * 8);
  int side = (int)cbrt((double)n8);
  for (int32_t i = 0; i < n8; i++) {
    int x = i % side, y = (i / side) % side, z = i / (side * side);
    f64[i] = sin(x * 0.05) * cos(y * 0.03) + z * 0.01;
  }
  ds[0] = (dataset){"smooth3d-f8", 8, (uint8_t *)f64, n8 * 8};
  int32_t *i32 = bench_alloc((size_t)n4 * 4);
  for (int32_t i = 0; i < n4; i++) i32[i] = (int32_t)(rng() % 100);
  ds[1] = (dataset){"randint-i4", 4, (uint8_t *)i32, n4 * 4};
  float *f32 = bench_alloc((size_t)n4 * 4);
  for (int32_t i = 0; i < n4; i++) f32[i] = (float)(sin(i * 0.001) + (double)(rng() % 1000) * 1e-6);
  ds[2] = (dataset){"noisysine-f4", 4, (uint8_t *)f32, n4 * 4};
  double *c = bench_alloc((size_t)n8 * 8);
  for (int32_t i = 0; i < n8; i++) c[i] = 3.25;
  ds[3] = (dataset){"constant-f8", 8, (uint8_t *)c, n8 * 8};
  uint8_t *rb = bench_alloc((size_t)nbytes);
  for (int32_t i = 0; i < nbytes; i++) rb[i] = (uint8_t)rng();
  ds[4] = (dataset){"randbytes-u1", 1, rb, nbytes};
}

/* --reps N: run each timed operation exactly N times instead of for a minimum time (for
   instruction counts under callgrind, see scripts/instructions.sh). */
static int fixed_reps;

/* --median: report the median time of a timed operation's calls instead of the fastest. The
   fastest call is the default (what a machine can do when nothing disturbs it); the median
   shows whether a difference between the libraries holds for a typical call or only at the
   fast edge of each one's spread. */
static int median_mode;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The call times of the operation being timed (for --median); calls past the capacity are
   timed but not kept, so the median is that of the first `call_cap` calls. */
#define CALL_CAP (1 << 20)
static double *call_times;

static void keep_call(int rep, double t) {
  if (!median_mode || rep >= CALL_CAP) return;
  if (call_times == NULL && (call_times = malloc(CALL_CAP * sizeof(double))) == NULL) {
    fprintf(stderr, "out of memory for --median\n");
    exit(1);
  }
  call_times[rep] = t;
}

static double median_call(int reps) {
  int n = reps < CALL_CAP ? reps : CALL_CAP;
  qsort(call_times, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? call_times[n / 2] : 0.5 * (call_times[n / 2 - 1] + call_times[n / 2]);
}

/* Repeats `op` until at least `mintime` seconds pass (or `fixed_reps` times); returns the best
   time of one call (with --median, the median one). */
#define BEST_TIME(best, mintime, op)                    \
  do {                                                  \
    double t_start_ = now(), t_end_ = t_start_;         \
    best = 1e30;                                        \
    int reps_ = 0;                                      \
    while (fixed_reps ? reps_ < fixed_reps : (t_end_ - t_start_ < (mintime) || reps_ < 3)) { \
      double t0_ = now();                               \
      op;                                               \
      double t1_ = now();                               \
      if (t1_ - t0_ < best) best = t1_ - t0_;           \
      keep_call(reps_, t1_ - t0_);                      \
      t_end_ = t1_;                                     \
      reps_++;                                          \
    }                                                   \
    if (median_mode) best = median_call(reps_);         \
  } while (0)

/* Where results go, and which rows run (set by bench_run's arguments). */
static FILE *out;
static const char *exact_row;
static int list_rows;

/* Whether `row` runs: --exact names it, or --only is a substring of it. With --list the
   row's name is printed and it does not run. */
static int matches(const char *row, const char *only) {
  int selected = exact_row ? strcmp(row, exact_row) == 0 : (!only || strstr(row, only) != NULL);
  if (selected && list_rows) {
    fprintf(out, "%s\n", row);
    return 0;
  }
  return selected;
}

/* The ceiling is measured whatever --only says (it is one of the rows --exact can name). */
static void bench_memcpy(int32_t nbytes, double mintime) {
  if (!matches("memcpy", NULL)) return;
  uint8_t *a = bench_alloc((size_t)nbytes), *b = bench_alloc((size_t)nbytes);
  memset(a, 1, (size_t)nbytes);
  double best;
  BEST_TIME(best, mintime, memcpy(b, a, (size_t)nbytes));
  fprintf(out, "memcpy\tmemcpy_MBps\t%.1f\n", nbytes / best / 1e6);
  free(a);
  free(b);
}

/* The chunk rows' clevels: 1 and 5 unless --clevels lists others (1..9), which --quick keeps. */
static int clevels[9] = {1, 5};
static int nclevels = 2, custom_clevels = 0;

/* Parses --clevels' comma-separated list; 0 if it is not one of 1..9 items in 1..9. */
static int parse_clevels(const char *s) {
  int n = 0;
  while (*s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 1 || v > 9 || n == 9 || (*end != ',' && *end != '\0')) return 0;
    clevels[n++] = (int)v;
    s = *end ? end + 1 : end;
  }
  if (n == 0) return 0;
  nclevels = n;
  custom_clevels = 1;
  return 1;
}

static int bench_chunks(dataset *ds, int nds, const char *only, double mintime, int quick) {
  const char *codecs[] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};
  /* 35 is BLOSC_FILTER_BYTEDELTA (blosc2/filters-registry.h), a global plugin of the reference
     that python-blosc2 recommends after a shuffle; its rows are run for LZ4 and Zstd only. */
  const int filters[] = {BLOSC_SHUFFLE, BLOSC_BITSHUFFLE, 35};
  const char *fnames[] = {"shuffle", "bitshuffle", "shuffle+bytedelta"};
  for (int d = 0; d < nds; d++) {
    int32_t nbytes = ds[d].nbytes;
    uint8_t *comp = bench_alloc((size_t)nbytes + BLOSC2_MAX_OVERHEAD);
    uint8_t *back = bench_alloc((size_t)nbytes);
    for (int c = 0; c < 5; c++)
      for (int l = 0; l < nclevels; l++)
        for (int f = 0; f < 3; f++)
          for (int nt = 1; nt <= 2; nt++) {
            if (quick && ((!custom_clevels && l == 0) || nt == 2)) continue;
            if (f == 2 && strcmp(codecs[c], "lz4") != 0 && strcmp(codecs[c], "zstd") != 0) continue;
            char row[160];
            snprintf(row, sizeof row, "chunk/%s/%s/c%d/%s/t%d", ds[d].name, codecs[c], clevels[l], fnames[f], nt);
            if (!matches(row, only)) continue;
            blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
            cp.compcode = (uint8_t)blosc2_compname_to_compcode(codecs[c]);
            cp.clevel = (uint8_t)clevels[l];
            cp.typesize = ds[d].typesize;
            cp.nthreads = (int16_t)nt;
            for (int i = 0; i < BLOSC2_MAX_FILTERS; i++) cp.filters[i] = 0;
            cp.filters[BLOSC2_MAX_FILTERS - 1] = (uint8_t)filters[f];
            if (f == 2) {
              cp.filters[BLOSC2_MAX_FILTERS - 2] = BLOSC_SHUFFLE;
              cp.filters_meta[BLOSC2_MAX_FILTERS - 1] = (uint8_t)ds[d].typesize;
            }
            blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
            dp.nthreads = (int16_t)nt;
            blosc2_context *cctx = blosc2_create_cctx(cp);
            blosc2_context *dctx = blosc2_create_dctx(dp);
            int csize = 0;
            double tc, td;
            BEST_TIME(tc, mintime, csize = blosc2_compress_ctx(cctx, ds[d].data, nbytes, comp, nbytes + BLOSC2_MAX_OVERHEAD));
            if (csize <= 0) {
              fprintf(stderr, "%s: compression failed (%d)\n", row, csize);
              return 1;
            }
            int dsize = 0;
            BEST_TIME(td, mintime, dsize = blosc2_decompress_ctx(dctx, comp, csize, back, nbytes));
            if (dsize != nbytes || memcmp(back, ds[d].data, (size_t)nbytes) != 0) {
              fprintf(stderr, "%s: round trip mismatch (%d)\n", row, dsize);
              return 1;
            }
            fprintf(out, "%s\tcMBps\t%.1f\n%s\tdMBps\t%.1f\n%s\tratio\t%.3f\n", row, nbytes / tc / 1e6, row,
                   nbytes / td / 1e6, row, (double)nbytes / csize);
            fflush(out);
            blosc2_free_ctx(cctx);
            blosc2_free_ctx(dctx);
          }
    free(comp);
    free(back);
  }
  return 0;
}


/* Calls per timed batch of a small-call row: one call of 64 bytes takes a fraction of a
   microsecond, less than clock_gettime's own cost and resolution, so a batch of calls is timed
   and divided. With --reps (scripts/instructions.sh) a batch is one call, so that callgrind's
   dump per call of small_call is one call's instructions. */
#define SMALL_BATCH 64

/* Repeats a batch of `batch` runs of `op` until `mintime` passes (or `fixed_reps` batches);
   `best` is the best (with --median, the median) time of one run of `op`, in seconds. */
#define BEST_BATCH(best, mintime, batch, op)                                    \
  do {                                                                          \
    double t_start_ = now(), t_end_ = t_start_;                                 \
    best = 1e30;                                                                \
    int reps_ = 0;                                                              \
    while (fixed_reps ? reps_ < fixed_reps : (t_end_ - t_start_ < (mintime) || reps_ < 3)) { \
      double t0_ = now();                                                       \
      for (int k_ = 0; k_ < (batch); k_++) { op; }                              \
      double t1_ = now();                                                       \
      double per_ = (t1_ - t0_) / (batch);                                      \
      if (per_ < best) best = per_;                                             \
      keep_call(reps_, per_);                                                   \
      t_end_ = t1_;                                                             \
      reps_++;                                                                  \
    }                                                                           \
    if (median_mode) best = median_call(reps_);                                 \
  } while (0)

enum { OP_COMPRESS_CTX, OP_DECOMPRESS_CTX, OP_GETITEM_CTX, OP_COMPRESS, OP_DECOMPRESS, OP_CBUFFER_SIZES, NOPS };
static const char *op_names[NOPS] = {"compress_ctx", "decompress_ctx", "getitem_ctx", "compress", "decompress",
                                     "cbuffer_sizes"};

/* One call of a small-call row. Not inlined, so that scripts/instructions.sh can count the
   instructions of each call (callgrind's --toggle-collect=small_call). */
__attribute__((noinline)) int small_call(int op, blosc2_context *cctx, blosc2_context *dctx, const uint8_t *src,
                                         int32_t nbytes, uint8_t *comp, int32_t csize, uint8_t *back,
                                         int32_t typesize) {
  int32_t nb, cb, bs;
  switch (op) {
    case OP_COMPRESS_CTX: return blosc2_compress_ctx(cctx, src, nbytes, comp, nbytes + BLOSC2_MAX_OVERHEAD);
    case OP_DECOMPRESS_CTX: return blosc2_decompress_ctx(dctx, comp, csize, back, nbytes);
    case OP_GETITEM_CTX: return blosc2_getitem_ctx(dctx, comp, csize, nbytes / typesize / 2, 4, back, nbytes);
    case OP_COMPRESS:
      return blosc2_compress(5, BLOSC_SHUFFLE, typesize, src, nbytes, comp, nbytes + BLOSC2_MAX_OVERHEAD);
    case OP_DECOMPRESS: return blosc2_decompress(comp, csize, back, nbytes);
    default: return blosc2_cbuffer_sizes(comp, &nb, &cb, &bs) < 0 ? -1 : nb;
  }
}

/* Small calls, 64 B to 16 KiB of the smooth float64 field at clevel 5 with shuffle, one thread:
   the per-call time (call_ns) of the context calls, the global-state calls and the header query.
   What these measure is the fixed cost of a call (context setup, header parsing, allocation),
   which the 4 MiB chunk rows cannot see. */
static int bench_small(dataset *ds, const char *only, double mintime) {
  const char *codecs[] = {"blosclz", "lz4", "zstd"};
  const int32_t sizes[] = {64, 256, 1024, 4096, 16384};
  int batch = fixed_reps ? 1 : SMALL_BATCH;
  int32_t ts = ds[0].typesize;
  for (int c = 0; c < 3; c++)
    for (int s = 0; s < 5; s++)
      for (int op = 0; op < NOPS; op++) {
        int32_t nbytes = sizes[s];
        char row[160];
        snprintf(row, sizeof row, "small/%s/%s/%dB", op_names[op], codecs[c], nbytes);
        if (!matches(row, only)) continue;
        blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.compcode = (uint8_t)blosc2_compname_to_compcode(codecs[c]);
        cp.clevel = 5;
        cp.typesize = ts;
        cp.nthreads = 1;
        blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
        dp.nthreads = 1;
        blosc2_context *cctx = blosc2_create_cctx(cp);
        blosc2_context *dctx = blosc2_create_dctx(dp);
        blosc1_set_compressor(codecs[c]);
        blosc2_set_nthreads(1);
        uint8_t *comp = bench_alloc((size_t)nbytes + BLOSC2_MAX_OVERHEAD);
        uint8_t *back = bench_alloc((size_t)nbytes);
        int csize = blosc2_compress_ctx(cctx, ds[0].data, nbytes, comp, nbytes + BLOSC2_MAX_OVERHEAD);
        if (csize <= 0) {
          fprintf(stderr, "%s: compression failed (%d)\n", row, csize);
          return 1;
        }
        int want = op == OP_GETITEM_CTX ? 4 * ts : op == OP_COMPRESS || op == OP_COMPRESS_CTX ? -1 : nbytes;
        int r = 0;
        double t;
        BEST_BATCH(t, mintime, batch, r = small_call(op, cctx, dctx, ds[0].data, nbytes, comp, csize, back, ts));
        if (want < 0 ? r <= 0 : r != want) {
          fprintf(stderr, "%s: call returned %d\n", row, r);
          return 1;
        }
        /* What the calls wrote is checked outside the timing. */
        if (op == OP_DECOMPRESS_CTX || op == OP_DECOMPRESS) {
          if (memcmp(back, ds[0].data, (size_t)nbytes) != 0) { fprintf(stderr, "%s: mismatch\n", row); return 1; }
        } else if (op == OP_GETITEM_CTX) {
          if (memcmp(back, ds[0].data + (nbytes / ts / 2) * ts, (size_t)(4 * ts)) != 0) {
            fprintf(stderr, "%s: getitem mismatch\n", row);
            return 1;
          }
        } else if (op != OP_CBUFFER_SIZES) {
          if (blosc2_decompress_ctx(dctx, comp, r, back, nbytes) != nbytes ||
              memcmp(back, ds[0].data, (size_t)nbytes) != 0) {
            fprintf(stderr, "%s: compressed chunk does not decode\n", row);
            return 1;
          }
        }
        fprintf(out, "%s\tcall_ns\t%.1f\n", row, t * 1e9);
        fflush(out);
        blosc2_free_ctx(cctx);
        blosc2_free_ctx(dctx);
        free(comp);
        free(back);
      }
  return 0;
}

#ifndef BENCH_NO_SCHUNK
/* Writes the page cache's dirty pages out before a timed write to a file, so that the kernel's
   writeback of what earlier rows wrote cannot land in either library's time. Without it, one full
   run printed this library's BloscLZ append row at 0.916x, where the row run alone printed 1.44x
   and 1.50x, as most full runs do; the likeliest cause is that writeback, not shown. */
static void settle_disk(void) { sync(); }

/* Replaces each of the `nchunks` chunks of `sc` by ds[0] compressed once with `cp`, timed, and
   prints the row `row/name` in cMBps of uncompressed data replaced. */
static int update_rows(blosc2_schunk *sc, dataset *ds, blosc2_cparams *cp, int nchunks,
                       const char *row, const char *name) {
  blosc2_context *cctx = blosc2_create_cctx(*cp);
  int32_t room = ds[0].nbytes + BLOSC2_MAX_OVERHEAD;
  uint8_t *chunk = bench_alloc((size_t)room);
  int csize = blosc2_compress_ctx(cctx, ds[0].data, ds[0].nbytes, chunk, room);
  blosc2_free_ctx(cctx);
  if (csize <= 0) { fprintf(stderr, "%s: compress failed\n", row); return 1; }
  settle_disk();
  double t0 = now();
  for (int i = 0; i < nchunks; i++) {
    if (blosc2_schunk_update_chunk(sc, i, chunk, true) != nchunks) {
      fprintf(stderr, "%s: update failed\n", row);
      return 1;
    }
  }
  double t1 = now();
  fprintf(out, "%s/%s\tcMBps\t%.1f\n", row, name, (double)ds[0].nbytes * nchunks / (t1 - t0) / 1e6);
  free(chunk);
  return 0;
}

/* Super-chunk on file: append throughput and read-back throughput of >= 256 MiB (64 MiB quick). */
static int bench_schunk_file(dataset *ds, const char *only, const char *tmpdir, int quick) {
  const char *codecs[] = {"blosclz", "lz4", "zstd"};
  int nchunks = quick ? 16 : 64; /* 4 MiB chunks */
  for (int c = 0; c < 3; c++) {
    char row[160];
    snprintf(row, sizeof row, "schunk/file/smooth3d-f8-%dMiB/%s/c5/shuffle", nchunks * 4, codecs[c]);
    if (!matches(row, only)) continue;
    char urlpath[512];
    snprintf(urlpath, sizeof urlpath, "%s/bench-schunk-%s.b2frame", tmpdir, codecs[c]);
    blosc2_remove_urlpath(urlpath);
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = (uint8_t)blosc2_compname_to_compcode(codecs[c]);
    cp.clevel = 5;
    cp.typesize = ds[0].typesize;
    blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
    blosc2_storage st = {.contiguous = true, .urlpath = urlpath, .cparams = &cp, .dparams = &dp};
    blosc2_schunk *sc = blosc2_schunk_new(&st);
    if (sc == NULL) { fprintf(stderr, "%s: schunk_new failed\n", row); return 1; }
    settle_disk();
    double t0 = now();
    for (int i = 0; i < nchunks; i++) {
      if (blosc2_schunk_append_buffer(sc, ds[0].data, ds[0].nbytes) != i + 1) {
        fprintf(stderr, "%s: append failed\n", row);
        return 1;
      }
    }
    double t1 = now();
    double total = (double)ds[0].nbytes * nchunks;
    fprintf(out, "%s/append\tcMBps\t%.1f\n", row, total / (t1 - t0) / 1e6);
    fprintf(out, "%s/append\tratio\t%.3f\n", row, (double)sc->nbytes / (double)sc->cbytes);
    /* Update: every chunk replaced by the same data compressed once, in order. */
    if (update_rows(sc, ds, &cp, nchunks, row, "update") != 0) return 1;
    blosc2_schunk_free(sc);
    /* The same append and update with B2ND_FSYNC=1: this library fsyncs at each publishing point
       (docs/crash-safety.md); the reference has no such setting, so its rows show it without. */
    blosc2_remove_urlpath(urlpath);
    setenv("B2ND_FSYNC", "1", 1);
    sc = blosc2_schunk_new(&st);
    if (sc == NULL) { fprintf(stderr, "%s: schunk_new failed\n", row); return 1; }
    settle_disk();
    t0 = now();
    for (int i = 0; i < nchunks; i++) {
      if (blosc2_schunk_append_buffer(sc, ds[0].data, ds[0].nbytes) != i + 1) {
        fprintf(stderr, "%s: append failed\n", row);
        return 1;
      }
    }
    t1 = now();
    fprintf(out, "%s/append_fsync\tcMBps\t%.1f\n", row, total / (t1 - t0) / 1e6);
    if (update_rows(sc, ds, &cp, nchunks, row, "update_fsync") != 0) return 1;
    unsetenv("B2ND_FSYNC");
    blosc2_schunk_free(sc);
    uint8_t *back = bench_alloc((size_t)ds[0].nbytes);
    t0 = now();
    blosc2_schunk *rd = blosc2_schunk_open(urlpath);
    if (rd == NULL) { fprintf(stderr, "%s: open failed\n", row); return 1; }
    for (int i = 0; i < nchunks; i++) {
      if (blosc2_schunk_decompress_chunk(rd, i, back, ds[0].nbytes) != ds[0].nbytes) {
        fprintf(stderr, "%s: read back failed\n", row);
        return 1;
      }
    }
    t1 = now();
    if (memcmp(back, ds[0].data, (size_t)ds[0].nbytes) != 0) { fprintf(stderr, "%s: mismatch\n", row); return 1; }
    fprintf(out, "%s/read\tdMBps\t%.1f\n", row, total / (t1 - t0) / 1e6);
    fflush(out);
    blosc2_schunk_free(rd);
    free(back);
    blosc2_remove_urlpath(urlpath);
  }
  return 0;
}

/* One append + read-back cycle of a small-chunk row (not inlined, for scripts/instructions.sh). */
__attribute__((noinline)) int schunk_cycle(blosc2_schunk *sc, const uint8_t *src, int32_t nbytes, uint8_t *back,
                                           int64_t nchunk) {
  if (blosc2_schunk_append_buffer(sc, src, nbytes) != nchunk + 1) return -1;
  return blosc2_schunk_decompress_chunk(sc, nchunk, back, nbytes);
}

/* Super-chunks of small chunks in memory, sparse (`mem`) and as a contiguous frame (`frame`):
   the time of one cycle of blosc2_schunk_append_buffer and blosc2_schunk_decompress_chunk of the
   chunk just appended (call_ns), what a store of small records pays per record. Each batch
   of cycles runs on a new super-chunk, made and freed outside the timing. */
static int bench_schunk_small(dataset *ds, const char *only, double mintime) {
  const char *codecs[] = {"blosclz", "lz4", "zstd"};
  const int32_t sizes[] = {256, 4096};
  int batch = fixed_reps ? 1 : SMALL_BATCH;
  for (int frame = 0; frame < 2; frame++)
    for (int c = 0; c < 3; c++)
      for (int s = 0; s < 2; s++) {
        int32_t nbytes = sizes[s];
        char row[160];
        snprintf(row, sizeof row, "schunk/%s/cycle/%s/%dB", frame ? "frame" : "mem", codecs[c], nbytes);
        if (!matches(row, only)) continue;
        blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
        cp.compcode = (uint8_t)blosc2_compname_to_compcode(codecs[c]);
        cp.clevel = 5;
        cp.typesize = ds[0].typesize;
        cp.nthreads = 1;
        blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
        dp.nthreads = 1;
        blosc2_storage st = {.contiguous = frame != 0, .cparams = &cp, .dparams = &dp};
        uint8_t *back = bench_alloc((size_t)nbytes);
        double best = 1e30, t_start = now(), t_end = t_start;
        int reps = 0;
        while (fixed_reps ? reps < fixed_reps : (t_end - t_start < mintime || reps < 3)) {
          blosc2_schunk *sc = blosc2_schunk_new(&st);
          if (sc == NULL) { fprintf(stderr, "%s: schunk_new failed\n", row); return 1; }
          double t0 = now();
          for (int k = 0; k < batch; k++) {
            if (schunk_cycle(sc, ds[0].data, nbytes, back, k) != nbytes) {
              fprintf(stderr, "%s: cycle %d failed\n", row, k);
              return 1;
            }
          }
          double t1 = now(), per = (t1 - t0) / batch;
          if (per < best) best = per;
          keep_call(reps, per);
          t_end = t1;
          reps++;
          blosc2_schunk_free(sc);
        }
        if (median_mode) best = median_call(reps);
        if (memcmp(back, ds[0].data, (size_t)nbytes) != 0) { fprintf(stderr, "%s: mismatch\n", row); return 1; }
        fprintf(out, "%s\tcall_ns\t%.1f\n", row, best * 1e9);
        fflush(out);
        free(back);
      }
  return 0;
}
#endif /* BENCH_NO_SCHUNK */

#ifndef BENCH_NO_B2ND
/* Median latency of 200 random edge x edge x edge slices of `arr` (the same slices on every
   call for one edge), printed as row/name; each slice is checked against `src`, the array's
   data, outside the timing. Edge 1 reads single items: a few bytes at a random place in one
   block, which decoders that stop a stream early read only partly. */
static int slice_row(b2nd_array_t *arr, const double *src, const int64_t shape[3], int edge,
                     const char *row, const char *name) {
  enum { NSLICES = 200, MAXEDGE = 10 };
  double lat[NSLICES];
  double slice[MAXEDGE * MAXEDGE * MAXEDGE];
  int64_t sshape[3] = {edge, edge, edge};
  int64_t sbytes = (int64_t)edge * edge * edge * (int64_t)sizeof(double);
  if (edge < 1 || edge > MAXEDGE) return 1;
  rng_state = 12345;
  for (int i = 0; i < NSLICES; i++) {
    int64_t start[3], stop[3];
    for (int d = 0; d < 3; d++) {
      start[d] = (int64_t)(rng() % (uint64_t)(shape[d] - edge));
      stop[d] = start[d] + edge;
    }
    double t0 = now();
    if (b2nd_get_slice_cbuffer(arr, start, stop, slice, sshape, sbytes) < 0) {
      fprintf(stderr, "%s: get_slice_cbuffer failed (%s)\n", row, name);
      return 1;
    }
    lat[i] = now() - t0;
    for (int a = 0; a < edge; a++) {
      for (int b = 0; b < edge; b++) {
        const double *want = src + ((start[0] + a) * shape[1] + start[1] + b) * shape[2] + start[2];
        if (memcmp(slice + (a * edge + b) * edge, want, (size_t)edge * sizeof(double)) != 0) {
          fprintf(stderr, "%s: slice mismatch (%s)\n", row, name);
          return 1;
        }
      }
    }
  }
  qsort(lat, NSLICES, sizeof(double), cmp_double);
  fprintf(out, "%s/%s\tslice_us\t%.2f\n", row, name, lat[NSLICES / 2] * 1e6);
  return 0;
}

/* Concurrent readers of one file-backed array: `nthreads` threads each read SLICES_PER_THREAD
   random edge^3 regions of `arr` at once; the row is the regions read per second by all of them.
   The threads run in a child process, so that a library that cannot take concurrent reads (the
   reference aborts) ends only the child: its row then says "crashed" on stderr and is left out. */
enum { SLICES_PER_THREAD = 400 };
typedef struct {
  b2nd_array_t *arr;
  const double *src;
  const int64_t *shape;
  int edge;
  uint64_t seed;
  int bad;
} reader_job;

static void *reader_thread(void *arg) {
  reader_job *j = arg;
  double slice[1000];
  int64_t sshape[3] = {j->edge, j->edge, j->edge};
  int64_t sbytes = (int64_t)j->edge * j->edge * j->edge * (int64_t)sizeof(double);
  uint64_t s = j->seed;
  for (int i = 0; i < SLICES_PER_THREAD; i++) {
    int64_t start[3], stop[3];
    for (int d = 0; d < 3; d++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      start[d] = (int64_t)((s >> 33) % (uint64_t)(j->shape[d] - j->edge));
      stop[d] = start[d] + j->edge;
    }
    if (b2nd_get_slice_cbuffer(j->arr, start, stop, slice, sshape, sbytes) < 0) {
      j->bad++;
      continue;
    }
    /* The first item of each region, against the data. */
    if (slice[0] != j->src[(start[0] * j->shape[1] + start[1]) * j->shape[2] + start[2]]) j->bad++;
  }
  return NULL;
}

static int threads_row(b2nd_array_t *arr, const double *src, const int64_t shape[3], int edge, int nthreads,
                       const char *row, const char *name, const char *metric) {
  int fds[2];
  if (pipe(fds) != 0) return 1;
  fflush(out);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    close(fds[0]);
    reader_job jobs[4];
    pthread_t th[4];
    double t0 = now();
    for (int t = 0; t < nthreads; t++) {
      jobs[t] = (reader_job){.arr = arr, .src = src, .shape = shape, .edge = edge, .seed = 1000u + (uint64_t)t};
      pthread_create(&th[t], NULL, reader_thread, &jobs[t]);
    }
    int bad = 0;
    for (int t = 0; t < nthreads; t++) {
      pthread_join(th[t], NULL);
      bad += jobs[t].bad;
    }
    double rate = bad ? -1.0 : (double)nthreads * SLICES_PER_THREAD / (now() - t0);
    ssize_t w = write(fds[1], &rate, sizeof rate);
    _exit(w == (ssize_t)sizeof rate ? 0 : 1);
  }
  close(fds[1]);
  double rate = 0;
  ssize_t got = read(fds[0], &rate, sizeof rate);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != (ssize_t)sizeof rate || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "%s/%s: crashed with %d reading threads (left out)\n", row, name, nthreads);
    return 0;
  }
  if (rate < 0) {
#ifdef BENCH_REFERENCE
    /* The reference's concurrent readers, where they do not abort, can return errors or wrong
       bytes: that is its figure missing, not this library failing. */
    fprintf(stderr, "%s/%s: reads failed or were wrong with %d threads (left out)\n", row, name, nthreads);
    return 0;
#else
    fprintf(stderr, "%s/%s: reads failed or were wrong with %d threads\n", row, name, nthreads);
    return 1;
#endif
  }
  fprintf(out, "%s/%s\t%s\t%.1f\n", row, name, metric, rate);
  return 0;
}

/* b2nd rows: from_cbuffer, to_cbuffer, random 10x10x10 slices, full read of a file-backed array
   and the same slices from that file, then random single items in memory and from the file. */
static int bench_b2nd(const char *only, double mintime, const char *tmpdir, int quick) {
  const int64_t shape[3] = {quick ? 128 : 256, 256, 128}; /* 256*256*128*8 = 64 MiB */
  const int32_t chunkshape[3] = {64, 64, 64};
  const int32_t blockshape[3] = {16, 16, 32};
  int64_t n = shape[0] * shape[1] * shape[2];
  int64_t nbytes = n * 8;
  double *src = NULL, *back = NULL;
  const char *codecs[] = {"blosclz", "lz4", "zstd"};
  for (int c = 0; c < 3; c++) {
    char row[160];
    snprintf(row, sizeof row, "b2nd/smooth3d-f8-%lldMiB/%s/c5/shuffle", (long long)(nbytes >> 20), codecs[c]);
    if (!matches(row, only)) continue;
    if (src == NULL) {
      src = bench_alloc((size_t)nbytes);
      back = bench_alloc((size_t)nbytes);
      for (int64_t i = 0; i < n; i++) src[i] = sin((double)(i % 4096) * 0.01) + (double)(i / 65536) * 0.001;
    }
    char urlpath[512];
    snprintf(urlpath, sizeof urlpath, "%s/bench-%s.b2nd", tmpdir, codecs[c]);
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = (uint8_t)blosc2_compname_to_compcode(codecs[c]);
    cp.clevel = 5;
    cp.typesize = 8;
    cp.nthreads = 1;
    blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
    blosc2_storage mem = {.contiguous = true, .cparams = &cp, .dparams = &dp};
    b2nd_context_t *ctx = b2nd_create_ctx(&mem, 3, shape, chunkshape, blockshape, "<f8", DTYPE_NUMPY_FORMAT, NULL, 0);
    b2nd_array_t *arr = NULL;
    double t;
    BEST_TIME(t, mintime, {
      if (arr) b2nd_free(arr);
      if (b2nd_from_cbuffer(ctx, &arr, src, nbytes) < 0) { fprintf(stderr, "%s: from_cbuffer failed\n", row); return 1; }
    });
    fprintf(out, "%s/from_cbuffer\tcMBps\t%.1f\n", row, nbytes / t / 1e6);
    fprintf(out, "%s/from_cbuffer\tratio\t%.3f\n", row, (double)arr->sc->nbytes / (double)arr->sc->cbytes);
    BEST_TIME(t, mintime, b2nd_to_cbuffer(arr, back, nbytes));
    if (memcmp(back, src, (size_t)nbytes) != 0) { fprintf(stderr, "%s: to_cbuffer mismatch\n", row); return 1; }
    fprintf(out, "%s/to_cbuffer\tdMBps\t%.1f\n", row, nbytes / t / 1e6);

    if (slice_row(arr, src, shape, 10, row, "slice10x10x10") != 0) return 1;

    /* Full read of a file-backed array. */
    blosc2_remove_urlpath(urlpath);
    if (b2nd_save(arr, urlpath) < 0) { fprintf(stderr, "%s: save failed\n", row); return 1; }
    b2nd_array_t *farr = NULL;
    BEST_TIME(t, mintime, {
      if (farr) b2nd_free(farr);
      if (b2nd_open(urlpath, &farr) < 0) { fprintf(stderr, "%s: open failed\n", row); return 1; }
      b2nd_to_cbuffer(farr, back, nbytes);
    });
    if (memcmp(back, src, (size_t)nbytes) != 0) { fprintf(stderr, "%s: file read mismatch\n", row); return 1; }
    fprintf(out, "%s/file_full_read\tdMBps\t%.1f\n", row, nbytes / t / 1e6);
    /* The same slices from the file, where each reads only the blocks it needs from disk. */
    if (slice_row(farr, src, shape, 10, row, "file_slice10x10x10") != 0) return 1;
    /* Single items, after the slices so that scripts/instructions.sh finds the calls of
       slice_row in this order: slices in memory, from the file, items in memory, from the file. */
    if (slice_row(arr, src, shape, 1, row, "item") != 0) return 1;
    if (slice_row(farr, src, shape, 1, row, "file_item") != 0) return 1;
    /* 1, 2 and 4 threads reading the file-backed array at once. */
    for (int nt = 1; nt <= 4; nt *= 2) {
      char name[64];
      snprintf(name, sizeof name, "file_slice10x10x10_threads%d", nt);
      if (threads_row(farr, src, shape, 10, nt, row, name, "slices_ps") != 0) return 1;
      snprintf(name, sizeof name, "file_item_threads%d", nt);
      if (threads_row(farr, src, shape, 1, nt, row, name, "items_ps") != 0) return 1;
    }
    fflush(out);
    b2nd_free(farr);
    b2nd_free(arr);
    b2nd_free_ctx(ctx);
    blosc2_remove_urlpath(urlpath);
  }
  free(src);
  free(back);
  return 0;
}


/* The b2nd geometry sweep: b2nd_from_cbuffer and b2nd_to_cbuffer of 2^20 items (1 to 8 MiB) of a
   smooth field over chunk and block shapes of 1 to 4 dimensions, typesizes 1, 2, 4 and 8. In
   the `tiled` geometries each block is a run of whole rows of its chunk (split in the first
   dimension only), so it is one contiguous range of the chunk in C order; in the others it is
   not, and each block is gathered from (and scattered to) many pieces. `ragged` has partial
   chunks and blocks at the array's edges. */
typedef struct {
  const char *name;
  int8_t ndim;
  int64_t shape[4];
  int32_t chunk[4], block[4];
} geometry;

static const geometry geometries[] = {
    {"1d-tiled", 1, {1 << 20}, {1 << 17}, {1 << 14}},
    {"2d-tiled", 2, {1024, 1024}, {256, 256}, {64, 256}},
    {"2d-squares", 2, {1024, 1024}, {256, 256}, {64, 64}},
    {"3d-tiled", 3, {128, 128, 64}, {64, 64, 64}, {16, 64, 64}},
    {"3d-quarter", 3, {128, 128, 64}, {64, 64, 64}, {16, 16, 64}},
    {"3d-cubes", 3, {128, 128, 64}, {64, 64, 64}, {16, 16, 16}},
    {"3d-ragged", 3, {100, 120, 90}, {64, 64, 64}, {16, 16, 64}},
    {"4d-tiled", 4, {32, 32, 32, 32}, {16, 16, 16, 16}, {4, 16, 16, 16}},
    {"4d-cubes", 4, {32, 32, 32, 32}, {16, 16, 16, 16}, {8, 8, 8, 8}},
};

/* A smooth field over the array's coordinates in the type of `typesize` (uint8, int16, float32,
   float64), as image, sensor and simulation arrays are. */
static void *geometry_data(const geometry *g, int typesize, int64_t *nitems) {
  int64_t n = 1;
  for (int d = 0; d < g->ndim; d++) n *= g->shape[d];
  uint8_t *p = bench_alloc((size_t)(n * typesize));
  for (int64_t i = 0; i < n; i++) {
    int64_t rest = i;
    double v = 0;
    for (int d = g->ndim - 1; d >= 0; d--) {
      int64_t x = rest % g->shape[d];
      rest /= g->shape[d];
      v += sin((double)x * (0.02 + 0.01 * d));
    }
    switch (typesize) {
      case 1: p[i] = (uint8_t)(128 + 30 * v); break;
      case 2: ((int16_t *)p)[i] = (int16_t)(1000 * v); break;
      case 4: ((float *)p)[i] = (float)v; break;
      default: ((double *)p)[i] = v; break;
    }
  }
  *nitems = n;
  return p;
}

static int bench_b2nd_geometries(const char *only, double mintime, int quick) {
  const char *codecs[] = {"lz4", "blosclz"};
  const int typesizes[] = {1, 2, 4, 8};
  const char *dtypes[] = {"|u1", "<i2", "<f4", "<f8"};
  int ngeom = (int)(sizeof geometries / sizeof geometries[0]);
  for (int g = 0; g < ngeom; g++)
    for (int t = 0; t < 4; t++)
      for (int c = 0; c < 2; c++)
        for (int nt = 1; nt <= 2; nt++) {
          if (quick && nt == 2) continue;
          const geometry *geo = &geometries[g];
          char row[160];
          snprintf(row, sizeof row, "b2nd-geom/%s/i%d/%s/c5/shuffle/t%d", geo->name, typesizes[t], codecs[c], nt);
          if (!matches(row, only)) continue;
          int64_t n;
          void *src = geometry_data(geo, typesizes[t], &n);
          int64_t nbytes = n * typesizes[t];
          void *back = bench_alloc((size_t)nbytes);
          blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
          cp.compcode = (uint8_t)blosc2_compname_to_compcode(codecs[c]);
          cp.clevel = 5;
          cp.typesize = typesizes[t];
          cp.nthreads = (int16_t)nt;
          blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
          dp.nthreads = (int16_t)nt;
          blosc2_storage mem = {.contiguous = true, .cparams = &cp, .dparams = &dp};
          b2nd_context_t *ctx = b2nd_create_ctx(&mem, geo->ndim, geo->shape, geo->chunk, geo->block, dtypes[t],
                                                DTYPE_NUMPY_FORMAT, NULL, 0);
          b2nd_array_t *arr = NULL;
          double tm;
          BEST_TIME(tm, mintime, {
            if (arr) b2nd_free(arr);
            if (b2nd_from_cbuffer(ctx, &arr, src, nbytes) < 0) { fprintf(stderr, "%s: from_cbuffer failed\n", row); return 1; }
          });
          fprintf(out, "%s/from_cbuffer\tcMBps\t%.1f\n", row, nbytes / tm / 1e6);
          fprintf(out, "%s/from_cbuffer\tratio\t%.3f\n", row, (double)arr->sc->nbytes / (double)arr->sc->cbytes);
          BEST_TIME(tm, mintime, b2nd_to_cbuffer(arr, back, nbytes));
          if (memcmp(back, src, (size_t)nbytes) != 0) { fprintf(stderr, "%s: to_cbuffer mismatch\n", row); return 1; }
          fprintf(out, "%s/to_cbuffer\tdMBps\t%.1f\n", row, nbytes / tm / 1e6);
          fflush(out);
          b2nd_free(arr);
          b2nd_free_ctx(ctx);
          free(src);
          free(back);
        }
  return 0;
}
#endif /* BENCH_NO_B2ND */

/* The datasets, made once per process (a plugin is called once per row). */
static dataset datasets[5];
static int ready;

int bench_run(int argc, char **argv) {
  const char *only = NULL, *tmpdir = "/tmp", *outpath = NULL;
  int quick = 0;
  exact_row = NULL;
  fixed_reps = 0;
  median_mode = 0;
  list_rows = 0;
  clevels[0] = 1, clevels[1] = 5, nclevels = 2, custom_clevels = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--exact") && i + 1 < argc) exact_row = argv[++i];
    else if (!strcmp(argv[i], "--list")) list_rows = 1;
    else if (!strcmp(argv[i], "--out") && i + 1 < argc) outpath = argv[++i];
    else if (!strcmp(argv[i], "--tmp") && i + 1 < argc) tmpdir = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) fixed_reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--median")) median_mode = 1;
    else if (!strcmp(argv[i], "--clevels") && i + 1 < argc) {
      if (!parse_clevels(argv[++i])) {
        fprintf(stderr, "--clevels wants a comma-separated list of 1..9 clevels in 1..9\n");
        return 2;
      }
    }
  }
  out = outpath ? fopen(outpath, "a") : stdout;
  if (out == NULL) {
    fprintf(stderr, "cannot open %s\n", outpath);
    return 1;
  }
  double mintime = quick ? 0.05 : 0.2;
  int32_t nbytes = 4 * 1024 * 1024;
  if (!ready) {
    blosc2_init();
    make_datasets(datasets, nbytes);
    ready = 1;
  }
  bench_memcpy(nbytes, mintime);
  int rc = bench_chunks(datasets, 5, only, mintime, quick);
  if (rc == 0) rc = bench_small(datasets, only, mintime);
#ifndef BENCH_NO_SCHUNK
  if (rc == 0) rc = bench_schunk_file(datasets, only, tmpdir, quick);
  if (rc == 0) rc = bench_schunk_small(datasets, only, mintime);
#endif
#ifndef BENCH_NO_B2ND
  if (rc == 0) rc = bench_b2nd(only, mintime, tmpdir, quick);
  if (rc == 0) rc = bench_b2nd_geometries(only, mintime, quick);
#endif
  (void)tmpdir;
  if (out != stdout) fclose(out);
  out = stdout;
  return rc;
}

#ifndef BENCH_PLUGIN
int main(int argc, char **argv) {
  int rc = bench_run(argc, argv);
  for (int i = 0; i < 5; i++) free(datasets[i].data);
  blosc2_destroy();
  return rc;
}
#endif
