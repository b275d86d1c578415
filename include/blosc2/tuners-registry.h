/*
 * blosc2/tuners-registry.h: the ids of C-Blosc2's globally registered tuners and the struct a
 * tuner plugin library exports, for callers and plugin authors of the reference API.
 *
 * BTUNE (id 32) is a plugin in the reference too (the blosc2_btune wheel). A cparams.tuner_id of
 * a tuner registered with blosc2_register_tuner runs its callbacks; see b2nd.h.
 */
#ifndef BLOSC_BLOSC2_TUNERS_REGISTRY_H
#define BLOSC_BLOSC2_TUNERS_REGISTRY_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
  BLOSC_BTUNE = 32,
};

/* Declared as in the reference, whose shared library does not export it either: blosc2_init
   does this registration. */
void register_tuners(void);

/* What a tuner plugin library exports under the symbol `info`: the names of its callbacks,
   which have the signatures of blosc2_tuner's fields. */
typedef struct {
  char *init;
  char *next_blocksize;
  char *next_cparams;
  char *update;
  char *free;
} tuner_info;

#ifdef __cplusplus
}
#endif

#endif /* BLOSC_BLOSC2_TUNERS_REGISTRY_H */
