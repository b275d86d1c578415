/*
 * blosc2/filters-registry.h: the ids of C-Blosc2's globally registered filters, for callers of
 * the reference API that include this header to pick them.
 *
 * libb2nd runs all five: NDCELL, NDMEAN, BYTEDELTA (and the older BYTEDELTA_BUGGY, kept so old
 * chunks decode) and INT_TRUNC. BYTEDELTA's filters_meta is the number of byte streams (0: the
 * typesize); INT_TRUNC's is the bits to keep (positive) or to zero (negative), for items of 1, 2,
 * 4 or 8 bytes. NDCELL's and NDMEAN's is the cell side; they work on the block shape of the "b2nd"
 * metalayer of the super-chunk named by cparams.schunk / dparams.schunk (b2nd arrays and
 * super-chunks opened from b2nd files set it themselves); without one they fail with
 * BLOSC2_ERROR_FILTER_PIPELINE. NDMEAN is lossy and takes float32 or float64 items.
 *
 * A filter registered with blosc2_register_filter and NULL callbacks is loaded from the plugin
 * library named after it, libblosc2_<name>.so, found as blosc2/codecs-registry.h describes for
 * codecs; a filter that cannot be loaded fails the call with BLOSC2_ERROR_FILTER_PIPELINE.
 */
#ifndef BLOSC_BLOSC2_FILTERS_REGISTRY_H
#define BLOSC_BLOSC2_FILTERS_REGISTRY_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
  BLOSC_FILTER_NDCELL = 32,
  BLOSC_FILTER_NDMEAN = 33,
  BLOSC_FILTER_BYTEDELTA_BUGGY = 34,
  BLOSC_FILTER_BYTEDELTA = 35,
  BLOSC_FILTER_INT_TRUNC = 36,
};

/* Declared as in the reference, whose shared library does not export it either: blosc2_init
   does this registration. */
void register_filters(void);

/* What a filter plugin library exports under the symbol `info`: the names of its forward and
 * backward functions, which have the signatures of blosc2_filter's callbacks. */
typedef struct {
  char *forward;
  char *backward;
} filter_info;

#ifdef __cplusplus
}
#endif

#endif /* BLOSC_BLOSC2_FILTERS_REGISTRY_H */
