/* Many threads on one array: random slices and chunk reads from 4 threads,
 * on an in-memory array, a contiguous file and a sparse directory, each
 * checked against the data; and readers running while a writer rewrites
 * the whole array, each read seeing one whole write (never refused, never
 * half-applied); and a prefilter that reads the super-chunk it compresses
 * into, on the calling thread and on workers, while its writes to it are
 * refused instead of waiting for themselves. Issue 58. */
#include "test_common.h"

#include <pthread.h>
#include <stdint.h>

#define NTHREADS 4
#define READS 200
#define D0 120
#define D1 150

typedef struct {
  b2nd_array_t *arr;
  unsigned seed;
  int failures;
  int refused;
  int generation_mix;
  int check_values;
} job_t;

static unsigned next_rand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (*s >> 8) & 0xffffff;
}

static int32_t expected(int64_t i, int64_t j) { return (int32_t)(i * D1 + j); }

static void *reader(void *arg) {
  job_t *job = arg;
  int32_t *buf = malloc(sizeof(int32_t) * D0 * D1);
  for (int r = 0; r < READS; r++) {
    int64_t start[2], stop[2], shape[2];
    for (int d = 0; d < 2; d++) {
      int64_t n = d == 0 ? D0 : D1;
      int64_t a = next_rand(&job->seed) % n, b = next_rand(&job->seed) % n;
      start[d] = a < b ? a : b;
      stop[d] = (a < b ? b : a) + 1;
      shape[d] = stop[d] - start[d];
    }
    int64_t nitems = shape[0] * shape[1];
    int rc = b2nd_get_slice_cbuffer(job->arr, start, stop, buf, shape, nitems * 4);
    if (rc < 0) {
      job->refused++;
      continue;
    }
    int32_t first = buf[0] - expected(start[0], start[1]);
    for (int64_t i = 0; i < shape[0]; i++) {
      for (int64_t j = 0; j < shape[1]; j++) {
        int32_t got = buf[i * shape[1] + j];
        int32_t want = expected(start[0] + i, start[1] + j);
        if (job->check_values && got != want) job->failures++;
        if (!job->check_values && got - want != first) job->generation_mix++;
      }
    }
    /* A chunk read through the super-chunk at the same time. */
    int64_t nchunk = next_rand(&job->seed) % job->arr->sc->nchunks;
    int32_t *chunk = malloc((size_t)job->arr->sc->chunksize);
    rc = blosc2_schunk_decompress_chunk(job->arr->sc, nchunk, chunk, job->arr->sc->chunksize);
    if (rc != job->arr->sc->chunksize) job->refused++;
    free(chunk);
  }
  free(buf);
  return NULL;
}

static b2nd_array_t *make(const char *urlpath, bool contiguous) {
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 4;
  cparams.nthreads = 2;
  blosc2_dparams dparams = BLOSC2_DPARAMS_DEFAULTS;
  dparams.nthreads = 2;
  blosc2_storage storage = {.cparams = &cparams, .dparams = &dparams,
                            .contiguous = contiguous, .urlpath = (char *)urlpath};
  int64_t shape[2] = {D0, D1};
  int32_t chunkshape[2] = {50, 60};
  int32_t blockshape[2] = {25, 30};
  b2nd_context_t *ctx = b2nd_create_ctx(&storage, 2, shape, chunkshape, blockshape, NULL, 0, NULL, 0);
  int32_t *data = malloc(sizeof(int32_t) * D0 * D1);
  for (int64_t i = 0; i < D0; i++)
    for (int64_t j = 0; j < D1; j++) data[i * D1 + j] = expected(i, j);
  b2nd_array_t *arr = NULL;
  if (urlpath) blosc2_remove_urlpath(urlpath);
  CHECK_EQ_INT(b2nd_from_cbuffer(ctx, &arr, data, sizeof(int32_t) * D0 * D1), 0);
  free(data);
  b2nd_free_ctx(ctx);
  return arr;
}

static void run_readers(b2nd_array_t *arr, int check_values, job_t *jobs) {
  pthread_t th[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) {
    jobs[t] = (job_t){.arr = arr, .seed = 77u + (unsigned)t, .check_values = check_values};
    pthread_create(&th[t], NULL, reader, &jobs[t]);
  }
  for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
}

typedef struct {
  b2nd_array_t *arr;
  int writes;
  int failures;
} writer_t;

