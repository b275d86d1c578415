/* User I/O callbacks: a backend registered with blosc2_register_io_cb that
   wraps the exported stdio callbacks and counts bytes read and written.
   Reading one chunk of a large frame through it must not read the file. */
#include "test_common.h"

#include <stdint.h>

static int64_t bytes_read = 0, bytes_written = 0;
static int opens = 0, closes = 0, destroys = 0;

static void *count_open(const char *urlpath, const char *mode, void *params) {
  opens++;
  return blosc2_stdio_open(urlpath, mode, params);
}
static int count_close(void *stream) {
  closes++;
  return blosc2_stdio_close(stream);
}
static int64_t count_size(void *stream) { return blosc2_stdio_size(stream); }
static int64_t count_write(const void *ptr, int64_t size, int64_t nitems, int64_t position,
                           void *stream) {
  int64_t n = blosc2_stdio_write(ptr, size, nitems, position, stream);
  bytes_written += n * size;
  return n;
}
static int64_t count_read(void **ptr, int64_t size, int64_t nitems, int64_t position,
                          void *stream) {
  int64_t n = blosc2_stdio_read(ptr, size, nitems, position, stream);
  bytes_read += n * size;
  return n;
}
static int count_truncate(void *stream, int64_t size) { return blosc2_stdio_truncate(stream, size); }
static int count_destroy(void *params) {
  (void)params;
  destroys++;
  return 0;
}

#define COUNTING_ID 200

