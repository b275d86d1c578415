/*
 * Test-only stand-in for C-Blosc2's private blosc/context.h.
 *
 * Some upstream tests look inside two opaque library structs:
 *   - the b2nd tests read ctx->ndim and ctx->shape of a b2nd_context_t;
 *   - a few threading/dictionary tests read or poke blosc2_context fields
 *     (new_nthreads, use_dict, filters_meta, thread_pool).
 * Declared here are the *leading* fields of the reference's structs, in the
 * order of C-Blosc2 3.3.x's blosc/context.h.  A struct may be declared shorter
 * than the real one because the tests only ever dereference pointers the
 * library returns; they never allocate, copy or take sizeof of these.
 * A library whose private layout differs will make these tests read garbage;
 * that is why the tests that use blosc2_context fields are labelled exempt.
 */
#ifndef B2ND_CLIENT_SHIM_CONTEXT_H
#define B2ND_CLIENT_SHIM_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blosc2.h"
#include "b2nd.h"
#include "threading.h"

struct thread_context;      /* opaque: the tests only compare pointers */
struct blosc_shared_pool;   /* opaque: the tests only compare pointers */

struct b2nd_context_s {
  int8_t ndim;
  int64_t shape[B2ND_MAX_DIM];
  int32_t chunkshape[B2ND_MAX_DIM];
  int32_t blockshape[B2ND_MAX_DIM];
  char *dtype;
  int8_t dtype_format;
  blosc2_storage *b2_storage;
  /* ...the reference goes on with its metalayer list. */
};

/* Only for the tests that read these fields (the harness defines
 * CLIENT_SHIM_BLOSC2_CONTEXT for them); to the others it stays opaque. */
#ifdef CLIENT_SHIM_BLOSC2_CONTEXT
struct blosc2_context_s {
  /* buffers and chunk geometry of the operation in progress */
  const uint8_t *src;
  uint8_t *dest;
  uint8_t header_flags;
  uint8_t blosc2_flags;
  uint8_t blosc2_flags2;
  int32_t sourcesize;
  int32_t header_overhead;
  int32_t nblocks;
  int32_t leftover;
  int32_t blocksize;
  int32_t header_blocksize;
  int32_t splitmode;
  int32_t output_bytes;
  int32_t srcsize;
  int32_t destsize;
  int32_t typesize;
  int32_t *bstarts;
  int32_t *blocknbytes;
  int32_t *blockoffsets;
  int32_t *blockcbytes;
  const uint8_t **vlblock_sources;
  uint8_t **vlblock_dests;
  int32_t special_type;
  /* codec */
  int compcode;
  uint8_t compcode_meta;
  int clevel;
  int use_dict;
  void *dict_buffer;
  int32_t dict_size;
  void *dict_cdict;
  void *dict_ddict;
  /* filter pipeline */
  uint8_t filter_flags;
  uint8_t filters[BLOSC2_MAX_FILTERS];
  uint8_t filters_meta[BLOSC2_MAX_FILTERS];
  blosc2_filter urfilters[BLOSC2_MAX_UDFILTERS];
  blosc2_prefilter_fn prefilter;
  blosc2_postfilter_fn postfilter;
  blosc2_prefilter_params *preparams;
  blosc2_postfilter_params *postparams;
  bool *block_maskout;
  int block_maskout_nitems;
  blosc2_schunk *schunk;
  struct thread_context *serial_context;
  int do_compress;
  void *tuner_params;
  int tuner_id;
  void *codec_params;
  void *filter_params[BLOSC2_MAX_FILTERS];
  /* threading */
  int16_t nthreads;
  int16_t new_nthreads;
  int16_t thread_backend;
  int16_t threads_started;
  struct thread_context *thread_contexts;
  struct blosc_shared_pool *thread_pool;
  /* ...the reference goes on with pool bookkeeping and its mutexes. */
};
#endif

#endif
