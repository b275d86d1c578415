/* A codec plugin as the reference loads them: a shared library libblosc2_testcodec.so whose
 * `info` names its encoder and decoder. It compresses inputs made of byte pairs (each byte
 * twice): the stream is a 4-byte tag, then one byte of each pair XORed with 0x3C, so a test can
 * see the plugin ran; other inputs it declines (returns 0: stored as they are). The encoder also calls back into the library that
 * loaded it (blosc2_compcode_to_compname), as real plugins do (grok calls b2nd_deserialize_meta):
 * that symbol must resolve when the plugin is opened. */
#include <blosc2.h>
#include <blosc2/codecs-registry.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t TAG[4] = {'B', '2', 'P', 'L'};

/* The super-chunks the last encode and decode were told about (cparams->schunk,
 * dparams->schunk), for the test to read with dlsym. */
void *testcodec_last_cschunk = NULL;
void *testcodec_last_dschunk = NULL;
/* The length of the "b2nd" metalayer read through them at that time (a negative code when it
 * cannot be read), as the JPEG 2000 plugins read it. Only when built against the library. */
int testcodec_last_cmeta = 0;
int testcodec_last_dmeta = 0;
/* What blosc2_vlmeta_exists(cparams->schunk, "none") returned at the last encode. */
int testcodec_last_cvlmeta = 0;
/* When set, the next encode calls blosc2_schunk_free(cparams->schunk) on the super-chunk whose
 * call runs it and stores the result here (the library must refuse, not free it). */
int testcodec_free_at_encode = 0;
int testcodec_last_cfree = 0;

#ifndef TESTCODEC_STANDALONE
static int b2nd_meta_len(void *schunk) {
  if (schunk == NULL) return BLOSC2_ERROR_NULL_POINTER;
  uint8_t *content = NULL;
  int32_t len = 0;
  int rc = blosc2_meta_get((blosc2_schunk *)schunk, "b2nd", &content, &len);
  free(content);
  return rc < 0 ? rc : len;
}
#endif

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
#ifndef TESTCODEC_STANDALONE
  testcodec_last_cmeta = b2nd_meta_len(cparams->schunk);
  /* Calls other than metalayer reads on the super-chunk whose call runs this are refused. */
  if (cparams->schunk != NULL) {
    testcodec_last_cvlmeta = blosc2_vlmeta_exists((blosc2_schunk *)cparams->schunk, "none");
    /* Blocks are encoded on two threads: only one of them takes the request. */
    if (__atomic_exchange_n(&testcodec_free_at_encode, 0, __ATOMIC_SEQ_CST)) {
      testcodec_last_cfree = blosc2_schunk_free((blosc2_schunk *)cparams->schunk);
    }
  }
#endif
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
#ifndef TESTCODEC_STANDALONE
  testcodec_last_dmeta = b2nd_meta_len(dparams->schunk);
#endif
  if (input_len < 4 || memcmp(input, TAG, 4) != 0 || 2 * (input_len - 4) > output_len) {
    return -1;
  }
  for (int32_t i = 0; i < input_len - 4; i++) {
    output[2 * i] = output[2 * i + 1] = (uint8_t)(input[4 + i] ^ 0x3C);
  }
  return 2 * (input_len - 4);
}

codec_info info = {.encoder = "testcodec_encode", .decoder = "testcodec_decode"};
