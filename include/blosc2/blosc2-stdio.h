/*
 * blosc2/blosc2-stdio.h: the file and memory-map I/O backends of the reference API
 * (blosc2_stdio_file, blosc2_stdio_params, blosc2_stdio_mmap, the blosc2_stdio_* and
 * blosc2_stdio_mmap_* callbacks and their defaults).
 *
 * They are declared in the generated b2nd.h, with everything else; this file includes it,
 * so a caller including only this header gets them, as with the reference.
 */
#ifndef BLOSC_BLOSC2_BLOSC2_STDIO_H
#define BLOSC_BLOSC2_BLOSC2_STDIO_H

#include "blosc2-export.h"

#if defined(_MSC_VER)
#  include <io.h>
#else
#  include <unistd.h>
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../b2nd.h"

#endif /* BLOSC_BLOSC2_BLOSC2_STDIO_H */
