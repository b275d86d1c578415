/*
 * The public types and constants of the C API, listed once. Both layout programs include
 * this file: test_layout.c builds it against our include/b2nd.h, layout/ref_layout.c
 * against the reference C-Blosc2 3.3.5 headers, and CTest requires identical output.
 *
 * Lists are X-macros; the including file defines the item macros before expanding them.
 */
#ifndef B2ND_LAYOUT_FIELDS_H
#define B2ND_LAYOUT_FIELDS_H

#include <stddef.h>

/* Function-pointer fields the reference declares without a typedef. */
typedef int (*layout_tuner_init_fn)(void *, blosc2_context *, blosc2_context *);
typedef int (*layout_tuner_ctx_fn)(blosc2_context *);
typedef int (*layout_tuner_update_fn)(blosc2_context *, double);

/*
 * Every struct and every field, in declaration order.
 *   ST(type)                     a struct type
 *   F(type, field, ctype)        a field of C type `ctype`
 *   A(type, field, ctype, n)     a field of type `ctype[n]`
 */
#define LAYOUT_STRUCTS(ST, F, A) \
  ST(blosc2_instr) \
  F(blosc2_instr, cratio, float) \
  F(blosc2_instr, cspeed, float) \
  F(blosc2_instr, filter_speed, float) \
  A(blosc2_instr, flags, uint8_t, 4) \
  ST(blosc2_io_cb) \
  F(blosc2_io_cb, id, uint8_t) \
  F(blosc2_io_cb, name, char *) \
  F(blosc2_io_cb, is_allocation_necessary, bool) \
  F(blosc2_io_cb, open, blosc2_open_cb) \
  F(blosc2_io_cb, close, blosc2_close_cb) \
  F(blosc2_io_cb, size, blosc2_size_cb) \
  F(blosc2_io_cb, write, blosc2_write_cb) \
  F(blosc2_io_cb, read, blosc2_read_cb) \
  F(blosc2_io_cb, truncate, blosc2_truncate_cb) \
  F(blosc2_io_cb, destroy, blosc2_destroy_cb) \
  ST(blosc2_io) \
  F(blosc2_io, id, uint8_t) \
  F(blosc2_io, name, const char *) \
  F(blosc2_io, params, void *) \
  ST(blosc2_stdio_file) \
  F(blosc2_stdio_file, file, FILE *) \
  ST(blosc2_stdio_params) \
  F(blosc2_stdio_params, locking, bool) \
  ST(blosc2_stdio_mmap) \
  F(blosc2_stdio_mmap, mode, const char *) \
  F(blosc2_stdio_mmap, initial_mapping_size, size_t) \
  F(blosc2_stdio_mmap, needs_free, bool) \
  F(blosc2_stdio_mmap, addr, char *) \
  F(blosc2_stdio_mmap, urlpath, char *) \
  F(blosc2_stdio_mmap, file_size, size_t) \
  F(blosc2_stdio_mmap, mapping_size, size_t) \
  F(blosc2_stdio_mmap, is_memory_only, bool) \
  F(blosc2_stdio_mmap, file, FILE *) \
  F(blosc2_stdio_mmap, fd, int) \
  F(blosc2_stdio_mmap, access_flags, int64_t) \
  F(blosc2_stdio_mmap, map_flags, int64_t) \
  ST(blosc2_tuner) \
  F(blosc2_tuner, init, layout_tuner_init_fn) \
  F(blosc2_tuner, next_blocksize, layout_tuner_ctx_fn) \
  F(blosc2_tuner, next_cparams, layout_tuner_ctx_fn) \
  F(blosc2_tuner, update, layout_tuner_update_fn) \
  F(blosc2_tuner, free, layout_tuner_ctx_fn) \
  F(blosc2_tuner, id, int) \
  F(blosc2_tuner, name, char *) \
  ST(blosc2_prefilter_params) \
  F(blosc2_prefilter_params, user_data, void *) \
  F(blosc2_prefilter_params, input, const uint8_t *) \
  F(blosc2_prefilter_params, output, uint8_t *) \
  F(blosc2_prefilter_params, output_size, int32_t) \
  F(blosc2_prefilter_params, output_typesize, int32_t) \
  F(blosc2_prefilter_params, output_offset, int32_t) \
  F(blosc2_prefilter_params, nchunk, int64_t) \
  F(blosc2_prefilter_params, nblock, int32_t) \
  F(blosc2_prefilter_params, tid, int32_t) \
  F(blosc2_prefilter_params, ttmp, uint8_t *) \
  F(blosc2_prefilter_params, ttmp_nbytes, size_t) \
  F(blosc2_prefilter_params, ctx, blosc2_context *) \
  F(blosc2_prefilter_params, output_is_disposable, bool) \
  ST(blosc2_postfilter_params) \
  F(blosc2_postfilter_params, user_data, void *) \
  F(blosc2_postfilter_params, input, const uint8_t *) \
  F(blosc2_postfilter_params, output, uint8_t *) \
  F(blosc2_postfilter_params, size, int32_t) \
  F(blosc2_postfilter_params, typesize, int32_t) \
  F(blosc2_postfilter_params, offset, int32_t) \
  F(blosc2_postfilter_params, nchunk, int64_t) \
  F(blosc2_postfilter_params, nblock, int32_t) \
  F(blosc2_postfilter_params, tid, int32_t) \
  F(blosc2_postfilter_params, ttmp, uint8_t *) \
  F(blosc2_postfilter_params, ttmp_nbytes, size_t) \
  F(blosc2_postfilter_params, ctx, blosc2_context *) \
  ST(blosc2_cparams) \
  F(blosc2_cparams, compcode, uint8_t) \
  F(blosc2_cparams, compcode_meta, uint8_t) \
  F(blosc2_cparams, clevel, uint8_t) \
  F(blosc2_cparams, use_dict, int) \
  F(blosc2_cparams, typesize, int32_t) \
  F(blosc2_cparams, nthreads, int16_t) \
  F(blosc2_cparams, blocksize, int32_t) \
  F(blosc2_cparams, splitmode, int32_t) \
  F(blosc2_cparams, schunk, void *) \
  A(blosc2_cparams, filters, uint8_t, BLOSC2_MAX_FILTERS) \
  A(blosc2_cparams, filters_meta, uint8_t, BLOSC2_MAX_FILTERS) \
  F(blosc2_cparams, prefilter, blosc2_prefilter_fn) \
  F(blosc2_cparams, preparams, blosc2_prefilter_params *) \
  F(blosc2_cparams, tuner_params, void *) \
  F(blosc2_cparams, tuner_id, int) \
  F(blosc2_cparams, instr_codec, bool) \
  F(blosc2_cparams, codec_params, void *) \
  A(blosc2_cparams, filter_params, void *, BLOSC2_MAX_FILTERS) \
  ST(blosc2_dparams) \
  F(blosc2_dparams, nthreads, int16_t) \
  F(blosc2_dparams, schunk, void *) \
  F(blosc2_dparams, postfilter, blosc2_postfilter_fn) \
  F(blosc2_dparams, postparams, blosc2_postfilter_params *) \
  F(blosc2_dparams, typesize, int32_t) \
  ST(blosc2_codec) \
  F(blosc2_codec, compcode, uint8_t) \
  F(blosc2_codec, compname, char *) \
  F(blosc2_codec, complib, uint8_t) \
  F(blosc2_codec, version, uint8_t) \
  F(blosc2_codec, encoder, blosc2_codec_encoder_cb) \
  F(blosc2_codec, decoder, blosc2_codec_decoder_cb) \
  ST(blosc2_filter) \
  F(blosc2_filter, id, uint8_t) \
  F(blosc2_filter, name, char *) \
  F(blosc2_filter, version, uint8_t) \
  F(blosc2_filter, forward, blosc2_filter_forward_cb) \
  F(blosc2_filter, backward, blosc2_filter_backward_cb) \
  ST(blosc2_storage) \
  F(blosc2_storage, contiguous, bool) \
  F(blosc2_storage, urlpath, char *) \
  F(blosc2_storage, cparams, blosc2_cparams *) \
  F(blosc2_storage, dparams, blosc2_dparams *) \
  F(blosc2_storage, io, blosc2_io *) \
  ST(blosc2_metalayer) \
  F(blosc2_metalayer, name, char *) \
  F(blosc2_metalayer, content, uint8_t *) \
  F(blosc2_metalayer, content_len, int32_t) \
  ST(blosc2_schunk) \
  F(blosc2_schunk, version, uint8_t) \
  F(blosc2_schunk, compcode, uint8_t) \
  F(blosc2_schunk, compcode_meta, uint8_t) \
  F(blosc2_schunk, clevel, uint8_t) \
  F(blosc2_schunk, splitmode, uint8_t) \
  F(blosc2_schunk, typesize, int32_t) \
  F(blosc2_schunk, blocksize, int32_t) \
  F(blosc2_schunk, chunksize, int32_t) \
  F(blosc2_schunk, flags2, uint8_t) \
  F(blosc2_schunk, use_dict, uint8_t) \
  A(blosc2_schunk, filters, uint8_t, BLOSC2_MAX_FILTERS) \
  A(blosc2_schunk, filters_meta, uint8_t, BLOSC2_MAX_FILTERS) \
  F(blosc2_schunk, nchunks, int64_t) \
  F(blosc2_schunk, current_nchunk, int64_t) \
  F(blosc2_schunk, nbytes, int64_t) \
  F(blosc2_schunk, cbytes, int64_t) \
  F(blosc2_schunk, data, uint8_t **) \
  F(blosc2_schunk, data_len, size_t) \
  F(blosc2_schunk, storage, blosc2_storage *) \
  F(blosc2_schunk, frame, blosc2_frame *) \
  F(blosc2_schunk, cctx, blosc2_context *) \
  F(blosc2_schunk, dctx, blosc2_context *) \
  A(blosc2_schunk, metalayers, struct blosc2_metalayer *, BLOSC2_MAX_METALAYERS) \
  F(blosc2_schunk, nmetalayers, uint16_t) \
  A(blosc2_schunk, vlmetalayers, struct blosc2_metalayer *, BLOSC2_MAX_VLMETALAYERS) \
  F(blosc2_schunk, nvlmetalayers, int16_t) \
  F(blosc2_schunk, tuner_params, void *) \
  F(blosc2_schunk, tuner_id, int) \
  F(blosc2_schunk, ndim, int8_t) \
  F(blosc2_schunk, blockshape, int64_t *) \
  F(blosc2_schunk, view, bool) \
  F(blosc2_schunk, change_tick, int64_t) \
  ST(struct chunk_cache_s) \
  F(struct chunk_cache_s, data, uint8_t *) \
  F(struct chunk_cache_s, nchunk, int64_t) \
  ST(b2nd_array_t) \
  F(b2nd_array_t, sc, blosc2_schunk *) \
  A(b2nd_array_t, shape, int64_t, B2ND_MAX_DIM) \
  A(b2nd_array_t, chunkshape, int32_t, B2ND_MAX_DIM) \
  A(b2nd_array_t, extshape, int64_t, B2ND_MAX_DIM) \
  A(b2nd_array_t, blockshape, int32_t, B2ND_MAX_DIM) \
  A(b2nd_array_t, extchunkshape, int64_t, B2ND_MAX_DIM) \
  F(b2nd_array_t, nitems, int64_t) \
  F(b2nd_array_t, chunknitems, int32_t) \
  F(b2nd_array_t, extnitems, int64_t) \
  F(b2nd_array_t, blocknitems, int32_t) \
  F(b2nd_array_t, extchunknitems, int64_t) \
  F(b2nd_array_t, ndim, int8_t) \
  F(b2nd_array_t, chunk_cache, struct chunk_cache_s) \
  A(b2nd_array_t, item_array_strides, int64_t, B2ND_MAX_DIM) \
  A(b2nd_array_t, item_chunk_strides, int64_t, B2ND_MAX_DIM) \
  A(b2nd_array_t, item_extchunk_strides, int64_t, B2ND_MAX_DIM) \
  A(b2nd_array_t, item_block_strides, int64_t, B2ND_MAX_DIM) \
  A(b2nd_array_t, block_chunk_strides, int64_t, B2ND_MAX_DIM) \
  A(b2nd_array_t, chunk_array_strides, int64_t, B2ND_MAX_DIM) \
  F(b2nd_array_t, dtype, char *) \
  F(b2nd_array_t, dtype_format, int8_t) \
  F(b2nd_array_t, last_tick, int64_t)

