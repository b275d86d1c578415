/*
 * blosc2.h: for callers of the reference C-Blosc2 API that include <blosc2.h>.
 *
 * Everything (the blosc2 and b2nd APIs) is declared in the generated b2nd.h;
 * this file only forwards to it so both include spellings compile unchanged.
 */
#include "b2nd.h"
