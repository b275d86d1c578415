/*
 * blosc2/blosc2-common.h: the helper macros and standard headers that the reference's
 * blosc2.h brings to every caller through this file, so code that relies on them (for
 * BLOSC_UNUSED_PARAM, for strlen/memcpy without its own <string.h>, for SSE2 intrinsics
 * without its own <emmintrin.h>) compiles unchanged.
 */
#ifndef BLOSC_BLOSC2_BLOSC2_COMMON_H
#define BLOSC_BLOSC2_BLOSC2_COMMON_H

#include "blosc2-export.h"

#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
/* GCC's version as one number (12.2 is 1202). */
#  define BLOSC_GCC_VERSION (__GNUC__ * 100 + __GNUC_MINOR__)
/* Marks a variable that may go unused. */
#  define BLOSC_UNUSED_VAR __attribute__((unused))
#else
#  define BLOSC_UNUSED_VAR
#endif

/* Marks a parameter as used on purpose. */
#define BLOSC_UNUSED_PARAM(x) ((void)(x))

/* Visual C in C mode spells inline __inline. */
#if defined(_MSC_VER) && !defined(__cplusplus)
#  define inline __inline
#endif

/* Visual C targeting SSE2 does not announce it; GCC and Clang do. */
#if defined(_MSC_VER) && !defined(__SSE2__) && \
    (defined(_M_X64) || (defined(_M_IX86) && _M_IX86_FP >= 2))
#  define __SSE2__
#endif

/* BLOSC_STRICT_ALIGN is defined where unaligned loads must be avoided: everywhere but the
   architectures that handle them well (x86, 64-bit ARM with unaligned access, PowerPC). */
#if !defined(BLOSC_STRICT_ALIGN)
#  if !(defined(__i386__) || defined(__i486__) || defined(__i586__) || defined(__i686__) || \
        defined(__386) || defined(__amd64) || defined(__x86_64__) || defined(_X86_) ||       \
        defined(__I86__) || defined(_M_IX86) || defined(_M_X64) ||                          \
        (defined(__ARM_FEATURE_UNALIGNED) && defined(__ARM64_ARCH_8__)) ||                  \
        defined(_ARCH_PPC) || defined(__PPC__))
#    define BLOSC_STRICT_ALIGN
#  endif
#endif

#if defined(__SSE2__)
#  include <emmintrin.h>
#endif
#if defined(__AVX2__) || defined(__AVX512F__) || defined(__AVX512BW__)
#  include <immintrin.h>
#endif

#endif /* BLOSC_BLOSC2_BLOSC2_COMMON_H */
