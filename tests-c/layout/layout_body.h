/*
 * The part of the layout programs that must compile unchanged against both our
 * include/b2nd.h and the reference headers. The including file includes <b2nd.h> first.
 *
 * layout_report() prints one line per fact (struct sizes and alignments, field offsets
 * and sizes, type checks, default initialiser values and the values the
 * blosc2_get_blosc2_*_defaults() functions return, constant values); the CTest case
 * `layout_matches_reference` requires the two programs' reports to be identical.
 * It returns the number of type checks that failed.
 */
#ifndef B2ND_LAYOUT_BODY_H
#define B2ND_LAYOUT_BODY_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fields.h"

#if !defined(BLOSC_BLOSC2_H) || !defined(BLOSC_B2ND_H)
#error "b2nd.h must define both include guards of the reference API"
#endif

/* ---- Struct layouts ------------------------------------------------------------ */

#define LAYOUT_PRINT_ST(S) \
  fprintf(out, "struct %s size %zu align %zu\n", #S, sizeof(S), (size_t)_Alignof(S));
#define LAYOUT_PRINT_F(S, f, T) \
  fprintf(out, "field %s.%s offset %zu size %zu\n", #S, #f, offsetof(S, f), sizeof(((S *)0)->f));
#define LAYOUT_PRINT_A(S, f, T, n) LAYOUT_PRINT_F(S, f, T)

/* A field's type is checked through a pointer to it, so arrays keep their length. */
#define LAYOUT_TYPE_ST(S)
#define LAYOUT_TYPE_F(S, f, T) \
  layout_type_line(out, #S, #f, _Generic(&((S *)0)->f, T *: 1, default: 0), &bad);
#define LAYOUT_TYPE_A(S, f, T, n) \
  layout_type_line(out, #S, #f, _Generic(&((S *)0)->f, T(*)[n]: 1, default: 0), &bad);
#define LAYOUT_TYPE_O(name, tag) \
  layout_type_line(out, "typedef", #name, _Generic((name *)0, struct tag *: 1, default: 0), &bad);
#define LAYOUT_TYPE_T(name, T) \
  layout_type_line(out, "typedef", #name, _Generic(*(name *)0, T: 1, default: 0), &bad);

static void layout_type_line(FILE *out, const char *owner, const char *what, int ok, int *bad) {
  fprintf(out, "type %s.%s %s\n", owner, what, ok ? "ok" : "MISMATCH");
  if (!ok) {
    (*bad)++;
  }
}

/* ---- Default initialiser values ------------------------------------------------ */

#define LAYOUT_INT(p, f) fprintf(out, "%s.%s %lld\n", label, #f, (long long)(p)->f)
#define LAYOUT_PTR(p, f) fprintf(out, "%s.%s %s\n", label, #f, (p)->f != NULL ? "set" : "NULL")
#define LAYOUT_STR(p, f) fprintf(out, "%s.%s \"%s\"\n", label, #f, (p)->f != NULL ? (p)->f : "(NULL)")
#define LAYOUT_INTS(p, f)                                                             \
  do {                                                                                \
    for (size_t i_ = 0; i_ < sizeof((p)->f) / sizeof((p)->f[0]); i_++) {              \
      fprintf(out, "%s.%s[%zu] %lld\n", label, #f, i_, (long long)(p)->f[i_]);        \
    }                                                                                 \
  } while (0)
#define LAYOUT_PTRS(p, f)                                                             \
  do {                                                                                \
    for (size_t i_ = 0; i_ < sizeof((p)->f) / sizeof((p)->f[0]); i_++) {              \
      fprintf(out, "%s.%s[%zu] %s\n", label, #f, i_, (p)->f[i_] != NULL ? "set" : "NULL"); \
    }                                                                                 \
  } while (0)

static void layout_print_cparams(FILE *out, const char *label, const blosc2_cparams *p) {
  LAYOUT_INT(p, compcode);
  LAYOUT_INT(p, compcode_meta);
  LAYOUT_INT(p, clevel);
  LAYOUT_INT(p, use_dict);
  LAYOUT_INT(p, typesize);
  LAYOUT_INT(p, nthreads);
  LAYOUT_INT(p, blocksize);
  LAYOUT_INT(p, splitmode);
  LAYOUT_PTR(p, schunk);
  LAYOUT_INTS(p, filters);
  LAYOUT_INTS(p, filters_meta);
  LAYOUT_PTR(p, prefilter);
  LAYOUT_PTR(p, preparams);
  LAYOUT_PTR(p, tuner_params);
  LAYOUT_INT(p, tuner_id);
  LAYOUT_INT(p, instr_codec);
  LAYOUT_PTR(p, codec_params);
  LAYOUT_PTRS(p, filter_params);
}

static void layout_print_dparams(FILE *out, const char *label, const blosc2_dparams *p) {
  LAYOUT_INT(p, nthreads);
  LAYOUT_PTR(p, schunk);
  LAYOUT_PTR(p, postfilter);
  LAYOUT_PTR(p, postparams);
  LAYOUT_INT(p, typesize);
}

static void layout_print_storage(FILE *out, const char *label, const blosc2_storage *p) {
  LAYOUT_INT(p, contiguous);
  LAYOUT_PTR(p, urlpath);
  LAYOUT_PTR(p, cparams);
  LAYOUT_PTR(p, dparams);
  LAYOUT_PTR(p, io);
}

static void layout_print_io(FILE *out, const char *label, const blosc2_io *p) {
  LAYOUT_INT(p, id);
  LAYOUT_STR(p, name);
  LAYOUT_PTR(p, params);
}

static void layout_print_stdio_params(FILE *out, const char *label, const blosc2_stdio_params *p) {
  LAYOUT_INT(p, locking);
}

static void layout_print_stdio_mmap(FILE *out, const char *label, const blosc2_stdio_mmap *p) {
  LAYOUT_STR(p, mode);
  LAYOUT_INT(p, initial_mapping_size);
  LAYOUT_INT(p, needs_free);
  LAYOUT_PTR(p, addr);
  LAYOUT_PTR(p, urlpath);
  LAYOUT_INT(p, file_size);
  LAYOUT_INT(p, mapping_size);
  LAYOUT_INT(p, is_memory_only);
  LAYOUT_PTR(p, file);
  LAYOUT_INT(p, fd);
  LAYOUT_INT(p, access_flags);
  LAYOUT_INT(p, map_flags);
}

/* ---- Caller code written against the reference API ----------------------------- */

/* Uses the initialisers and macros the way reference callers do; must compile
 * unchanged with both headers. Returns a summary the report prints. */
static long long layout_typical_caller(void) {
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = sizeof(int32_t);
  cparams.compcode = BLOSC_ZSTD;
  cparams.filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_BITSHUFFLE;
  blosc2_dparams dparams = BLOSC2_DPARAMS_DEFAULTS;
  dparams.nthreads = 2;
  blosc2_io io = BLOSC2_IO_DEFAULTS;
  blosc2_stdio_mmap mmap_params = BLOSC2_STDIO_MMAP_DEFAULTS;
  mmap_params.mode = "w+";
  io.id = BLOSC2_IO_FILESYSTEM_MMAP;
  io.params = &mmap_params;
  blosc2_storage storage = {.contiguous = true, .urlpath = NULL, .cparams = &cparams,
                            .dparams = &dparams, .io = &io};
  blosc2_storage other = BLOSC2_STORAGE_DEFAULTS;
  other.cparams = storage.cparams;

  /* Both spellings of the super-chunk and metalayer types name the same struct. */
  struct blosc2_schunk *sc = NULL;
  blosc2_schunk *sc2 = sc;
  struct blosc2_metalayer meta = {NULL, NULL, 0};
  blosc2_metalayer *pmeta = &meta;
  b2nd_array_t array;
  memset(&array, 0, sizeof(array));
  array.sc = sc2;
  array.chunk_cache.nchunk = -1;
  struct chunk_cache_s cache = array.chunk_cache;
  b2nd_context_t *ctx = NULL;
  blosc2_context *cctx = NULL;
  blosc2_frame *frame = NULL;

  return (long long)storage.cparams->typesize * 1000 + storage.dparams->nthreads * 100 +
         storage.io->id * 10 + (other.cparams == &cparams) + pmeta->content_len + cache.nchunk + 1 +
         (ctx != NULL) + (cctx != NULL) + (frame != NULL) +
         (strcmp(((blosc2_stdio_mmap *)storage.io->params)->mode, "w+") == 0) * 10000;
}

/* The function-like macros of the reference, used the way its callers use them.
 * (The deprecated function is declared only: using it would warn.) */
B2ND_DEPRECATED("only checks that the macro expands in a declaration")
int layout_deprecated_function(void);

static int layout_use_error_macros(const void *pointer, int rc) {
  BLOSC_ERROR_NULL(pointer, BLOSC2_ERROR_NULL_POINTER);
  BLOSC_ERROR(rc);
  BLOSC_TRACE_WARNING("rc %d", rc);
  BLOSC_TRACE_INFO("rc %d", rc);
  BLOSC_INFO("rc %d", rc);
  return rc;
}

/* ---- The report ----------------------------------------------------------------- */

static int layout_report(FILE *out) {
  int bad = 0;
  LAYOUT_STRUCTS(LAYOUT_PRINT_ST, LAYOUT_PRINT_F, LAYOUT_PRINT_A)
  LAYOUT_STRUCTS(LAYOUT_TYPE_ST, LAYOUT_TYPE_F, LAYOUT_TYPE_A)
  LAYOUT_OPAQUE(LAYOUT_TYPE_O)
  LAYOUT_TYPEDEFS(LAYOUT_TYPE_T)

  layout_print_cparams(out, "BLOSC2_CPARAMS_DEFAULTS", &BLOSC2_CPARAMS_DEFAULTS);
  layout_print_dparams(out, "BLOSC2_DPARAMS_DEFAULTS", &BLOSC2_DPARAMS_DEFAULTS);
  layout_print_storage(out, "BLOSC2_STORAGE_DEFAULTS", &BLOSC2_STORAGE_DEFAULTS);
  layout_print_io(out, "BLOSC2_IO_DEFAULTS", &BLOSC2_IO_DEFAULTS);
  layout_print_stdio_params(out, "BLOSC2_STDIO_PARAMS_DEFAULTS", &BLOSC2_STDIO_PARAMS_DEFAULTS);
  layout_print_stdio_mmap(out, "BLOSC2_STDIO_MMAP_DEFAULTS", &BLOSC2_STDIO_MMAP_DEFAULTS);

  /* The exported getters must return the same values as the initialisers. */
  blosc2_cparams got_cparams = blosc2_get_blosc2_cparams_defaults();
  blosc2_dparams got_dparams = blosc2_get_blosc2_dparams_defaults();
  blosc2_storage got_storage = blosc2_get_blosc2_storage_defaults();
  blosc2_io got_io = blosc2_get_blosc2_io_defaults();
  blosc2_stdio_mmap got_mmap = blosc2_get_blosc2_stdio_mmap_defaults();
  layout_print_cparams(out, "blosc2_get_blosc2_cparams_defaults()", &got_cparams);
  layout_print_dparams(out, "blosc2_get_blosc2_dparams_defaults()", &got_dparams);
  layout_print_storage(out, "blosc2_get_blosc2_storage_defaults()", &got_storage);
  layout_print_io(out, "blosc2_get_blosc2_io_defaults()", &got_io);
  layout_print_stdio_mmap(out, "blosc2_get_blosc2_stdio_mmap_defaults()", &got_mmap);

#define LAYOUT_PRINT_M(name) fprintf(out, "const %s %lld\n", #name, (long long)(name));
#define LAYOUT_PRINT_S(name) fprintf(out, "string %s \"%s\"\n", #name, name);
  LAYOUT_INT_CONSTANTS(LAYOUT_PRINT_M)
  LAYOUT_STRING_MACROS(LAYOUT_PRINT_S)

  fprintf(out, "caller %lld\n", layout_typical_caller());
  fprintf(out, "error-macros %d %d\n", layout_use_error_macros(NULL, 0),
          layout_use_error_macros(out, BLOSC2_ERROR_INVALID_PARAM));
  return bad;
}

#endif /* B2ND_LAYOUT_BODY_H */