int main(void) {
  blosc2_init();
  blosc2_io_cb io_cb = {
    .id = COUNTING_ID, .name = "counting", .is_allocation_necessary = true,
    .open = count_open, .close = count_close, .size = count_size, .write = count_write,
    .read = count_read, .truncate = count_truncate, .destroy = count_destroy};
  CHECK_EQ_INT(blosc2_register_io_cb(&io_cb), 0);
  CHECK_EQ_INT(blosc2_register_io_cb(&io_cb), 0); /* same id and name: accepted */
  blosc2_io_cb other = io_cb;
  other.name = "other";
  CHECK_EQ_INT(blosc2_register_io_cb(&other), BLOSC2_ERROR_PLUGIN_IO);
  other.id = 7;
  CHECK_EQ_INT(blosc2_register_io_cb(&other), BLOSC2_ERROR_PLUGIN_IO);
  CHECK_EQ_INT(blosc2_register_io_cb(NULL), BLOSC2_ERROR_INVALID_PARAM);
  blosc2_io_cb *got = blosc2_get_io_cb(COUNTING_ID);
  CHECK(got != NULL && got->read == count_read);
  blosc2_io_cb *fs = blosc2_get_io_cb(BLOSC2_IO_FILESYSTEM);
  CHECK(fs != NULL && fs->open == blosc2_stdio_open);
  CHECK(blosc2_get_io_cb(250) == NULL);

  /* A 16 MB frame of poorly compressible data, written through the backend. */
  const char *path = "test_schunk_udio.b2frame";
  blosc2_remove_urlpath(path);
  blosc2_io io = {.id = COUNTING_ID, .name = "counting", .params = NULL};
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 4;
  cparams.clevel = 1;
  blosc2_storage storage = {.contiguous = true, .urlpath = (char *)path, .cparams = &cparams,
                            .io = &io};
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  CHECK(sc != NULL);
  if (sc == NULL) return test_finish("test_schunk_udio");
  enum { ITEMS = 256 * 1024, NCH = 16 };
  uint32_t *data = malloc(ITEMS * 4);
  uint32_t x = 12345;
  for (int k = 0; k < NCH; k++) {
    for (int i = 0; i < ITEMS; i++) {
      x = x * 1664525u + 1013904223u;
      data[i] = x;
    }
    CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, data, ITEMS * 4), k + 1);
  }
  CHECK(bytes_written > (int64_t)NCH * ITEMS * 4 / 2);
  CHECK(opens > 0);
  uint32_t last_chunk_first = data[0];
  blosc2_schunk_free(sc);
  CHECK_EQ_INT(destroys, 1);
  CHECK_EQ_INT(opens, closes);

  /* Open through the backend and read one chunk. */
  bytes_read = 0;
  sc = blosc2_schunk_open_udio(path, &io);
  CHECK(sc != NULL);
  if (sc) {
    CHECK_EQ_INT(sc->nchunks, NCH);
    CHECK(sc->storage->io != NULL && sc->storage->io->id == COUNTING_ID);
    int64_t after_open = bytes_read;
    CHECK(after_open < 64 * 1024);
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, NCH - 1, data, ITEMS * 4), ITEMS * 4);
    CHECK_EQ_INT(data[0], last_chunk_first);
    int64_t one_chunk = bytes_read - after_open;
    CHECK(one_chunk >= (int64_t)ITEMS * 4 / 2);   /* the chunk was read... */
    CHECK(bytes_read < sc->cbytes / 4);            /* ...and not the whole file */
    /* A slice of a few items reads only the blocks it needs. */
    int64_t before = bytes_read;
    uint32_t few[4];
    CHECK_EQ_INT(blosc2_schunk_get_slice_buffer(sc, 5 * ITEMS + 10, 5 * ITEMS + 14, few), 0);
    CHECK(bytes_read - before < (int64_t)ITEMS * 4 / 2);

    /* A lazy chunk: header, block starts and the reference's trailer
       (nchunk, chunk offset, block csizes); the blocks stay on disk. */
    uint8_t *lazy;
    bool lazy_free;
    before = bytes_read;
    int lazy_len = blosc2_schunk_get_lazychunk(sc, 5, &lazy, &lazy_free);
    int32_t lz_nbytes, lz_cbytes, lz_bsize;
    CHECK(lazy_len > 32);
    CHECK(lazy_free);
    CHECK_EQ_INT(blosc2_cbuffer_sizes(lazy, &lz_nbytes, &lz_cbytes, &lz_bsize), 0);
    CHECK_EQ_INT(lz_nbytes, ITEMS * 4);
    CHECK(lazy[31] & 0x08);
    int nblocks = (lz_nbytes + lz_bsize - 1) / lz_bsize;
    CHECK_EQ_INT(lazy_len, 32 + nblocks * 4 + 12 + nblocks * 4);
    CHECK(bytes_read - before < lz_cbytes / 4); /* only header and bstarts read */
    int32_t trailer_nchunk;
    int64_t trailer_offset;
    memcpy(&trailer_nchunk, lazy + 32 + nblocks * 4, 4);
    memcpy(&trailer_offset, lazy + 32 + nblocks * 4 + 4, 8);
    CHECK_EQ_INT(trailer_nchunk, 5);
    int64_t *offsets = blosc2_frame_get_offsets(sc);
    CHECK(offsets != NULL);
    if (offsets) {
      /* The trailer offset is the chunk's position from the frame start:
         past the header, at the index entry. */
      CHECK(trailer_offset > offsets[5]);
      free(offsets);
    }
    int64_t csum = 0;
    for (int j = 0; j < nblocks; j++) {
      int32_t c;
      memcpy(&c, lazy + 32 + nblocks * 4 + 12 + 4 * j, 4);
      CHECK(c > 0);
      csum += c;
    }
    CHECK_EQ_INT(csum + 32 + 4 * nblocks, lz_cbytes);

    /* Decoding it with the super-chunk's dctx reads the blocks from disk. */
    uint32_t *whole = malloc(ITEMS * 4);
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 5, whole, ITEMS * 4), ITEMS * 4);
    memset(data, 0, ITEMS * 4);
    CHECK_EQ_INT(blosc2_decompress_ctx(sc->dctx, lazy, lazy_len, data, ITEMS * 4), ITEMS * 4);
    CHECK(memcmp(data, whole, ITEMS * 4) == 0);
    /* A getitem on it reads only the block holding the items. */
    before = bytes_read;
    uint32_t items[3];
    CHECK_EQ_INT(blosc2_getitem_ctx(sc->dctx, lazy, lazy_len, ITEMS / 2, 3, items, sizeof(items)),
                 sizeof(items));
    CHECK(memcmp(items, whole + ITEMS / 2, sizeof(items)) == 0);
    CHECK(bytes_read - before > 0);
    CHECK(bytes_read - before <= lz_bsize + 64);
    CHECK(bytes_read - before < lz_cbytes / 2);
    /* A context without a super-chunk refuses it. */
    blosc2_context *bare = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
    CHECK_EQ_INT(blosc2_decompress_ctx(bare, lazy, lazy_len, data, ITEMS * 4),
                 BLOSC2_ERROR_INVALID_PARAM);
    blosc2_free_ctx(bare);
    if (lazy_free) free(lazy);
    free(whole);
    blosc2_schunk_free(sc);
  }
  sc = blosc2_schunk_open_offset_udio(path, 0, &io);
  CHECK(sc != NULL);
  blosc2_schunk_free(sc);
  blosc2_io unknown = {.id = 251, .name = "nobody", .params = NULL};
  CHECK(blosc2_schunk_open_udio(path, &unknown) == NULL);

  /* The exported stdio callbacks on their own. */
  void *s = blosc2_stdio_open(path, "rb", NULL);
  CHECK(s != NULL);
  CHECK(blosc2_stdio_size(s) > 0);
  uint8_t magic[8];
  void *p = magic;
  CHECK_EQ_INT(blosc2_stdio_read(&p, 1, 8, 0, s), 8);
  CHECK(memcmp(magic + 1, "\xa8" "b2fram", 7) == 0);
  CHECK_EQ_INT(blosc2_stdio_close(s), 0);
  CHECK(blosc2_stdio_open("no/such/dir/file", "rb", NULL) == NULL);
  CHECK_EQ_INT(blosc2_stdio_close(NULL), -1);
  CHECK_EQ_INT(blosc2_stdio_destroy(NULL), 0);

  /* The memory-mapped backend: write with "w+", read with "r" and "c". */
  blosc2_remove_urlpath(path);
  blosc2_io_cb *mm = blosc2_get_io_cb(BLOSC2_IO_FILESYSTEM_MMAP);
  CHECK(mm != NULL && mm->open == blosc2_stdio_mmap_open && !mm->is_allocation_necessary);
  blosc2_stdio_mmap mmap_w = BLOSC2_STDIO_MMAP_DEFAULTS;
  mmap_w.mode = "w+";
  mmap_w.initial_mapping_size = 1 << 16; /* small: forces the mapping to grow */
  blosc2_io io_mm = {.id = BLOSC2_IO_FILESYSTEM_MMAP, .name = "filesystem_mmap", .params = &mmap_w};
  storage.io = &io_mm;
  sc = blosc2_schunk_new(&storage);
  CHECK(sc != NULL);
  if (sc) {
    for (int k = 0; k < 4; k++) {
      for (int i = 0; i < ITEMS; i++) data[i] = (uint32_t)(i * 7 + k);
      CHECK_EQ_INT(blosc2_schunk_append_buffer(sc, data, ITEMS * 4), k + 1);
    }
    CHECK(mmap_w.mapping_size >= mmap_w.file_size);
    blosc2_schunk_free(sc);
    CHECK(mmap_w.addr == NULL); /* destroyed with the super-chunk */
  }
  blosc2_schunk *plain = blosc2_schunk_open(path);
  CHECK(plain != NULL);
  if (plain) {
    CHECK_EQ_INT(plain->nchunks, 4);
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(plain, 3, data, ITEMS * 4), ITEMS * 4);
    CHECK_EQ_INT(data[10], 73);
    blosc2_schunk_free(plain);
  }
  blosc2_stdio_mmap mmap_r = BLOSC2_STDIO_MMAP_DEFAULTS;
  mmap_r.mode = "r";
  io_mm.params = &mmap_r;
  sc = blosc2_schunk_open_udio(path, &io_mm);
  CHECK(sc != NULL);
  if (sc) {
    CHECK_EQ_INT(sc->nchunks, 4);
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 2, data, ITEMS * 4), ITEMS * 4);
    CHECK_EQ_INT(data[10], 72);
    blosc2_schunk_free(sc);
  }
  /* "c" mode (copy on write) reads the same chunks. */
  blosc2_stdio_mmap mmap_c = BLOSC2_STDIO_MMAP_DEFAULTS;
  mmap_c.mode = "c";
  io_mm.params = &mmap_c;
  sc = blosc2_schunk_open_udio(path, &io_mm);
  CHECK(sc != NULL);
  if (sc) {
    CHECK_EQ_INT(sc->nchunks, 4);
    CHECK_EQ_INT(blosc2_schunk_decompress_chunk(sc, 1, data, ITEMS * 4), ITEMS * 4);
    CHECK_EQ_INT(data[10], 71);
    blosc2_schunk_free(sc);
  }
  /* Sparse frames cannot be memory-mapped. */
  blosc2_stdio_mmap mmap_s = BLOSC2_STDIO_MMAP_DEFAULTS;
  mmap_s.mode = "w+";
  io_mm.params = &mmap_s;
  blosc2_storage sparse = {.contiguous = false, .urlpath = "test_schunk_udio_sparse.b2frame",
                           .cparams = &cparams, .io = &io_mm};
  blosc2_remove_urlpath(sparse.urlpath);
  sc = blosc2_schunk_new(&sparse);
  int64_t sparse_rc = sc ? blosc2_schunk_append_buffer(sc, data, 4000) : BLOSC2_ERROR_FILE_OPEN;
  CHECK(sparse_rc < 0);
  blosc2_schunk_free(sc);
  blosc2_remove_urlpath(sparse.urlpath);

  free(data);
  blosc2_remove_urlpath(path);
  blosc2_destroy();
  return test_finish("test_schunk_udio");
}
