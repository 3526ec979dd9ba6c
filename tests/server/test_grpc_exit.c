// SPDX-License-Identifier: Apache-2.0
/*
 * test_grpc_exit.c — a thread that used OpenSSL and ends while the process exits
 * frees its OpenSSL state (sv_grpc_library_init, grpc/grpc#38539: gRPC's threads
 * can outlive grpc_shutdown and end during exit).
 *
 * A worker thread allocates its OpenSSL error queue, then waits. An exit handler
 * registered before OpenSSL is first used runs after any handler OpenSSL registers
 * (exit handlers run in reverse order): it lets the worker end, joins it, and checks
 * that every block the worker allocated through OpenSSL was freed. With OpenSSL's own
 * exit cleanup the worker's thread key is gone by then and its state is never freed.
 */
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <grpc/grpc.h>

#include "transport.h"

enum { MAX_BLOCKS = 256 };

static pthread_mutex_t blocks_mu = PTHREAD_MUTEX_INITIALIZER;
static void *blocks[MAX_BLOCKS]; /* live blocks the worker allocated */
static size_t n_blocks, n_recorded;
static _Thread_local bool in_worker;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool started, may_end;
static pthread_t worker;

static void record(void *p) {
  pthread_mutex_lock(&blocks_mu);
  if (n_blocks < MAX_BLOCKS) blocks[n_blocks++] = p, n_recorded++;
  pthread_mutex_unlock(&blocks_mu);
}

/* Whether p was a tracked block (no longer tracked). */
static bool forget(void *p) {
  bool found = false;
  pthread_mutex_lock(&blocks_mu);
  for (size_t i = 0; i < n_blocks && !found; i++)
    if (blocks[i] == p) blocks[i] = blocks[--n_blocks], found = true;
  pthread_mutex_unlock(&blocks_mu);
  return found;
}

static void *tracking_malloc(size_t n, const char *file, int line) {
  (void)file, (void)line;
  void *p = malloc(n);
  if (p && in_worker) record(p);
  return p;
}

static void *tracking_realloc(void *p, size_t n, const char *file, int line) {
  (void)file, (void)line;
  if (p && n == 0) {
    forget(p);
    free(p);
    return NULL;
  }
  bool tracked = p && forget(p);
  void *q = realloc(p, n);
  if (q ? tracked || (!p && in_worker) : tracked) record(q ? q : p);
  return q;
}

static void tracking_free(void *p, const char *file, int line) {
  (void)file, (void)line;
  if (p) forget(p);
  free(p);
}

static void *work(void *arg) {
  (void)arg;
  in_worker = true;
  ERR_clear_error(); /* allocates this thread's error queue */
  pthread_mutex_lock(&mu);
  started = true;
  pthread_cond_broadcast(&cv);
  while (!may_end) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  return NULL; /* OpenSSL's thread-exit handler frees the queue, if its key still exists */
}

static void end_worker_and_check(void) {
  pthread_mutex_lock(&mu);
  may_end = true;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  pthread_join(worker, NULL);
  if (n_blocks) {
    fprintf(stderr, "FAIL: %zu of the %zu blocks the worker allocated through OpenSSL were "
                    "not freed when it ended during exit\n", n_blocks, n_recorded);
    _exit(1);
  }
  printf("ok: the worker's %zu OpenSSL blocks were freed when it ended during exit\n", n_recorded);
}

int main(void) {
  if (!CRYPTO_set_mem_functions(tracking_malloc, tracking_realloc, tracking_free)) {
    fprintf(stderr, "FAIL: OpenSSL allocated before main; its blocks cannot be tracked\n");
    return 1;
  }
  atexit(end_worker_and_check); /* before OpenSSL's first use: runs after its handler */
  sv_grpc_library_init();
  ERR_clear_error(); /* OpenSSL's global error tables: only the worker's own state is tracked */
  pthread_create(&worker, NULL, work, NULL);
  pthread_mutex_lock(&mu);
  while (!started) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  if (!n_recorded) {
    fprintf(stderr, "FAIL: the worker allocated nothing through OpenSSL; the test proves nothing\n");
    return 1;
  }
  grpc_shutdown();
  return 0;
}