/*
 * Opaque handles: callers only hold pointers to them.
 *   O(name, struct_tag)          `name` is `struct struct_tag`, left incomplete
 */
#define LAYOUT_OPAQUE(O) \
  O(blosc2_context, blosc2_context_s) \
  O(blosc2_frame, blosc2_frame_s) \
  O(b2nd_context_t, b2nd_context_s)

/*
 * Other typedefs, with the C type each must be compatible with.
 *   T(name, ctype)
 */
#define LAYOUT_TYPEDEFS(T) \
  T(blosc_timestamp_t, struct timespec) \
  T(blosc_threads_callback, void (*)(void *, void (*)(void *), int, size_t, void *)) \
  T(blosc2_open_cb, void *(*)(const char *, const char *, void *)) \
  T(blosc2_close_cb, int (*)(void *)) \
  T(blosc2_size_cb, int64_t (*)(void *)) \
  T(blosc2_write_cb, int64_t (*)(const void *, int64_t, int64_t, int64_t, void *)) \
  T(blosc2_read_cb, int64_t (*)(void **, int64_t, int64_t, int64_t, void *)) \
  T(blosc2_truncate_cb, int (*)(void *, int64_t)) \
  T(blosc2_destroy_cb, int (*)(void *)) \
  T(blosc2_prefilter_fn, int (*)(blosc2_prefilter_params *)) \
  T(blosc2_postfilter_fn, int (*)(blosc2_postfilter_params *)) \
  T(blosc2_codec_encoder_cb, \
    int (*)(const uint8_t *, int32_t, uint8_t *, int32_t, uint8_t, blosc2_cparams *, const void *)) \
  T(blosc2_codec_decoder_cb, \
    int (*)(const uint8_t *, int32_t, uint8_t *, int32_t, uint8_t, blosc2_dparams *, const void *)) \
  T(blosc2_filter_forward_cb, int (*)(const uint8_t *, uint8_t *, int32_t, uint8_t, blosc2_cparams *, uint8_t)) \
  T(blosc2_filter_backward_cb, int (*)(const uint8_t *, uint8_t *, int32_t, uint8_t, blosc2_dparams *, uint8_t))

