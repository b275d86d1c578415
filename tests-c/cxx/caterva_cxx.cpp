// caterva.h (with b2nd.h, which it includes) compiles as C++ with warnings as
// errors, and the caterva_* functions have C linkage.
#include <caterva.h>
#include <b2nd.h>
#include <cstring>

int main() {
  blosc2_init();
  caterva_config_t cfg = CATERVA_CONFIG_DEFAULTS;
  caterva_ctx_t *ctx = NULL;
  int ok = caterva_ctx_new(&cfg, &ctx) == CATERVA_SUCCEED;
  caterva_params_t params;
  std::memset(&params, 0, sizeof(params));
  params.itemsize = 4;
  params.ndim = 1;
  params.shape[0] = 10;
  caterva_storage_t storage;
  std::memset(&storage, 0, sizeof(storage));
  storage.chunkshape[0] = 4;
  storage.blockshape[0] = 2;
  caterva_array_t *arr = NULL;
  ok = ok && caterva_zeros(ctx, &params, &storage, &arr) == CATERVA_SUCCEED;
  ok = ok && arr->nitems == 10 && arr->ndim == 1;
  ok = ok && caterva_free(ctx, &arr) == CATERVA_SUCCEED;
  ok = ok && caterva_ctx_free(&ctx) == CATERVA_SUCCEED;
  ok = ok && std::strcmp(caterva_error_string(CATERVA_ERR_BLOSC_FAILED), "Blosc failed") == 0;
  blosc2_destroy();
  return ok ? 0 : 1;
}
