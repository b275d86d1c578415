/* The Blosc1-style calls, the global settings and the BLOSC_* environment variables. */
#include "test_common.h"

#include <stdint.h>

#define N 200000

static uint8_t src[N], chunk[N + 64], out[N];

static void fill(void) {
  for (int i = 0; i < N; i++) src[i] = (uint8_t)((i / 50) ^ (i % 3));
}

static int round_trip(int clevel, int doshuffle, size_t typesize) {
  int c = blosc1_compress(clevel, doshuffle, typesize, N, src, chunk, sizeof(chunk));
  if (c <= 0) return c;
  memset(out, 0, N);
  int d = blosc1_decompress(chunk, out, N);
  if (d != N || memcmp(out, src, N) != 0) return -1000;
  return c;
}

static void test_globals(void) {
  CHECK(strcmp(blosc1_get_compressor(), "blosclz") == 0);
  CHECK_EQ_INT(blosc1_set_compressor("zstd"), BLOSC_ZSTD);
  CHECK(strcmp(blosc1_get_compressor(), "zstd") == 0);
  CHECK_EQ_INT(blosc1_set_compressor("nope"), -1);
  CHECK(strcmp(blosc1_get_compressor(), "zstd") == 0); /* unchanged */
  int c = round_trip(5, BLOSC_SHUFFLE, 4);
  CHECK(c > 0 && c < N / 4);
  CHECK_EQ_INT((chunk[BLOSC2_CHUNK_FLAGS] >> 5) & 7, BLOSC_ZSTD_FORMAT);
  CHECK(strcmp(blosc2_cbuffer_complib(chunk), "Zstd") == 0);

  CHECK_EQ_INT(blosc2_get_nthreads(), 1);
  CHECK_EQ_INT(blosc2_set_nthreads(4), 1);
  CHECK_EQ_INT(blosc2_get_nthreads(), 4);
  CHECK_EQ_INT(blosc2_set_nthreads(0), BLOSC2_ERROR_INVALID_PARAM);
  CHECK_EQ_INT(blosc2_get_nthreads(), 4);
  int c4 = round_trip(5, BLOSC_SHUFFLE, 4);
  CHECK_EQ_INT(c4, c); /* threads do not change the bytes */
  CHECK_EQ_INT(blosc2_set_nthreads(1), 4);

  CHECK_EQ_INT(blosc1_get_blocksize(), 0);
  blosc1_set_blocksize(8192);
  CHECK_EQ_INT(blosc1_get_blocksize(), 8192);
  CHECK(round_trip(5, BLOSC_SHUFFLE, 4) > 0);
  int32_t nbytes, cbytes, blocksize;
  CHECK_EQ_INT(blosc2_cbuffer_sizes(chunk, &nbytes, &cbytes, &blocksize), 0);
  CHECK_EQ_INT(blocksize, 8192);
  blosc1_set_blocksize(0);

  blosc2_set_delta(1);
  CHECK(round_trip(5, BLOSC_SHUFFLE, 4) > 0);
  CHECK_EQ_INT(chunk[16 + 4], BLOSC_DELTA);
  CHECK_EQ_INT(chunk[16 + 5], BLOSC_SHUFFLE);
  blosc2_set_delta(0);
  CHECK(round_trip(5, BLOSC_BITSHUFFLE, 4) > 0);
  CHECK_EQ_INT(chunk[16 + 4], 0);
  CHECK_EQ_INT(chunk[16 + 5], BLOSC_BITSHUFFLE);

  blosc1_set_splitmode(BLOSC_ALWAYS_SPLIT);
  CHECK_EQ_INT(blosc1_set_compressor("blosclz"), BLOSC_BLOSCLZ);
  CHECK(round_trip(5, BLOSC_SHUFFLE, 4) > 0);
  CHECK_EQ_INT(chunk[BLOSC2_CHUNK_FLAGS] & 0x10, 0); /* split */
  blosc1_set_splitmode(BLOSC_NEVER_SPLIT);
  CHECK(round_trip(5, BLOSC_SHUFFLE, 4) > 0);
  CHECK_EQ_INT(chunk[BLOSC2_CHUNK_FLAGS] & 0x10, 0x10); /* not split */
  blosc1_set_splitmode(BLOSC_FORWARD_COMPAT_SPLIT);

  /* clevel 0: a plain copy; bad clevel: an error */
  CHECK_EQ_INT(round_trip(0, BLOSC_SHUFFLE, 4), N + BLOSC2_MAX_OVERHEAD);
  CHECK(chunk[BLOSC2_CHUNK_FLAGS] & BLOSC_MEMCPYED);
  CHECK_EQ_INT(blosc1_compress(10, 1, 4, N, src, chunk, sizeof(chunk)), BLOSC2_ERROR_CODEC_PARAM);
  /* dest too small */
  CHECK_EQ_INT(blosc1_compress(5, 1, 4, N, src, chunk, 1000), 0);
}

