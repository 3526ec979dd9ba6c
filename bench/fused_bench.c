// SPDX-License-Identifier: Apache-2.0
/*
 * fused_bench.c — the CPU kernels of a 10-op float32 elementwise chain on N elements,
 * fused (kn_fused_f32, one pass, one output buffer: what the executor runs, exec/fused.c)
 * against the same ops one by one (kn_binary / kn_unary, a tensor per op: the executor
 * with STAGD_FUSE=0), rounds alternating; prints the median ms of each and the ratio,
 * for the chain of bench/chain_bench.py and for the same chain with neg in place of
 * tanh (arithmetic only: what memory traffic costs). Checks the bits agree.
 * Usage: fused_bench [N] [ROUNDS]          (N = 1048576, ROUNDS = 15)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kn_cpu.h" /* kn_cpu_threads */

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}

/* y = tanh(sqrt(abs(abs(x*1.5 + 0.5) * x - 0.25) + 1) * 2) + x; input 0: x, 1..5 scalars */
static kn_fused_step chain[] = {
    {false, KN_MUL, 0, 1},  {false, KN_ADD, -1, 2}, {true, KN_ABS, -1, -1}, {false, KN_MUL, -1, 0},
    {false, KN_SUB, -1, 3}, {true, KN_ABS, -1, -1}, {false, KN_ADD, -1, 4}, {true, KN_SQRT, -1, -1},
    {false, KN_MUL, -1, 5}, {true, KN_TANH, -1, -1}, {false, KN_ADD, -1, 0}};
enum { NSTEPS = sizeof chain / sizeof chain[0] };

static kn_tensor *one_by_one(kn_tensor *x, kn_tensor *const *scalars) {
  sg_error e = SG_ERROR_INIT;
  kn_tensor *cur = kn_tensor_retain(x), *next = NULL;
  for (int s = 0; s < NSTEPS; s++) {
    if (chain[s].unary) kn_unary((kn_unop)chain[s].op, cur, &next, &e);
    else kn_binary((kn_binop)chain[s].op, cur, chain[s].b == 0 ? x : scalars[chain[s].b], &next, &e);
    kn_tensor_release(cur);
    cur = next;
  }
  return cur;
}

static void run(int64_t n, int rounds, const char *label) {
  kn_tensor *x = kn_random(true, 7, KN_FLOAT32, 1, &n);
  kn_fused_input ins[6] = {{x->data, 0, 0, 0},    {NULL, 1.5f, 0, 0}, {NULL, 0.5f, 0, 0},
                           {NULL, 0.25f, 0, 0}, {NULL, 1.0f, 0, 0}, {NULL, 2.0f, 0, 0}};
  kn_tensor *scalars[6] = {NULL};
  for (int i = 1; i < 6; i++) scalars[i] = kn_tensor_scalar_f64(KN_FLOAT32, ins[i].scalar);
  double *tf = malloc(sizeof(double) * (size_t)rounds), *tu = malloc(sizeof(double) * (size_t)rounds);
  bool same = true;
  for (int r = -1; r < rounds; r++) { /* r == -1: warm-up (threads, pool) */
    uint64_t t0 = sg_now_ns();
    kn_tensor *f = kn_tensor_empty(KN_FLOAT32, 1, &n);
    kn_fused_f32(chain, NSTEPS, ins, f->data, n);
    uint64_t t1 = sg_now_ns();
    kn_tensor *u = one_by_one(x, scalars);
    uint64_t t2 = sg_now_ns();
    same = same && memcmp(f->data, u->data, (size_t)n * sizeof(float)) == 0;
    kn_tensor_release(f);
    kn_tensor_release(u);
    if (r >= 0) tf[r] = (double)(t1 - t0) / 1e6, tu[r] = (double)(t2 - t1) / 1e6;
  }
  double mf = median(tf, rounds), mu = median(tu, rounds);
  printf("%-34s fused %8.3f ms   one by one %8.3f ms   %5.2fx   bits %s\n", label, mf, mu, mu / mf,
         same ? "equal" : "DIFFER");
  free(tf), free(tu);
  for (int i = 1; i < 6; i++) kn_tensor_release(scalars[i]);
  kn_tensor_release(x);
}

int main(int argc, char **argv) {
  sg_memory_tune_for_reuse(); /* as the daemon does */
  int64_t n = argc > 1 ? atoll(argv[1]) : 1 << 20;
  int rounds = argc > 2 ? atoi(argv[2]) : 15;
  printf("# %lld float32, %d threads, medians of %d alternating rounds\n", (long long)n,
         kn_cpu_threads(), rounds);
  run(n, rounds, "10-op chain (with tanh)");
  chain[9].op = KN_NEG; /* the same chain, arithmetic only */
  run(n, rounds, "10-op chain (neg for tanh)");
  return 0;
}
