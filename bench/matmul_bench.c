// SPDX-License-Identifier: Apache-2.0
/*
 * matmul_bench.c — float32 matmul through kn_matmul (the executor's kernel) for
 * N×N sizes given on the command line; prints "N seconds GFLOPS" per size (best of
 * several runs). bench/matmul_vs_numpy.py runs it next to NumPy and prints ratios.
 * Usage: matmul_bench [--blocked] N...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kn.h"

int main(int argc, char **argv) {
  sg_memory_tune_for_reuse(); /* as the daemon does */
  bool blocked = false;
  printf("# blas %s\n", kn_blas_name());
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--blocked")) {
      blocked = true;
      continue;
    }
    int64_t n = atoll(argv[i]);
    int64_t shape[2] = {n, n};
    kn_tensor *a = kn_random(false, 1, KN_FLOAT32, 2, shape), *b = kn_random(false, 2, KN_FLOAT32, 2, shape);
    double best = 1e30;
    int reps = n <= 512 ? 10 : n <= 1024 ? 5 : 3;
    for (int r = -1; r < reps; r++) { /* r == -1: warm-up (BLAS thread pool), untimed */
      uint64_t t0 = sg_now_ns();
      kn_tensor *c = NULL;
      sg_error e = SG_ERROR_INIT;
      if (blocked) {
        c = kn_tensor_new(KN_FLOAT32, 2, shape);
        kn_sgemm_blocked(n, n, n, a->data, b->data, c->data);
      } else if (kn_matmul(a, b, &c, &e)) {
        fprintf(stderr, "matmul failed: %s\n", e.message);
        return 1;
      }
      double s = (double)(sg_now_ns() - t0) * 1e-9;
      if (r >= 0 && s < best) best = s;
      kn_tensor_release(c);
    }
    printf("%lld %.6f %.1f\n", (long long)n, best, 2.0 * (double)n * (double)n * (double)n / best * 1e-9);
    kn_tensor_release(a);
    kn_tensor_release(b);
  }
  return 0;
}
