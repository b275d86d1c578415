/* Every fixture frame written by the reference (tests/fixtures/frames and
   c-blosc2-compat) opens through blosc2_schunk_open, every chunk decompresses
   to the size MANIFEST.tsv records, and the SHA-256 of the decoded bytes
   equals the manifest's digest. The digest is computed with the small
   SHA-256 below (FIPS 180-4, written for this test). */
#include "test_common.h"

#include <dirent.h>
#include <stdint.h>


static const uint32_t sha256_k[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define SHA_ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(uint32_t h[8], const uint8_t *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++) {
    w[i] = ((uint32_t)p[4 * i] << 24) | ((uint32_t)p[4 * i + 1] << 16) |
           ((uint32_t)p[4 * i + 2] << 8) | (uint32_t)p[4 * i + 3];
  }
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = SHA_ROR(w[i - 15], 7) ^ SHA_ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = SHA_ROR(w[i - 2], 17) ^ SHA_ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = hh + (SHA_ROR(e, 6) ^ SHA_ROR(e, 11) ^ SHA_ROR(e, 25)) + ((e & f) ^ (~e & g)) +
                  sha256_k[i] + w[i];
    uint32_t t2 = (SHA_ROR(a, 2) ^ SHA_ROR(a, 13) ^ SHA_ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
  }
  h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

/* Writes the lowercase hex digest of `data` (65 bytes with the NUL) into `hex`. */
static void sha256_hex(const uint8_t *data, size_t len, char hex[65]) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  size_t full = len / 64;
  for (size_t i = 0; i < full; i++) sha256_block(h, data + 64 * i);
  uint8_t tail[128];
  size_t rest = len - full * 64;
  memset(tail, 0, sizeof(tail));
  if (rest) memcpy(tail, data + full * 64, rest);
  tail[rest] = 0x80;
  size_t tlen = rest < 56 ? 64 : 128;
  uint64_t bits = (uint64_t)len * 8;
  for (int i = 0; i < 8; i++) tail[tlen - 1 - i] = (uint8_t)(bits >> (8 * i));
  sha256_block(h, tail);
  if (tlen == 128) sha256_block(h, tail + 64);
  for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", (unsigned)h[i]);
}


/* Path of `rel` (fixtures/...) under the repository's tests/ folder, which
   CMake names in B2ND_TESTS_DIR. */
static const char *fixture_path(const char *rel, char *buf, size_t len) {
  snprintf(buf, len, "%s/%s", B2ND_TESTS_DIR, rel);
  return buf;
}

/* Opens every *.b2frame in `dir` (relative to tests/) and checks
   that each chunk decompresses to chunk-sized output. Returns how many. */
static int open_all_in(const char *dir) {
  char root[1024], path[2048];
  fixture_path(dir, root, sizeof(root));
  DIR *d = opendir(root);
  CHECK(d != NULL);
  if (d == NULL) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 8 || strcmp(e->d_name + len - 8, ".b2frame") != 0) continue;
    snprintf(path, sizeof(path), "%s/%s", root, e->d_name);
    blosc2_schunk *sc = blosc2_schunk_open(path);
    CHECK(sc != NULL);
    if (sc == NULL) { fprintf(stderr, "cannot open %s\n", path); continue; }
    n++;
    CHECK(sc->nchunks > 0);
    CHECK(sc->frame != NULL);
    int64_t total = 0;
    for (int64_t i = 0; i < sc->nchunks; i++) {
      uint8_t *chunk;
      bool needs_free;
      int cb = blosc2_schunk_get_chunk(sc, i, &chunk, &needs_free);
      CHECK(cb > 0);
      if (cb <= 0) continue;
      int32_t nbytes = 0, cbytes = 0, bsize = 0;
      nbytes = (int32_t)(chunk[4] | (chunk[5] << 8) | (chunk[6] << 16) | ((uint32_t)chunk[7] << 24));
      cbytes = (int32_t)(chunk[12] | (chunk[13] << 8) | (chunk[14] << 16) | ((uint32_t)chunk[15] << 24));
      (void)bsize;
      CHECK_EQ_INT(cbytes, cb);
      if (needs_free) free(chunk);
      uint8_t *buf = malloc((size_t)nbytes + 1);
      CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, i, buf, nbytes), nbytes);
      if (sc->chunksize > 0 && i < sc->nchunks - 1) CHECK_EQ_INT(nbytes, sc->chunksize);
      total += nbytes;
      free(buf);
    }
    CHECK_EQ_INT(total, sc->nbytes);
    blosc2_schunk_free(sc);
  }
  closedir(d);
  return n;
}

