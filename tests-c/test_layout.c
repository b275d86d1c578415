/*
 * Struct layouts, typedefs, default initialisers and constants of our include/b2nd.h.
 *
 * `test_layout --report` prints the same report as layout/ref_layout.c does against the
 * reference headers (the CTest case layout_matches_reference compares the two).
 * Without arguments it checks what the reference cannot show: that the exported
 * blosc2_get_blosc2_*_defaults() functions return exactly the header's initialisers.
 */
/* Blosc 1.x compatibility names are part of the API checklist too. */
#define BLOSC1_COMPAT
#include "test_common.h"

#include "layout/layout_body.h"

/* Runs `print` on two objects and checks the printed field values are identical. */
#define CHECK_SAME_FIELDS(print, label, a, b)                                  \
  do {                                                                         \
    char *text_a = NULL, *text_b = NULL;                                       \
    size_t len_a = 0, len_b = 0;                                               \
    FILE *fa = open_memstream(&text_a, &len_a);                                \
    FILE *fb = open_memstream(&text_b, &len_b);                                \
    CHECK(fa != NULL && fb != NULL);                                           \
    if (fa != NULL && fb != NULL) {                                            \
      print(fa, label, a);                                                     \
      print(fb, label, b);                                                     \
      fclose(fa);                                                              \
      fclose(fb);                                                              \
      CHECK(len_a > 0);                                                        \
      if (strcmp(text_a, text_b) != 0) {                                       \
        fprintf(stderr, "%s differs:\n--- header\n%s--- function\n%s", label,  \
                text_a, text_b);                                               \
        test_failures++;                                                       \
      }                                                                        \
    }                                                                          \
    free(text_a);                                                              \
    free(text_b);                                                              \
  } while (0)

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--report") == 0) {
    return layout_report(stdout) == 0 ? 0 : 1;
  }

  /* The report itself: every type check passes (its lines go to a scratch stream). */
  char *report = NULL;
  size_t report_len = 0;
  FILE *scratch = open_memstream(&report, &report_len);
  CHECK(scratch != NULL);
  if (scratch != NULL) {
    CHECK_EQ_INT(layout_report(scratch), 0);
    fclose(scratch);
    CHECK(strstr(report, "MISMATCH") == NULL);
    CHECK(strstr(report, "field b2nd_array_t.last_tick") != NULL);
  }
  free(report);

  /* The exported getters return the header's initialisers, field by field. */
  blosc2_cparams cparams = blosc2_get_blosc2_cparams_defaults();
  blosc2_dparams dparams = blosc2_get_blosc2_dparams_defaults();
  blosc2_storage storage = blosc2_get_blosc2_storage_defaults();
  blosc2_io io = blosc2_get_blosc2_io_defaults();
  blosc2_stdio_mmap mmap_params = blosc2_get_blosc2_stdio_mmap_defaults();
  CHECK_SAME_FIELDS(layout_print_cparams, "cparams", &BLOSC2_CPARAMS_DEFAULTS, &cparams);
  CHECK_SAME_FIELDS(layout_print_dparams, "dparams", &BLOSC2_DPARAMS_DEFAULTS, &dparams);
  CHECK_SAME_FIELDS(layout_print_storage, "storage", &BLOSC2_STORAGE_DEFAULTS, &storage);
  CHECK_SAME_FIELDS(layout_print_io, "io", &BLOSC2_IO_DEFAULTS, &io);
  CHECK_SAME_FIELDS(layout_print_stdio_mmap, "stdio_mmap", &BLOSC2_STDIO_MMAP_DEFAULTS, &mmap_params);

  /* A few values spelled out, so a wrong initialiser in both places is caught too. */
  CHECK_EQ_INT(cparams.clevel, 5);
  CHECK_EQ_INT(cparams.typesize, 8);
  CHECK_EQ_INT(cparams.splitmode, BLOSC_FORWARD_COMPAT_SPLIT);
  CHECK_EQ_INT(cparams.filters[BLOSC2_MAX_FILTERS - 1], BLOSC_SHUFFLE);
  CHECK_EQ_INT(dparams.nthreads, 1);
  CHECK(strcmp(io.name, "filesystem") == 0);
  CHECK_EQ_INT(mmap_params.initial_mapping_size, (size_t)1 << 30);
  CHECK_EQ_INT(mmap_params.fd, -1);
  CHECK(storage.io == NULL && !storage.contiguous);

  return test_finish("test_layout");
}
