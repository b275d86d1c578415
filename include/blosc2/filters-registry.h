/*
 * blosc2/filters-registry.h: the ids of C-Blosc2's globally registered filters, for callers of
 * the reference API that include this header to pick them.
 *
 * libb2nd runs BYTEDELTA (and the older BYTEDELTA_BUGGY, kept so old chunks decode) and
 * INT_TRUNC; chunks asking for NDCELL or NDMEAN are refused with BLOSC2_ERROR_CODEC_SUPPORT.
 * BYTEDELTA's filters_meta is the number of byte streams (0: the typesize); INT_TRUNC's is the
 * bits to keep (positive) or to zero (negative), for items of 1, 2, 4 or 8 bytes.
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

#ifdef __cplusplus
}
#endif

#endif /* BLOSC_BLOSC2_FILTERS_REGISTRY_H */
