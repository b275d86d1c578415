/* b2nd demo: a 3-D float64 array written to disk, reopened and sliced.
 *
 *   demo [path]     (default: demo.b2nd in $TMPDIR, else /tmp)
 *
 * Returns non-zero on any error. */
#include <b2nd.h>
#include <stdio.h>
#include <stdlib.h>

#define TRY(call)                                                            \
  do {                                                                       \
    int rc_ = (call);                                                        \
    if (rc_ < 0) {                                                           \
      fprintf(stderr, "%s failed: %d (%s)\n", #call, rc_, blosc2_error_string(rc_)); \
      goto fail;                                                             \
    }                                                                        \
  } while (0)

int main(int argc, char **argv) {
  char default_path[1024];
  const char *tmp = getenv("TMPDIR");
  snprintf(default_path, sizeof default_path, "%s/demo.b2nd", tmp && *tmp ? tmp : "/tmp");
  const char *path = argc > 1 ? argv[1] : default_path;
  int64_t shape[3] = {50, 80, 60};
  int32_t chunkshape[3] = {20, 40, 30};
  int32_t blockshape[3] = {10, 10, 30};
  int64_t nitems = shape[0] * shape[1] * shape[2];
  int64_t nbytes = nitems * (int64_t)sizeof(double);
  int status = 1;
  double *data = NULL;
  b2nd_context_t *ctx = NULL;
  b2nd_array_t *arr = NULL;

  blosc2_init();
  printf("b2nd demo: C-Blosc2 API %s\n", blosc2_get_version_string());

  data = malloc((size_t)nbytes);
  if (data == NULL) {
    goto fail;
  }
  for (int64_t i = 0; i < nitems; i++) {
    data[i] = (double)i * 0.5;
  }

  /* 1. Create the array on disk (contiguous frame file) from the buffer. */
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = sizeof(double);
  cparams.compcode = BLOSC_ZSTD;
  cparams.clevel = 5;
  blosc2_storage storage = BLOSC2_STORAGE_DEFAULTS;
  storage.contiguous = true;
  storage.urlpath = (char *)path;
  storage.cparams = &cparams;
  blosc2_remove_urlpath(path);
  ctx = b2nd_create_ctx(&storage, 3, shape, chunkshape, blockshape, "<f8", DTYPE_NUMPY_FORMAT,
                        NULL, 0);
  if (ctx == NULL) {
    fprintf(stderr, "b2nd_create_ctx failed\n");
    goto fail;
  }
  TRY(b2nd_from_cbuffer(ctx, &arr, data, nbytes));
  printf("wrote %s: %lld items of %s\n", path, (long long)arr->nitems, arr->dtype);
  TRY(b2nd_free(arr));
  arr = NULL;

  /* 2. Reopen it and read a slice. */
  TRY(b2nd_open(path, &arr));
  if (arr->ndim != 3 || arr->shape[0] != shape[0] || arr->shape[1] != shape[1] ||
      arr->shape[2] != shape[2]) {
    fprintf(stderr, "reopened array has the wrong shape\n");
    goto fail;
  }
  int64_t start[3] = {5, 10, 20};
  int64_t stop[3] = {7, 13, 24};
  int64_t slice_shape[3] = {2, 3, 4};
  double slice[2 * 3 * 4];
  TRY(b2nd_get_slice_cbuffer(arr, start, stop, slice, slice_shape, sizeof(slice)));
  printf("slice [5:7, 10:13, 20:24], first values:");
  for (int i = 0; i < 6; i++) {
    printf(" %g", slice[i]);
  }
  printf("\n");
  for (int64_t i = 0; i < 2; i++) {
    for (int64_t j = 0; j < 3; j++) {
      for (int64_t k = 0; k < 4; k++) {
        double want = data[((start[0] + i) * shape[1] + start[1] + j) * shape[2] + start[2] + k];
        if (slice[(i * 3 + j) * 4 + k] != want) {
          fprintf(stderr, "slice mismatch at (%lld, %lld, %lld)\n", (long long)i,
                  (long long)j, (long long)k);
          goto fail;
        }
      }
    }
  }

  /* 3. Metadata and compression ratio. */
  TRY(b2nd_print_meta(arr));
  if (arr->sc->cbytes <= 0) {
    fprintf(stderr, "no compressed bytes\n");
    goto fail;
  }
  printf("compression: %lld -> %lld bytes (ratio %.2fx)\n", (long long)arr->sc->nbytes,
         (long long)arr->sc->cbytes, (double)arr->sc->nbytes / (double)arr->sc->cbytes);
  status = 0;

fail:
  if (arr != NULL) {
    b2nd_free(arr);
  }
  if (ctx != NULL) {
    b2nd_free_ctx(ctx);
  }
  free(data);
  blosc2_destroy();
  if (status != 0) {
    fprintf(stderr, "demo failed\n");
  }
  return status;
}
