/* A codec plugin as the reference loads them: a shared library libblosc2_testcodec.so whose
 * `info` names its encoder and decoder. It compresses inputs made of byte pairs (each byte
 * twice): the stream is a 4-byte tag, then one byte of each pair XORed with 0x3C, so a test can
 * see the plugin ran; other inputs it declines (returns 0: stored as they are). The encoder also calls back into the library that
 * loaded it (blosc2_compcode_to_compname), as real plugins do (grok calls b2nd_deserialize_meta):
 * that symbol must resolve when the plugin is opened. */
#include <blosc2.h>
#include <blosc2/codecs-registry.h>
#include <string.h>

static const uint8_t TAG[4] = {'B', '2', 'P', 'L'};

/* The super-chunks the last encode and decode were told about (cparams->schunk,
 * dparams->schunk), for the test to read with dlsym. */
void *testcodec_last_cschunk = NULL;
void *testcodec_last_dschunk = NULL;

int testcodec_encode(const uint8_t *input, int32_t input_len, uint8_t *output, int32_t output_len,
                     uint8_t meta, blosc2_cparams *cparams, const void *chunk) {
  (void)meta;
  (void)chunk;
#ifndef TESTCODEC_STANDALONE
  /* Built standalone for tests/python, where each library loads it in a process whose global
   * scope holds neither library's symbols. */
  const char *name = NULL;
  if (blosc2_compcode_to_compname(cparams->compcode, &name) < 0 || name == NULL ||
      strcmp(name, "testcodec") != 0) {
    return -1;
  }
#endif
  testcodec_last_cschunk = cparams->schunk;
  if (input_len % 2 != 0 || output_len < 4 + input_len / 2) {
    return 0;
  }
  for (int32_t i = 0; i < input_len; i += 2) {
    if (input[i] != input[i + 1]) return 0;
  }
  memcpy(output, TAG, 4);
  for (int32_t i = 0; i < input_len / 2; i++) {
    output[4 + i] = (uint8_t)(input[2 * i] ^ 0x3C);
  }
  return 4 + input_len / 2;
}

int testcodec_decode(const uint8_t *input, int32_t input_len, uint8_t *output, int32_t output_len,
                     uint8_t meta, blosc2_dparams *dparams, const void *chunk) {
  (void)meta;
  (void)chunk;
  testcodec_last_dschunk = dparams->schunk;
  if (input_len < 4 || memcmp(input, TAG, 4) != 0 || 2 * (input_len - 4) > output_len) {
    return -1;
  }
  for (int32_t i = 0; i < input_len - 4; i++) {
    output[2 * i] = output[2 * i + 1] = (uint8_t)(input[4 + i] ^ 0x3C);
  }
  return 2 * (input_len - 4);
}

codec_info info = {.encoder = "testcodec_encode", .decoder = "testcodec_decode"};