static void test_blosc1_queries(void) {
  int c = round_trip(5, BLOSC_SHUFFLE, 8);
  CHECK(c > 0);
  size_t nbytes = 0, cbytes = 0, blocksize = 0;
  blosc1_cbuffer_sizes(chunk, &nbytes, &cbytes, &blocksize);
  CHECK_EQ_INT(nbytes, N);
  CHECK_EQ_INT(cbytes, c);
  CHECK(blocksize > 0 && blocksize <= N);
  size_t typesize = 0;
  int flags = 0;
  blosc1_cbuffer_metainfo(chunk, &typesize, &flags);
  CHECK_EQ_INT(typesize, 8);
  CHECK_EQ_INT(flags & (BLOSC_DOSHUFFLE | BLOSC_DOBITSHUFFLE), BLOSC_DOSHUFFLE | BLOSC_DOBITSHUFFLE);
  size_t nb = 1;
  CHECK_EQ_INT(blosc1_cbuffer_validate(chunk, (size_t)c, &nb), 0);
  CHECK_EQ_INT(nb, N);
  CHECK_EQ_INT(blosc1_cbuffer_validate(chunk, (size_t)c + 1, &nb), BLOSC2_ERROR_INVALID_HEADER);
  CHECK_EQ_INT(nb, 0);
  CHECK_EQ_INT(blosc1_cbuffer_validate(chunk, 10, &nb), BLOSC2_ERROR_WRITE_BUFFER);
  uint8_t junk[32] = {0};
  blosc1_cbuffer_sizes(junk, &nbytes, &cbytes, &blocksize);
  CHECK(nbytes == 0 && cbytes == 0 && blocksize == 0);
  blosc1_cbuffer_metainfo(junk, &typesize, &flags);
  CHECK(typesize == 0 && flags == 0);

  uint8_t items[80];
  CHECK_EQ_INT(blosc1_getitem(chunk, 1000, 10, items), 80);
  CHECK(memcmp(items, src + 8000, 80) == 0);
  CHECK_EQ_INT(blosc1_getitem(chunk, 0, 0, items), 0);
  CHECK_EQ_INT(blosc1_getitem(chunk, N / 8, 1, items), BLOSC2_ERROR_INVALID_PARAM);
  /* destination smaller than nbytes */
  CHECK_EQ_INT(blosc1_decompress(chunk, out, N - 1), BLOSC2_ERROR_WRITE_BUFFER);
  CHECK(blosc1_decompress(junk, out, N) < 0);
  /* blosc2_compress / blosc2_decompress / blosc2_getitem use the same settings */
  int c2 = blosc2_compress(5, BLOSC_SHUFFLE, 8, src, N, chunk, sizeof(chunk));
  CHECK_EQ_INT(c2, c);
  CHECK_EQ_INT(blosc2_decompress(chunk, c2, out, N), N);
  CHECK(memcmp(out, src, N) == 0);
  CHECK_EQ_INT(blosc2_getitem(chunk, c2, 3, 2, items, 16), 16);
  CHECK(memcmp(items, src + 24, 16) == 0);
}

