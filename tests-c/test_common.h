/* Shared helpers for the C tests: assertions that report where they failed. */
#ifndef B2ND_TEST_COMMON_H
#define B2ND_TEST_COMMON_H

#include <b2nd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures = 0;

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      test_failures++;                                                       \
    }                                                                        \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                   \
  do {                                                                       \
    long long a_ = (long long)(a), b_ = (long long)(b);                      \
    if (a_ != b_) {                                                          \
      fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__,  \
              __LINE__, #a, a_, #b, b_);                                     \
      test_failures++;                                                       \
    }                                                                        \
  } while (0)

static inline int test_finish(const char *name) {
  if (test_failures) {
    fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
    return 1;
  }
  printf("%s: all checks passed\n", name);
  return 0;
}

#endif
