/*
 * blosc2/codecs-registry.h: the ids of C-Blosc2's globally registered codecs, and the struct a
 * codec plugin library exports, for callers and plugin authors of the reference API.
 *
 * libb2nd runs NDLZ and the three zfp codecs itself. The others exist only as plugin libraries,
 * in the reference too: blosc2_init registers them, and a chunk that uses one loads
 * libblosc2_<name>.so at first use (name: openhtj2k, grok, openzl, j2k, htj2k), from the dynamic
 * linker's search path or else from the path `python -c "import blosc2_<name>;
 * blosc2_<name>.print_libpath()"` prints (the plugins ship as Python wheels). A codec registered
 * with blosc2_register_codec and NULL callbacks is loaded the same way, by its compname. A plugin
 * that cannot be loaded fails the call with BLOSC2_ERROR_CODEC_SUPPORT.
 */
#ifndef BLOSC_BLOSC2_CODECS_REGISTRY_H
#define BLOSC_BLOSC2_CODECS_REGISTRY_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
  BLOSC_CODEC_NDLZ = 32,
  BLOSC_CODEC_ZFP_FIXED_ACCURACY = 33,
  BLOSC_CODEC_ZFP_FIXED_PRECISION = 34,
  BLOSC_CODEC_ZFP_FIXED_RATE = 35,
  BLOSC_CODEC_OPENHTJ2K = 36,
  BLOSC_CODEC_GROK = 37,
  BLOSC_CODEC_OPENZL = 38,
  BLOSC_CODEC_J2K = 39,
  BLOSC_CODEC_HTJ2K = 40,
};

/* Declared as in the reference, whose shared library does not export it either: blosc2_init
   does this registration. */
void register_codecs(void);

/* What a codec plugin library exports under the symbol `info`: the names of its encoder and
 * decoder, which have the signatures of blosc2_codec's callbacks. */
typedef struct {
  char *encoder;
  char *decoder;
} codec_info;

#ifdef __cplusplus
}
#endif

#endif /* BLOSC_BLOSC2_CODECS_REGISTRY_H */