/* The API checklist's macros and enum constants with integer values.  M(name) */
#define LAYOUT_INT_CONSTANTS(M) \
  M(B2ND_DEFAULT_DTYPE_FORMAT) M(B2ND_MAX_DIM) M(B2ND_MAX_METALAYERS) \
  M(B2ND_METALAYER_VERSION) M(BLOSC2_BIGENDIAN) M(BLOSC2_CHUNK_BLOCKSIZE) \
  M(BLOSC2_CHUNK_BLOSC2_FLAGS) M(BLOSC2_CHUNK_BLOSC2_FLAGS2) M(BLOSC2_CHUNK_CBYTES) \
  M(BLOSC2_CHUNK_FILTER_CODES) M(BLOSC2_CHUNK_FILTER_META) M(BLOSC2_CHUNK_FLAGS) \
  M(BLOSC2_CHUNK_NBYTES) M(BLOSC2_CHUNK_TYPESIZE) M(BLOSC2_CHUNK_VERSION) \
  M(BLOSC2_CHUNK_VERSIONLZ) M(BLOSC2_DEFINED_CODECS_START) M(BLOSC2_DEFINED_CODECS_STOP) \
  M(BLOSC2_DEFINED_FILTERS_START) M(BLOSC2_DEFINED_FILTERS_STOP) M(BLOSC2_DEFINED_TUNER_START) \
  M(BLOSC2_DEFINED_TUNER_STOP) M(BLOSC2_ERROR_2GB_LIMIT) M(BLOSC2_ERROR_CHUNK_APPEND) \
  M(BLOSC2_ERROR_CHUNK_INSERT) M(BLOSC2_ERROR_CHUNK_UPDATE) M(BLOSC2_ERROR_CODEC_DICT) \
  M(BLOSC2_ERROR_CODEC_PARAM) M(BLOSC2_ERROR_CODEC_SUPPORT) M(BLOSC2_ERROR_DATA) \
  M(BLOSC2_ERROR_FAILURE) M(BLOSC2_ERROR_FILE_OPEN) M(BLOSC2_ERROR_FILE_READ) \
  M(BLOSC2_ERROR_FILE_REMOVE) M(BLOSC2_ERROR_FILE_TRUNCATE) M(BLOSC2_ERROR_FILE_WRITE) \
  M(BLOSC2_ERROR_FILTER_PIPELINE) M(BLOSC2_ERROR_FRAME_SPECIAL) M(BLOSC2_ERROR_FRAME_TYPE) \
  M(BLOSC2_ERROR_INVALID_HEADER) M(BLOSC2_ERROR_INVALID_INDEX) M(BLOSC2_ERROR_INVALID_PARAM) \
  M(BLOSC2_ERROR_LOCK) M(BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED) M(BLOSC2_ERROR_MEMORY_ALLOC) \
  M(BLOSC2_ERROR_METALAYER_NOT_FOUND) M(BLOSC2_ERROR_NOT_FOUND) M(BLOSC2_ERROR_NULL_POINTER) \
  M(BLOSC2_ERROR_PLUGIN_IO) M(BLOSC2_ERROR_POSTFILTER) M(BLOSC2_ERROR_READ_BUFFER) \
  M(BLOSC2_ERROR_RUN_LENGTH) M(BLOSC2_ERROR_SCHUNK_COPY) M(BLOSC2_ERROR_SCHUNK_SPECIAL) \
  M(BLOSC2_ERROR_STREAM) M(BLOSC2_ERROR_SUCCESS) M(BLOSC2_ERROR_THREAD_CREATE) \
  M(BLOSC2_ERROR_TUNER) M(BLOSC2_ERROR_VERSION_SUPPORT) M(BLOSC2_ERROR_WRITE_BUFFER) \
  M(BLOSC2_GLOBAL_REGISTERED_CODECS) M(BLOSC2_GLOBAL_REGISTERED_CODECS_START) M(BLOSC2_GLOBAL_REGISTERED_CODECS_STOP) \
  M(BLOSC2_GLOBAL_REGISTERED_FILTERS) M(BLOSC2_GLOBAL_REGISTERED_FILTERS_START) M(BLOSC2_GLOBAL_REGISTERED_FILTERS_STOP) \
  M(BLOSC2_GLOBAL_REGISTERED_TUNERS) M(BLOSC2_GLOBAL_REGISTERED_TUNER_START) M(BLOSC2_GLOBAL_REGISTERED_TUNER_STOP) \
  M(BLOSC2_INSTR_CODEC) M(BLOSC2_IO_BLOSC_DEFINED) M(BLOSC2_IO_FILESYSTEM) \
  M(BLOSC2_IO_FILESYSTEM_MMAP) M(BLOSC2_IO_REGISTERED) M(BLOSC2_IO_USER_DEFINED) \
  M(BLOSC2_MAXBLOCKSIZE) M(BLOSC2_MAXDICTSIZE) M(BLOSC2_MAXTYPESIZE) \
  M(BLOSC2_MAX_BUFFERSIZE) M(BLOSC2_MAX_FILTERS) M(BLOSC2_MAX_METALAYERS) \
  M(BLOSC2_MAX_OVERHEAD) M(BLOSC2_MAX_UDFILTERS) M(BLOSC2_MAX_VLMETALAYERS) \
  M(BLOSC2_METALAYER_NAME_MAXLEN) M(BLOSC2_MINUSEFULDICT) M(BLOSC2_NO_SPECIAL) \
  M(BLOSC2_SPECIAL_LASTID) M(BLOSC2_SPECIAL_MASK) M(BLOSC2_SPECIAL_NAN) \
  M(BLOSC2_SPECIAL_UNINIT) M(BLOSC2_SPECIAL_VALUE) M(BLOSC2_SPECIAL_ZERO) \
  M(BLOSC2_USEDICT) M(BLOSC2_USER_REGISTERED_CODECS_START) M(BLOSC2_USER_REGISTERED_CODECS_STOP) \
  M(BLOSC2_USER_REGISTERED_FILTERS_START) M(BLOSC2_USER_REGISTERED_FILTERS_STOP) M(BLOSC2_USER_REGISTERED_TUNER_START) \
  M(BLOSC2_USER_REGISTERED_TUNER_STOP) M(BLOSC2_VERSION_FORMAT) M(BLOSC2_VERSION_FORMAT_ALPHA) \
  M(BLOSC2_VERSION_FORMAT_BETA1) M(BLOSC2_VERSION_FORMAT_STABLE) M(BLOSC2_VERSION_FORMAT_VL_BLOCKS) \
  M(BLOSC2_VERSION_FRAME_FORMAT) M(BLOSC2_VERSION_FRAME_FORMAT_BETA2) M(BLOSC2_VERSION_FRAME_FORMAT_RC1) \
  M(BLOSC2_VERSION_FRAME_FORMAT_VL_BLOCKS) M(BLOSC2_VERSION_MAJOR) M(BLOSC2_VERSION_MINOR) \
  M(BLOSC2_VERSION_RELEASE) M(BLOSC2_VLMETALAYERS_NAME_MAXLEN) M(BLOSC2_VL_BLOCKS) \
  M(BLOSC_ALWAYS_SPLIT) M(BLOSC_AUTO_SPLIT) M(BLOSC_BITSHUFFLE) \
  M(BLOSC_BLOSCLZ) M(BLOSC_BLOSCLZ_FORMAT) M(BLOSC_BLOSCLZ_LIB) \
  M(BLOSC_BLOSCLZ_VERSION_FORMAT) M(BLOSC_DELTA) M(BLOSC_DOBITSHUFFLE) \
  M(BLOSC_DODELTA) M(BLOSC_DOSHUFFLE) M(BLOSC_EXTENDED_HEADER_LENGTH) \
  M(BLOSC_FORWARD_COMPAT_SPLIT) M(BLOSC_IO_LAST_BLOSC_DEFINED) M(BLOSC_IO_LAST_REGISTERED) \
  M(BLOSC_LAST_CODEC) M(BLOSC_LAST_FILTER) M(BLOSC_LAST_REGISTERED_CODEC) \
  M(BLOSC_LAST_REGISTERED_FILTER) M(BLOSC_LAST_REGISTERED_TUNE) M(BLOSC_LAST_TUNER) \
  M(BLOSC_LZ4) M(BLOSC_LZ4HC) M(BLOSC_LZ4HC_FORMAT) \
  M(BLOSC_LZ4HC_VERSION_FORMAT) M(BLOSC_LZ4_FORMAT) M(BLOSC_LZ4_LIB) \
  M(BLOSC_LZ4_VERSION_FORMAT) M(BLOSC_MAX_BUFFERSIZE) M(BLOSC_MAX_OVERHEAD) \
  M(BLOSC_MAX_TYPESIZE) M(BLOSC_MEMCPYED) M(BLOSC_MIN_BUFFERSIZE) \
  M(BLOSC_MIN_HEADER_LENGTH) M(BLOSC_NEVER_SPLIT) M(BLOSC_NOFILTER) \
  M(BLOSC_NOSHUFFLE) M(BLOSC_SCHUNK_LIB) M(BLOSC_SHUFFLE) \
  M(BLOSC_STUNE) M(BLOSC_TRUNC_PREC) M(BLOSC_UDCODEC_FORMAT) \
  M(BLOSC_UDCODEC_LIB) M(BLOSC_UDCODEC_VERSION_FORMAT) M(BLOSC_VERSION_MAJOR) \
  M(BLOSC_VERSION_MINOR) M(BLOSC_VERSION_RELEASE) M(BLOSC_ZLIB) \
  M(BLOSC_ZLIB_FORMAT) M(BLOSC_ZLIB_LIB) M(BLOSC_ZLIB_VERSION_FORMAT) \
  M(BLOSC_ZSTD) M(BLOSC_ZSTD_FORMAT) M(BLOSC_ZSTD_LIB) \
  M(BLOSC_ZSTD_VERSION_FORMAT) M(DTYPE_NUMPY_FORMAT) \

/* The string macros.  S(name) */
#define LAYOUT_STRING_MACROS(S) \
  S(B2ND_DEFAULT_DTYPE) \
  S(BLOSC2_VERSION_DATE) \
  S(BLOSC2_VERSION_STRING) \
  S(BLOSC_BLOSCLZ_COMPNAME) \
  S(BLOSC_BLOSCLZ_LIBNAME) \
  S(BLOSC_LZ4HC_COMPNAME) \
  S(BLOSC_LZ4_COMPNAME) \
  S(BLOSC_LZ4_LIBNAME) \
  S(BLOSC_VERSION_DATE) \
  S(BLOSC_VERSION_STRING) \
  S(BLOSC_ZLIB_COMPNAME) \
  S(BLOSC_ZLIB_LIBNAME) \
  S(BLOSC_ZSTD_COMPNAME) \
  S(BLOSC_ZSTD_LIBNAME) \

#endif /* B2ND_LAYOUT_FIELDS_H */
