/*
 * Test-only stand-in for C-Blosc2's private blosc/frame.h, which no install ships.
 *
 * It gives the upstream tests what they actually use: the byte offsets of the
 * contiguous-frame (cframe) header and trailer, which are fixed by the on-disk
 * format (see C-Blosc2's README_CFRAME_FORMAT.rst), and the leading fields of
 * the reference library's private frame struct, which test_frame reads through
 * schunk->frame.  The private frame_* functions are not declared: an installed
 * shared library does not export them, so a test calling one cannot link.
 */
#ifndef B2ND_CLIENT_SHIM_FRAME_H
#define B2ND_CLIENT_SHIM_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "blosc2.h"

/* Flag bits of the frame header's "flags" byte. */
#define FRAME_VARIABLE_CHUNKS (1U << 6)
#define FRAME_VL_BLOCKS (1U << 7)

/* Header field offsets.  Every field is a msgpack value, so each offset is the
 * previous one plus the previous value's size plus its one-byte msgpack tag. */
#define FRAME_HEADER_MAGIC 2                          /* fixarray + magic str tag */
#define FRAME_HEADER_LEN (FRAME_HEADER_MAGIC + 9)     /* 11: int32 header length */
#define FRAME_LEN (FRAME_HEADER_LEN + 5)              /* 16: int64 frame length */
#define FRAME_FLAGS (FRAME_LEN + 9)                   /* 25: general flags */
#define FRAME_TYPE (FRAME_FLAGS + 1)                  /* 26 */
#define FRAME_CODECS (FRAME_FLAGS + 2)                /* 27 */
#define FRAME_OTHER_FLAGS (FRAME_FLAGS + 3)           /* 28 */
#define FRAME_NBYTES (FRAME_FLAGS + 5)                /* 30: int64 nbytes */
#define FRAME_CBYTES (FRAME_NBYTES + 9)               /* 39: int64 cbytes */
#define FRAME_TYPESIZE (FRAME_CBYTES + 9)             /* 48: int32 typesize */
#define FRAME_BLOCKSIZE (FRAME_TYPESIZE + 5)          /* 53 */
#define FRAME_CHUNKSIZE (FRAME_BLOCKSIZE + 5)         /* 58 */
#define FRAME_NTHREADS_C (FRAME_CHUNKSIZE + 5)        /* 63: int16 */
#define FRAME_NTHREADS_D (FRAME_NTHREADS_C + 3)       /* 66: int16 */
#define FRAME_HAS_VLMETALAYERS (FRAME_NTHREADS_D + 2) /* 68 */
#define FRAME_FILTER_PIPELINE (FRAME_HAS_VLMETALAYERS + 2)  /* 70 */
#define FRAME_UDCODEC (FRAME_FILTER_PIPELINE + 7)     /* 77 */
#define FRAME_CODEC_META (FRAME_FILTER_PIPELINE + 8)  /* 78 */
#define FRAME_OTHER_FLAGS2 (FRAME_FILTER_PIPELINE + 15)  /* 85 */
#define FRAME_USE_DICT (1U << 0)                      /* bit of FRAME_OTHER_FLAGS2 */
#define FRAME_HEADER_MINLEN (FRAME_FILTER_PIPELINE + 17)  /* 87: smallest valid header */
#define FRAME_METALAYERS (FRAME_HEADER_MINLEN)        /* 87 */
#define FRAME_IDX_SIZE (FRAME_METALAYERS + 2)         /* 89 */
#define FRAME_FILTER_PIPELINE_MAX 8

/* Trailer constants. */
#define FRAME_TRAILER_VERSION_BETA2 (0U)
#define FRAME_TRAILER_VERSION (1U)
#define FRAME_TRAILER_MINLEN (25)      /* smallest trailer (msgpack overhead) */
#define FRAME_TRAILER_LEN_OFFSET (22)  /* trailer length field, counted from the end */
#define FRAME_TRAILER_VLMETALAYERS (2)

#define FRAME_CONTIGUOUS_TYPE 0
#define FRAME_DIRECTORY_TYPE 1

/* Leading fields of the reference's private frame struct, in its order (C-Blosc2
 * blosc/frame.h).  Only valid for a pointer the library handed out
 * (schunk->frame); never allocate one, the real struct is longer.
 * Only the test that reads it (test_frame) gets it: the harness defines
 * CLIENT_SHIM_FRAME_STRUCT for that one, so that the others, which use only
 * the offsets above, do not depend on a private layout. */
#ifdef CLIENT_SHIM_FRAME_STRUCT
typedef struct {
  char *urlpath;
  uint8_t *cframe;
  bool avoid_cframe_free;
  uint8_t *coffsets;
  bool coffsets_needs_free;
  int64_t len;
  int64_t maxlen;
  uint32_t trailer_len;
  bool sframe;
  blosc2_schunk *schunk;
  int64_t file_offset;
} blosc2_frame_s;
#endif

#endif
