/* CATERVA_STORAGE_FLAT: the later API's flat caterva_storage_t, for code that initialises it
 * positionally; same bytes as the default three-view struct, so the library reads it alike. */
#define CATERVA_STORAGE_FLAT
#include <caterva.h>
#include <stddef.h>
#include <string.h>

#include "test_common.h"

typedef char static_check_size[sizeof(caterva_storage_t) == 80 + 15 * sizeof(caterva_metalayer_t) + 8 ? 1 : -1];
typedef char static_check_urlpath[offsetof(caterva_storage_t, urlpath) == 72 ? 1 : -1];

int main(void) {
  blosc2_init();
  caterva_config_t cfg = CATERVA_CONFIG_DEFAULTS;
  caterva_ctx_t *ctx = NULL;
  CHECK_EQ_INT(caterva_ctx_new(&cfg, &ctx), CATERVA_SUCCEED);
  caterva_params_t params = {2, {3, 5}, 2};
  caterva_storage_t st = {{2, 3}, {1, 3}, true, NULL, {{NULL, NULL, 0}}, 0};
  uint8_t src[30], out[30];
  for (int i = 0; i < 30; i++) src[i] = (uint8_t)(i * 3);
  caterva_array_t *a = NULL;
  CHECK_EQ_INT(caterva_from_buffer(ctx, src, 30, &params, &st, &a), CATERVA_SUCCEED);
  if (a) {
    CHECK_EQ_INT(a->chunkshape[1], 3);
    CHECK(a->sc != NULL && a->sc->storage->contiguous);
    CHECK_EQ_INT(a->storage, CATERVA_STORAGE_BLOSC);
    CHECK_EQ_INT(caterva_to_buffer(ctx, a, out, 30), CATERVA_SUCCEED);
    CHECK(memcmp(out, src, 30) == 0);
    int64_t row[5] = {0};
    CHECK_EQ_INT(caterva_append(ctx, a, row, 10, 0), CATERVA_SUCCEED);
    CHECK_EQ_INT(a->shape[0], 4);
  }
  caterva_free(ctx, &a);
  caterva_ctx_free(&ctx);
  blosc2_destroy();
  return test_finish("test_caterva_storage_flat");
}
