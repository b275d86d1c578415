/* A filter plugin as the reference loads them: libblosc2_testfilter.so, whose `info` names its
 * forward and backward functions. Forward adds filters_meta to every byte; backward subtracts. */
#include <blosc2.h>
#include <blosc2/filters-registry.h>

int testfilter_forward(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta,
                       blosc2_cparams *cparams, uint8_t id) {
  (void)cparams;
  (void)id;
  for (int32_t i = 0; i < size; i++) dest[i] = (uint8_t)(src[i] + meta);
  return 0;
}

int testfilter_backward(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta,
                        blosc2_dparams *dparams, uint8_t id) {
  (void)dparams;
  (void)id;
  for (int32_t i = 0; i < size; i++) dest[i] = (uint8_t)(src[i] - meta);
  return 0;
}

filter_info info = {.forward = "testfilter_forward", .backward = "testfilter_backward"};
