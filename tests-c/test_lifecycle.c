/* Lifecycle, version and error-code calls a C caller makes first. */
#include "test_common.h"

int main(void) {
  blosc2_init();
  blosc2_init(); /* idempotent */

  CHECK(strcmp(blosc2_get_version_string(), BLOSC2_VERSION_STRING) == 0);
  CHECK_EQ_INT(BLOSC2_VERSION_MAJOR, 3);
  CHECK(BLOSC2_VERSION_MINOR >= 0 && BLOSC2_VERSION_RELEASE >= 0);

  /* Error codes: same names and values as the reference blosc2.h. */
  CHECK_EQ_INT(BLOSC2_ERROR_SUCCESS, 0);
  CHECK_EQ_INT(BLOSC2_ERROR_FAILURE, -1);
  CHECK_EQ_INT(BLOSC2_ERROR_INVALID_HEADER, -11);
  CHECK_EQ_INT(BLOSC2_ERROR_INVALID_PARAM, -12);
  CHECK_EQ_INT(BLOSC2_ERROR_NULL_POINTER, -32);
  CHECK_EQ_INT(BLOSC2_ERROR_LOCK, -37);
  CHECK(strcmp(blosc2_error_string(BLOSC2_ERROR_SUCCESS), "Success") == 0);
  CHECK(strcmp(blosc2_error_string(BLOSC2_ERROR_NULL_POINTER), "Pointer is null") == 0);
  CHECK(strcmp(blosc2_error_string(-1000), "Unknown error") == 0);
  CHECK(strcmp(print_error(BLOSC2_ERROR_DATA), "Invalid data") == 0);

  /* Limits used by callers. */
  CHECK_EQ_INT(BLOSC2_MAX_OVERHEAD, 32);
  CHECK_EQ_INT(BLOSC_MIN_HEADER_LENGTH, 16);
  CHECK_EQ_INT(BLOSC_EXTENDED_HEADER_LENGTH, 32);
  CHECK_EQ_INT(BLOSC2_MAX_BUFFERSIZE, INT_MAX - 32);
  CHECK_EQ_INT(BLOSC_MAX_TYPESIZE, 255);
  CHECK_EQ_INT(BLOSC2_MAX_FILTERS, 6);
  CHECK_EQ_INT(BLOSC2_MAX_METALAYERS, 16);
  CHECK_EQ_INT(BLOSC2_MAX_VLMETALAYERS, 8 * 1024);
  CHECK_EQ_INT(BLOSC2_MAXBLOCKSIZE, 536866816);
  CHECK_EQ_INT(BLOSC_MAX_OVERHEAD, BLOSC2_MAX_OVERHEAD);
  CHECK(strcmp(BLOSC_ZSTD_COMPNAME, "zstd") == 0);

  CHECK_EQ_INT(blosc2_free_resources(), 0);
  blosc2_destroy();
  /* The library can be brought up again after destroy. */
  blosc2_init();
  blosc2_destroy();
  return test_finish("test_lifecycle");
}
