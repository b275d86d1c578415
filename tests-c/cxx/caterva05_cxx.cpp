// caterva.h in C++11 with both spellings of the Caterva API in one translation unit:
// Caterva 0.5.0's (storage.backend, storage.properties.blosc, plain buffers, the
// 4-argument caterva_append) and the later one (storage.chunkshape, .contiguous, the
// 5-argument caterva_append). Built with -pedantic: the anonymous members of
// caterva_storage_t are marked __extension__ for GCC and Clang.
#include <caterva.h>

#include <cstddef>
#include <cstring>

static_assert(offsetof(caterva_storage_t, urlpath) == offsetof(caterva_storage_t, properties.blosc.urlpath),
              "both spellings alias the same bytes");
static_assert(sizeof(caterva_storage_properties_blosc_t) == sizeof(caterva_storage_t),
              "the later API's size is kept");

int main() {
  caterva_config_t cfg = CATERVA_CONFIG_DEFAULTS;
  caterva_ctx_t *ctx = nullptr;
  bool ok = caterva_ctx_new(&cfg, &ctx) == CATERVA_SUCCEED;
  caterva_params_t params;
  std::memset(&params, 0, sizeof(params));
  params.itemsize = 1;
  params.ndim = 1;
  params.shape[0] = 10;

  caterva_storage_t old_style = {};
  old_style.backend = CATERVA_STORAGE_BLOSC;
  old_style.properties.blosc.chunkshape[0] = 4;
  old_style.properties.blosc.blockshape[0] = 2;
  old_style.properties.blosc.sequencial = true;
  ok = ok && old_style.chunkshape[0] == 4 && old_style.contiguous;

  caterva_storage_t plain = {};
  plain.backend = CATERVA_STORAGE_PLAINBUFFER;

  caterva_array_t *a = nullptr, *p = nullptr;
  ok = ok && caterva_empty(ctx, &params, &old_style, &a) == CATERVA_SUCCEED;
  ok = ok && caterva_zeros(ctx, &params, &plain, &p) == CATERVA_SUCCEED;
  unsigned char chunk[4] = {1, 2, 3, 4};
  for (int k = 0; ok && k < 3; k++) ok = caterva_append(ctx, a, chunk, 4) == CATERVA_SUCCEED;
  ok = ok && caterva_append(ctx, a, chunk, 4) == CATERVA_ERR_CONTAINER_FILLED;
  ok = ok && caterva_append(ctx, a, chunk, 2, 0) == CATERVA_SUCCEED && a->shape[0] == 12;
  ok = ok && p->storage == CATERVA_STORAGE_PLAINBUFFER && p->sc == nullptr && p->buf != nullptr;
  unsigned char out[12];
  ok = ok && caterva_to_buffer(ctx, a, out, 12) == CATERVA_SUCCEED && out[4] == 1 && out[10] == 1;
  ok = ok && caterva_free(ctx, &a) == CATERVA_SUCCEED;
  ok = ok && caterva_free(ctx, &p) == CATERVA_SUCCEED;
  ok = ok && caterva_ctx_free(&ctx) == CATERVA_SUCCEED;
  blosc2_destroy();
  return ok ? 0 : 1;
}