static void test_env_vars(void) {
  int base = round_trip(5, BLOSC_SHUFFLE, 4);
  CHECK(base > 0);

  setenv("BLOSC_CLEVEL", "0", 1);
  CHECK_EQ_INT(round_trip(5, BLOSC_SHUFFLE, 4), N + BLOSC2_MAX_OVERHEAD);
  unsetenv("BLOSC_CLEVEL");

  setenv("BLOSC_SHUFFLE", "BITSHUFFLE", 1);
  CHECK(round_trip(5, BLOSC_SHUFFLE, 4) > 0);
  CHECK_EQ_INT(chunk[16 + 5], BLOSC_BITSHUFFLE);
  setenv("BLOSC_SHUFFLE", "NOSHUFFLE", 1);
  CHECK(round_trip(5, BLOSC_SHUFFLE, 4) > 0);
  CHECK_EQ_INT(chunk[16 + 5], 0);
  unsetenv("BLOSC_SHUFFLE");

  setenv("BLOSC_TYPESIZE", "2", 1);
  CHECK(round_trip(5, BLOSC_SHUFFLE, 4) > 0);
  CHECK_EQ_INT(chunk[3], 2);
  unsetenv("BLOSC_TYPESIZE");

  setenv("BLOSC_DELTA", "1", 1);
  CHECK(round_trip(5, BLOSC_SHUFFLE, 4) > 0);
  CHECK_EQ_INT(chunk[16 + 4], BLOSC_DELTA);
  unsetenv("BLOSC_DELTA");
  /* BLOSC_DELTA set the global delta, as in the reference */
  CHECK(round_trip(5, BLOSC_SHUFFLE, 4) > 0);
  CHECK_EQ_INT(chunk[16 + 4], BLOSC_DELTA);
  blosc2_set_delta(0);

  setenv("BLOSC_COMPRESSOR", "LZ4", 1);
  CHECK(round_trip(5, BLOSC_SHUFFLE, 4) > 0);
  CHECK_EQ_INT((chunk[BLOSC2_CHUNK_FLAGS] >> 5) & 7, BLOSC_LZ4_FORMAT);
  CHECK(strcmp(blosc1_get_compressor(), "lz4") == 0);
  unsetenv("BLOSC_COMPRESSOR");
  blosc1_set_compressor("blosclz");

  setenv("BLOSC_BLOCKSIZE", "16384", 1);
  CHECK(round_trip(5, BLOSC_SHUFFLE, 4) > 0);
  int32_t nbytes, cbytes, blocksize;
  blosc2_cbuffer_sizes(chunk, &nbytes, &cbytes, &blocksize);
  CHECK_EQ_INT(blocksize, 16384);
  CHECK_EQ_INT(blosc1_get_blocksize(), 16384);
  unsetenv("BLOSC_BLOCKSIZE");
  blosc1_set_blocksize(0);

  setenv("BLOSC_NTHREADS", "3", 1);
  CHECK_EQ_INT(round_trip(5, BLOSC_SHUFFLE, 4), base);
  CHECK_EQ_INT(blosc2_get_nthreads(), 3);
  setenv("BLOSC_NTHREADS", "0", 1);
  CHECK_EQ_INT(blosc1_decompress(chunk, out, N), BLOSC2_ERROR_INVALID_PARAM);
  unsetenv("BLOSC_NTHREADS");
  blosc2_set_nthreads(1);

  setenv("BLOSC_SPLITMODE", "NEVER", 1);
  CHECK(round_trip(5, BLOSC_SHUFFLE, 4) > 0);
  CHECK_EQ_INT(chunk[BLOSC2_CHUNK_FLAGS] & 0x10, 0x10);
  unsetenv("BLOSC_SPLITMODE");
  blosc1_set_splitmode(BLOSC_FORWARD_COMPAT_SPLIT);

  setenv("BLOSC_NOLOCK", "1", 1);
  CHECK_EQ_INT(round_trip(5, BLOSC_SHUFFLE, 4), base);
  unsetenv("BLOSC_NOLOCK");

  /* contexts honour the variables too */
  setenv("BLOSC_TYPESIZE", "8", 1);
  setenv("BLOSC_CLEVEL", "9", 1);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  blosc2_cparams got;
  CHECK_EQ_INT(blosc2_ctx_get_cparams(cctx, &got), 0);
  CHECK_EQ_INT(got.typesize, 8);
  CHECK_EQ_INT(got.clevel, 9);
  blosc2_free_ctx(cctx);
  unsetenv("BLOSC_TYPESIZE");
  unsetenv("BLOSC_CLEVEL");
}

int main(void) {
  blosc2_init();
  fill();
  test_globals();
  test_blosc1_queries();
  test_env_vars();
  blosc2_destroy();
  return test_finish("test_blosc1");
}