static void *writer(void *arg) {
  writer_t *w = arg;
  int32_t *data = malloc(sizeof(int32_t) * D0 * D1);
  int64_t start[2] = {0, 0}, stop[2] = {D0, D1}, shape[2] = {D0, D1};
  for (int g = 1; g <= w->writes; g++) {
    for (int64_t i = 0; i < D0; i++)
      for (int64_t j = 0; j < D1; j++) data[i * D1 + j] = expected(i, j) + g * 1000000;
    if (b2nd_set_slice_cbuffer(data, shape, sizeof(int32_t) * D0 * D1, start, stop, w->arr) < 0)
      w->failures++;
  }
  free(data);
  return NULL;
}

/* A prefilter that reads the super-chunk it compresses into (chunk 0, whole)
 * and tries to append to it, which must be refused, not hang. */
#define PCHUNK 4096
static blosc2_schunk *pf_schunk;
static int pf_reads_ok, pf_reads_bad, pf_writes_refused, pf_writes_done;

static int reading_prefilter(blosc2_prefilter_params *p) {
  if (p->nchunk >= 1) {
    int32_t buf[PCHUNK];
    int rc = blosc2_schunk_decompress_chunk(pf_schunk, 0, buf, sizeof buf);
    int good = rc == (int)sizeof buf;
    for (int i = 0; good && i < PCHUNK; i++) good = buf[i] == i;
    __atomic_add_fetch(good ? &pf_reads_ok : &pf_reads_bad, 1, __ATOMIC_RELAXED);
    if (blosc2_schunk_append_buffer(pf_schunk, buf, sizeof buf) < 0)
      __atomic_add_fetch(&pf_writes_refused, 1, __ATOMIC_RELAXED);
    else
      __atomic_add_fetch(&pf_writes_done, 1, __ATOMIC_RELAXED);
  }
  memcpy(p->output, p->input, (size_t)p->output_size);
  return 0;
}

static void test_prefilter_reads_its_super_chunk(int nthreads) {
  blosc2_prefilter_params pp = {0};
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 4;
  cparams.nthreads = (int16_t)nthreads;
  cparams.blocksize = 4096;
  cparams.prefilter = reading_prefilter;
  cparams.preparams = &pp;
  blosc2_dparams dparams = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage storage = {.cparams = &cparams, .dparams = &dparams, .contiguous = false};
  pf_schunk = blosc2_schunk_new(&storage);
  pf_reads_ok = pf_reads_bad = pf_writes_refused = pf_writes_done = 0;
  int32_t data[PCHUNK];
  for (int i = 0; i < PCHUNK; i++) data[i] = i;
  CHECK_EQ_INT(blosc2_schunk_append_buffer(pf_schunk, data, sizeof data), 1);
  CHECK_EQ_INT(blosc2_schunk_append_buffer(pf_schunk, data, sizeof data), 2);
  /* 4 blocks of 4 KiB in chunk 1: each read chunk 0 whole, each write was refused. */
  CHECK_EQ_INT(pf_reads_ok, 4);
  CHECK_EQ_INT(pf_reads_bad, 0);
  CHECK_EQ_INT(pf_writes_refused, 4);
  CHECK_EQ_INT(pf_writes_done, 0);
  CHECK_EQ_INT(pf_schunk->nchunks, 2);
  int32_t back[PCHUNK];
  CHECK_EQ_INT(blosc2_schunk_decompress_chunk(pf_schunk, 1, back, sizeof back), (int)sizeof back);
  CHECK(memcmp(back, data, sizeof data) == 0);
  blosc2_schunk_free(pf_schunk);
}

int main(void) {
  blosc2_init();
  test_prefilter_reads_its_super_chunk(1);
  test_prefilter_reads_its_super_chunk(2);
  const char *paths[3] = {NULL, "concurrent_reads.b2nd", "concurrent_reads_sparse.b2nd"};
  bool contiguous[3] = {false, true, false};
  for (int k = 0; k < 3; k++) {
    b2nd_array_t *arr = make(paths[k], contiguous[k]);
    job_t jobs[NTHREADS];
    run_readers(arr, 1, jobs);
    for (int t = 0; t < NTHREADS; t++) {
      CHECK_EQ_INT(jobs[t].refused, 0);
      CHECK_EQ_INT(jobs[t].failures, 0);
    }
    /* Readers beside a writer: each slice is of one write. */
    writer_t w = {.arr = arr, .writes = 20};
    pthread_t wt;
    pthread_create(&wt, NULL, writer, &w);
    run_readers(arr, 0, jobs);
    pthread_join(wt, NULL);
    CHECK_EQ_INT(w.failures, 0);
    for (int t = 0; t < NTHREADS; t++) {
      CHECK_EQ_INT(jobs[t].refused, 0);
      CHECK_EQ_INT(jobs[t].generation_mix, 0);
    }
    b2nd_free(arr);
    if (paths[k]) blosc2_remove_urlpath(paths[k]);
  }
  blosc2_destroy();
  return test_finish("test_concurrent_reads");
}
