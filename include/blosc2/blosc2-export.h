/*
 * blosc2/blosc2-export.h: the symbol-visibility macros of the reference's public headers.
 *
 * libb2nd's exports are decided by the Rust code (#[no_mangle] extern "C"), not by these
 * macros; they exist so that callers and plugins that decorate their own declarations with
 * them, as C-Blosc2's do, compile unchanged.
 */
#ifndef BLOSC_BLOSC2_BLOSC2_EXPORT_H
#define BLOSC_BLOSC2_BLOSC2_EXPORT_H

/* BLOSC_EXPORT marks a symbol of the shared library; a caller building one defines
   BLOSC_SHARED_LIBRARY, as with the reference. */
#if defined(BLOSC_SHARED_LIBRARY)
#  if defined(_MSC_VER)
#    define BLOSC_EXPORT __declspec(dllexport)
#  elif defined(_WIN32) || defined(__CYGWIN__)
#    define BLOSC_EXPORT __attribute__((dllexport))
#  elif defined(__GNUC__) || defined(__clang__)
#    define BLOSC_EXPORT __attribute__((visibility("default")))
#  else
#    define BLOSC_EXPORT
#  endif
#else
#  define BLOSC_EXPORT
#endif

/* BLOSC_NO_EXPORT hides a symbol; BLOSC_TESTING (the reference's test builds) exports it. */
#if defined(BLOSC_TESTING)
#  define BLOSC_NO_EXPORT BLOSC_EXPORT
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(__MINGW32__)
#  define BLOSC_NO_EXPORT __attribute__((visibility("hidden")))
#else
#  define BLOSC_NO_EXPORT
#endif

#endif /* BLOSC_BLOSC2_BLOSC2_EXPORT_H */
