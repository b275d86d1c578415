/*
 * Runs two builds of bench.c (made with -DBENCH_PLUGIN, each linked against one library) in
 * one process, row by row: for every round and every row, both libraries are measured one
 * right after the other, the first of the two alternating from round to round. Load that
 * drifts over minutes then reaches both measurements of a row alike, which alternating whole
 * passes of two processes could not promise.
 *
 * Usage: driver A.so B.so OUT_A OUT_B ROUNDS [bench arguments...]
 * Each library is opened RTLD_LOCAL | RTLD_DEEPBIND, so each plugin binds to the library it
 * was linked against although both export the same names. Results are appended to OUT_A and
 * OUT_B as bench.c's TSV lines (one set per round).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*bench_run_fn)(int argc, char **argv);

static bench_run_fn load(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (h == NULL) {
    fprintf(stderr, "driver: %s\n", dlerror());
    exit(2);
  }
  bench_run_fn f = (bench_run_fn)dlsym(h, "bench_run");
  if (f == NULL) {
    fprintf(stderr, "driver: %s has no bench_run\n", path);
    exit(2);
  }
  return f;
}

/* Calls `run` with "bench", `extra` (argument pairs, NULL-terminated) and the user's
   arguments. */
static int call(bench_run_fn run, const char **extra, int nuser, char **user) {
  char *argv[64];
  int argc = 0;
  argv[argc++] = "bench";
  for (; *extra && argc < 40; extra++) argv[argc++] = (char *)*extra;
  for (int i = 0; i < nuser && argc < 63; i++) argv[argc++] = user[i];
  argv[argc] = NULL;
  return run(argc, argv);
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: driver A.so B.so OUT_A OUT_B ROUNDS [bench arguments...]\n");
    return 2;
  }
  bench_run_fn run[2] = {load(argv[1]), load(argv[2])};
  const char *outs[2] = {argv[3], argv[4]};
  int rounds = atoi(argv[5]);
  int nuser = argc - 6;
  char **user = argv + 6;

  /* The row names, as A would run them with the user's filters. */
  char listpath[4096];
  snprintf(listpath, sizeof listpath, "%s.rows", outs[0]);
  remove(listpath);
  const char *list[] = {"--list", "--out", listpath, NULL};
  if (call(run[0], list, nuser, user) != 0) return 1;
  FILE *f = fopen(listpath, "r");
  if (f == NULL) return 1;
  char *rows[4096];
  int nrows = 0;
  char line[512];
  while (nrows < 4096 && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    rows[nrows++] = strdup(line);
  }
  fclose(f);
  remove(listpath);

  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < nrows; i++) {
      for (int k = 0; k < 2; k++) {
        int lib = (r + k) % 2; /* A first in even rounds, B first in odd ones */
        const char *extra[] = {"--exact", rows[i], "--out", outs[lib], NULL};
        if (call(run[lib], extra, nuser, user) != 0) {
          fprintf(stderr, "driver: row %s failed in %s\n", rows[i], argv[1 + lib]);
          return 1;
        }
      }
    }
  }
  for (int i = 0; i < nrows; i++) free(rows[i]);
  return 0;
}
