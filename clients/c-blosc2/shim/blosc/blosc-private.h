/*
 * Test-only stand-in for C-Blosc2's private blosc/blosc-private.h.
 *
 * Only the header-inline helpers the frame tests use: byte-order conversion
 * between host and the big-endian msgpack fields of a frame, and the
 * overflow-checked size of a frame's offsets chunk.  Being inline, they are
 * part of the tests, not of the library under test.
 */
#ifndef B2ND_CLIENT_SHIM_BLOSC_PRIVATE_H
#define B2ND_CLIENT_SHIM_BLOSC_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "blosc2.h"

static inline bool shim_host_is_little_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *) &one == 1;
}

/* Copy `size` (1, 2, 4 or 8) bytes, reversing them when the wanted byte order
 * differs from the host's. */
static inline void shim_endian_copy(bool want_little, void *dest, const void *src, int size) {
  if (shim_host_is_little_endian() == want_little) {
    memcpy(dest, src, (size_t) size);
    return;
  }
  uint8_t tmp[8];
  const uint8_t *s = (const uint8_t *) src;
  for (int i = 0; i < size && i < 8; i++) {
    tmp[i] = s[size - 1 - i];
  }
  memcpy(dest, tmp, (size_t) size);
}

#define to_little(dest, src, size) shim_endian_copy(true, (dest), (src), (size))
#define from_little(dest, src, size) shim_endian_copy(true, (dest), (src), (size))
#define to_big(dest, src, size) shim_endian_copy(false, (dest), (src), (size))
#define from_big(dest, src, size) shim_endian_copy(false, (dest), (src), (size))

/* Bytes of the offsets array for `nchunks` chunks (one int64 each); false when
 * that does not fit an int32 length, as the library requires. */
static inline bool blosc2_nchunks_to_offsets_nbytes(int64_t nchunks, int32_t *off_nbytes) {
  if (nchunks < 0 || nchunks > INT32_MAX / (int64_t) sizeof(int64_t)) {
    return false;
  }
  if (off_nbytes != NULL) {
    *off_nbytes = (int32_t) (nchunks * (int64_t) sizeof(int64_t));
  }
  return true;
}

#endif
