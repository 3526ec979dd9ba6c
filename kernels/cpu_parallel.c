// SPDX-License-Identifier: Apache-2.0
/*
 * cpu_parallel.c — splits large CPU loops over the machine's cores: one chunk per core,
 * the caller's thread takes the first, a pool of worker threads (started once, on the
 * first large loop) the others. Small elementwise loops run inline: below
 * KN_PARALLEL_MIN elements waking other cores costs more than it saves.
 *
 * The pool serves one loop at a time. A loop that finds it busy — another request's
 * loop, or a loop inside a chunk of this one — runs on its own thread: the cores are
 * already working, and waiting for the pool would only queue behind them.
 * STAGD_CPU_THREADS=N caps the thread count (bench/unary_reduce_threads.py runs N=1
 * as the serial baseline).
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "kn_cpu.h"

enum { MAX_THREADS = 16 };

typedef struct pool {
  pthread_mutex_t busy; /* held by the loop that uses the pool */
  pthread_mutex_t m;    /* guards the fields below */
  pthread_cond_t go, done;
  int nworkers;        /* worker threads started (worker w runs chunk w + 1) */
  unsigned long round; /* bumped for each loop; a worker runs once per round */
  kn_range_fn fn;
  void *ctx;
  int64_t total;
  int nchunks;
  int pending; /* chunks of this round the workers have not finished */
} pool;

static pool the_pool = {.busy = PTHREAD_MUTEX_INITIALIZER,
                        .m = PTHREAD_MUTEX_INITIALIZER,
                        .go = PTHREAD_COND_INITIALIZER,
                        .done = PTHREAD_COND_INITIALIZER};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static int64_t chunk_start(int64_t total, int nchunks, int i) { return total * i / nchunks; }

static void *worker_main(void *arg) {
  pool *p = &the_pool;
  int chunk = (int)(intptr_t)arg;
  unsigned long seen = 0;
  pthread_mutex_lock(&p->m);
  for (;;) {
    while (p->round == seen) pthread_cond_wait(&p->go, &p->m);
    seen = p->round;
    if (chunk >= p->nchunks) continue; /* this loop needs fewer threads */
    kn_range_fn fn = p->fn;
    void *ctx = p->ctx;
    int64_t k0 = chunk_start(p->total, p->nchunks, chunk);
    int64_t k1 = chunk_start(p->total, p->nchunks, chunk + 1);
    pthread_mutex_unlock(&p->m);
    fn(ctx, k0, k1);
    pthread_mutex_lock(&p->m);
    if (--p->pending == 0) pthread_cond_signal(&p->done);
  }
  return NULL;
}

static void pool_start(void) {
  pool *p = &the_pool;
  int want = kn_cpu_threads() - 1;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (int w = 0; w < want; w++) {
    pthread_t t;
    if (pthread_create(&t, &attr, worker_main, (void *)(intptr_t)(w + 1)) != 0) break;
    p->nworkers++; /* before any loop can read it: pthread_once orders the two */
  }
  pthread_attr_destroy(&attr);
}

int kn_cpu_threads(void) {
  static atomic_int cached;
  int n = atomic_load_explicit(&cached, memory_order_relaxed);
  if (!n) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("STAGD_CPU_THREADS"); /* benchmarks: 1 = the serial baseline */
    if (env && atoi(env) > 0) c = atoi(env);
    n = c < 1 ? 1 : c > MAX_THREADS ? MAX_THREADS : (int)c;
    atomic_store_explicit(&cached, n, memory_order_relaxed);
  }
  return n;
}

/* Runs fn over [0, total) as nchunks chunks on the pool, or all of it here when the
 * pool is busy or could not start any worker. */
static void split(int64_t total, int nchunks, kn_range_fn fn, void *ctx) {
  pool *p = &the_pool;
  pthread_once(&pool_once, pool_start);
  if (nchunks > p->nworkers + 1) nchunks = p->nworkers + 1;
  if (nchunks < 2 || pthread_mutex_trylock(&p->busy) != 0) {
    fn(ctx, 0, total);
    return;
  }
  pthread_mutex_lock(&p->m);
  p->fn = fn;
  p->ctx = ctx;
  p->total = total;
  p->nchunks = nchunks;
  p->pending = nchunks - 1;
  p->round++;
  pthread_cond_broadcast(&p->go);
  pthread_mutex_unlock(&p->m);
  fn(ctx, 0, chunk_start(total, nchunks, 1));
  pthread_mutex_lock(&p->m);
  while (p->pending > 0) pthread_cond_wait(&p->done, &p->m);
  pthread_mutex_unlock(&p->m);
  pthread_mutex_unlock(&p->busy);
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
