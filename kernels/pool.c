// SPDX-License-Identifier: Apache-2.0
/*
 * pool.c — the buffer pool behind tensor storage: freed tensors' buffers are kept in
 * size classes and handed to the next tensor of a size in the same class, so a request
 * that makes and drops tensors of the same sizes (every step of a loop, every call of a
 * staged function) reuses warm pages instead of faulting fresh ones in and zero-filling
 * them.
 *
 * Buffers below KN_POOL_MIN bytes go straight to malloc (its own bins are as fast).
 * Larger ones are rounded up to a class: four classes per power of two, so at most a
 * quarter of a buffer is slack. A buffer is cached on release while the pool holds at
 * most its bound (STAGD_POOL_MB, default 256 MiB; 0 turns the pool off) and no single
 * buffer larger than a quarter of the bound is kept. When an allocation fails the pool
 * is emptied and the allocation retried; if that fails too, kn_pool_alloc returns NULL
 * and the tensor's maker reports RESOURCE_EXHAUSTED (tensor.c); kn_pool_trim empties
 * it on demand. The test build reads STAGD_TEST_FAIL_ALLOC_ABOVE=N: every buffer of
 * more than N bytes then fails, so tests reach that path without exhausting memory
 * (AddressSanitizer's shadow reservations make a lowered RLIMIT_AS unusable there). Cached buffers are poisoned for AddressSanitizer,
 * so a use after release is still reported in the test build.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kn_cpu.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

enum { NCLASSES = 4 * 40 };

typedef struct pool_buf {
  struct pool_buf *next;
} pool_buf;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pool_buf *free_list[NCLASSES];
static size_t bound;   /* bytes the pool may hold */
static size_t fail_above; /* the test build's STAGD_TEST_FAIL_ALLOC_ABOVE; 0: off */
static kn_pool_stats stats;

static void init(void) {
  const char *v = getenv("STAGD_POOL_MB");
  bound = (size_t)256 << 20;
  if (v && *v) bound = (size_t)strtoull(v, NULL, 10) << 20;
#if defined(__SANITIZE_ADDRESS__)
  const char *f = getenv("STAGD_TEST_FAIL_ALLOC_ABOVE");
  if (f && *f) fail_above = (size_t)strtoull(f, NULL, 10);
#endif
}

/* The class of a buffer of `bytes` (≥ KN_POOL_MIN) and the bytes that class holds. */
static int class_of(size_t bytes, size_t *class_bytes) {
  int e = 63 - __builtin_clzll((unsigned long long)bytes); /* 2^e ≤ bytes < 2^(e+1) */
  size_t quarter = (size_t)1 << (e - 2);
  size_t steps = (bytes - ((size_t)1 << e) + quarter - 1) / quarter; /* 0..4 */
  *class_bytes = ((size_t)1 << e) + steps * quarter;
  return e * 4 + (int)steps;
}

static void trim_locked(void) {
  for (int c = 0; c < NCLASSES; c++) {
    while (free_list[c]) {
      pool_buf *b = free_list[c];
      free_list[c] = b->next;
      free(b);
    }
  }
  stats.cached_bytes = 0;
  stats.cached_buffers = 0;
  stats.trims++;
}

void kn_pool_trim(void) {
  pthread_mutex_lock(&lock);
  trim_locked();
  pthread_mutex_unlock(&lock);
}

static void *fresh(size_t bytes) {
  if (fail_above && bytes > fail_above) return NULL;
  void *p = malloc(bytes);
  if (!p) { /* memory pressure: give back what the pool holds and try once more */
    kn_pool_trim();
    p = malloc(bytes);
    if (!p) return NULL;
  }
  sg_advise_bulk(p, bytes);
  return p;
}

void *kn_pool_alloc(size_t bytes) {
  /* below a page, a failure means bookkeeping would fail next: sg_xmalloc aborts */
  if (bytes < KN_POOL_MIN) return sg_xmalloc(bytes);
  pthread_once(&once, init);
  size_t cb;
  int c = class_of(bytes, &cb);
  pthread_mutex_lock(&lock);
  pool_buf *b = c < NCLASSES ? free_list[c] : NULL;
  if (b) {
    UNPOISON(b, cb);
    free_list[c] = b->next;
    stats.cached_bytes -= cb;
    stats.cached_buffers--;
    stats.hits++;
  } else {
    stats.misses++;
  }
  pthread_mutex_unlock(&lock);
  return b ? (void *)b : fresh(cb);
}

void kn_pool_free(void *p, size_t bytes) {
  if (!p) return;
  if (bytes < KN_POOL_MIN) {
    free(p);
    return;
  }
  pthread_once(&once, init);
  size_t cb;
  int c = class_of(bytes, &cb);
  pthread_mutex_lock(&lock);
  bool keep = c < NCLASSES && cb <= bound / 4 && stats.cached_bytes + cb <= bound;
  if (keep) {
    pool_buf *b = p;
    b->next = free_list[c];
    free_list[c] = b;
    stats.cached_bytes += cb;
    stats.cached_buffers++;
    /* the link stays readable: LeakSanitizer follows it to the buffers kept */
    POISON((char *)p + sizeof *b, cb - sizeof *b);
  }
  pthread_mutex_unlock(&lock);
  if (!keep) free(p);
}

kn_pool_stats kn_pool_get_stats(void) {
  pthread_once(&once, init);
  pthread_mutex_lock(&lock);
  kn_pool_stats s = stats;
  s.bound_bytes = bound;
  pthread_mutex_unlock(&lock);
  return s;
}
