/*
 * Test-only stand-in for C-Blosc2's private blosc/shuffle-generic.h.
 *
 * The reference's shuffle_generic/unshuffle_generic are hidden symbols of the
 * library.  Their output is, by contract, the same bytes as the public
 * blosc2_shuffle/blosc2_unshuffle (which only pick a faster implementation of
 * the same transform), so the test routes to those: it then round-trips the
 * library's byte shuffle, though not necessarily its portable code path.
 */
#ifndef B2ND_CLIENT_SHIM_SHUFFLE_GENERIC_H
#define B2ND_CLIENT_SHIM_SHUFFLE_GENERIC_H

#include <stdint.h>

#include "blosc2.h"

static inline void shuffle_generic(const int32_t bytesoftype, const int32_t blocksize,
                                   const uint8_t *src, uint8_t *dest) {
  (void) blosc2_shuffle(bytesoftype, blocksize, src, dest);
}

static inline void unshuffle_generic(const int32_t bytesoftype, const int32_t blocksize,
                                     const uint8_t *src, uint8_t *dest) {
  (void) blosc2_unshuffle(bytesoftype, blocksize, src, dest);
}

#endif
