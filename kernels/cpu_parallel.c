/*
 * cpu_parallel.c — splits large CPU loops over the machine's cores (pthreads, one
 * chunk per core, the caller's thread takes the first). Small elementwise loops run
 * inline: below KN_PARALLEL_MIN elements thread start-up costs more than it saves.
 * STAGD_CPU_THREADS=N caps the thread count (bench/unary_reduce_threads.py runs N=1
 * as the serial baseline).
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "kn_cpu.h"

typedef struct chunk {
  kn_range_fn fn;
  void *ctx;
  int64_t k0, k1;
} chunk;

static void *run_chunk(void *p) {
  chunk *c = p;
  c->fn(c->ctx, c->k0, c->k1);
  return NULL;
}

int kn_cpu_threads(void) {
  static atomic_int cached;
  int n = atomic_load_explicit(&cached, memory_order_relaxed);
  if (!n) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("STAGD_CPU_THREADS"); /* benchmarks: 1 = the serial baseline */
    if (env && atoi(env) > 0) c = atoi(env);
    n = c < 1 ? 1 : c > 16 ? 16 : (int)c;
    atomic_store_explicit(&cached, n, memory_order_relaxed);
  }
  return n;
}

static void split(int64_t total, int nt, kn_range_fn fn, void *ctx) {
  chunk cs[16];
  pthread_t th[16];
  bool started[16] = {0};
  for (int i = 0; i < nt; i++) {
    cs[i] = (chunk){fn, ctx, total * i / nt, total * (i + 1) / nt};
    if (i > 0) started[i] = pthread_create(&th[i], NULL, run_chunk, &cs[i]) == 0;
  }
  run_chunk(&cs[0]);
  for (int i = 1; i < nt; i++) {
    if (started[i]) pthread_join(th[i], NULL);
    else run_chunk(&cs[i]); /* could not start a thread: do it here */
  }
}

void kn_parallel_blocks(int64_t nblocks, kn_range_fn fn, void *ctx) {
  int nt = kn_cpu_threads();
  if (nt > nblocks) nt = (int)nblocks;
  if (nt < 2) fn(ctx, 0, nblocks);
  else split(nblocks, nt, fn, ctx);
}

void kn_parallel_for(int64_t total, kn_range_fn fn, void *ctx) {
  int nt = kn_cpu_threads();
  if (total < KN_PARALLEL_MIN || nt < 2) {
    fn(ctx, 0, total);
    return;
  }
  if ((int64_t)nt > total / (KN_PARALLEL_MIN / 4)) nt = (int)(total / (KN_PARALLEL_MIN / 4));
  if (nt < 2) fn(ctx, 0, total);
  else split(total, nt, fn, ctx);
}