int main(void) {
  blosc2_init();
  CHECK_EQ_INT(open_all_in("fixtures/frames"), 5);
  CHECK_EQ_INT(open_all_in("fixtures/c-blosc2-compat"), 3);

  /* Digests of every frame chunk listed in the manifest. */
  char mpath[1024];
  fixture_path("fixtures/MANIFEST.tsv", mpath, sizeof(mpath));
  FILE *m = fopen(mpath, "r");
  CHECK(m != NULL);
  if (m == NULL) return test_finish("test_frame_fixtures");
  char line[4096];
  int checked = 0;
  while (fgets(line, sizeof(line), m)) {
    long long decoded, covered, nchunk;
    char *tab[6];
    int nt = 0;
    tab[nt++] = line;
    for (char *p = line; *p && nt < 6; p++) {
      if (*p == '\t') { *p = '\0'; tab[nt++] = p + 1; }
    }
    if (nt < 5) continue;
    const char *file = tab[0], *part = tab[1], *digest = tab[4];
    size_t fl = strlen(file);
    if (fl < 8 || strcmp(file + fl - 8, ".b2frame") != 0) continue;
    if (sscanf(part, "chunk %lld", &nchunk) != 1) continue;
    decoded = atoll(tab[2]);
    covered = atoll(tab[3]);

    char rel[4200], path[4400];
    snprintf(rel, sizeof(rel), "fixtures/%s", file);
    fixture_path(rel, path, sizeof(path));
    blosc2_schunk *sc = blosc2_schunk_open(path);
    CHECK(sc != NULL);
    if (sc == NULL) continue;
    uint8_t *buf = malloc((size_t)decoded + 1);
    int n = blosc2_schunk_decompress_chunk(sc, nchunk, buf, (int32_t)decoded);
    CHECK_EQ_INT(n, decoded);
    char hex[65];
    sha256_hex(buf, (size_t)covered, hex);
    if (strncmp(hex, digest, 64) != 0) {
      fprintf(stderr, "%s %s: digest %s, manifest %.64s\n", file, part, hex, digest);
      test_failures++;
    }
    checked++;
    free(buf);
    blosc2_schunk_free(sc);
  }
  fclose(m);
  CHECK_EQ_INT(checked, 65);

  /* VL-block frames: the blocks of each chunk, fetched one by one with
     blosc2_schunk_get_vlblock, concatenate to the whole decoded chunk. */
  const char *vlnames[2] = {"fixtures/c-blosc2-compat/vlblocks-lz4-fixed-3.0.0.b2frame",
                            "fixtures/c-blosc2-compat/vlblocks-lz4-variable-3.0.0.b2frame"};
  for (int f = 0; f < 2; f++) {
    char path[1024];
    fixture_path(vlnames[f], path, sizeof(path));
    blosc2_schunk *sc = blosc2_schunk_open(path);
    CHECK(sc != NULL);
    if (sc == NULL) continue;
    for (int64_t i = 0; i < sc->nchunks; i++) {
      uint8_t whole[1 << 16];
      int n = blosc2_schunk_decompress_chunk(sc, i, whole, (int32_t)sizeof(whole));
      CHECK(n > 0);
      int64_t pos = 0;
      int nblocks = 0;
      for (int32_t b = 0;; b++) {
        uint8_t *blk = NULL;
        int32_t bsize = -1;
        int rc = blosc2_schunk_get_vlblock(sc, i, b, &blk, &bsize);
        if (rc == BLOSC2_ERROR_INVALID_PARAM) break;
        CHECK_EQ_INT(rc, bsize);
        if (rc < 0 || pos + bsize > n) { test_failures++; break; }
        CHECK(memcmp(blk, whole + pos, (size_t)bsize) == 0);
        pos += bsize;
        nblocks++;
        free(blk);
      }
      CHECK(nblocks > 1);
      CHECK_EQ_INT(pos, n);
    }
    uint8_t *blk;
    int32_t bsize;
    CHECK_EQ_INT(blosc2_schunk_get_vlblock(sc, 0, -1, &blk, &bsize), BLOSC2_ERROR_INVALID_PARAM);
    CHECK(blosc2_schunk_get_vlblock(sc, sc->nchunks, 0, &blk, &bsize) < 0);
    blosc2_schunk_free(sc);
  }
  /* A regular frame's chunks have no VL blocks. */
  {
    char path[1024];
    fixture_path("fixtures/frames/frame_simple-lz4.b2frame", path, sizeof(path));
    blosc2_schunk *sc = blosc2_schunk_open(path);
    uint8_t *blk;
    int32_t bsize;
    CHECK_EQ_INT(blosc2_schunk_get_vlblock(sc, 0, 0, &blk, &bsize), BLOSC2_ERROR_INVALID_PARAM);
    blosc2_schunk_free(sc);
  }

  /* The digest routine itself, on the FIPS 180-4 "abc" example. */
  char hex[65];
  sha256_hex((const uint8_t *)"abc", 3, hex);
  CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);

  blosc2_destroy();
  return test_finish("test_frame_fixtures");
}
