// SPDX-License-Identifier: Apache-2.0
/*
 * pool.c — a fixed set of worker threads fed by a FIFO queue. Transports hand
 * decoded requests to the pool so neither the event loop nor the gRPC
 * completion-queue thread runs a handler that may block (the gRPC admin lane's quick
 * calls are the exception, grpc.c).
 */
#include <pthread.h>
#include <stdlib.h>

#include "sv.h"

typedef struct job {
  struct job *next;
  sv_job_fn fn;
  void *arg;
} job;

struct sv_pool {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  job *head, *tail;
  bool stopping;
  int n_threads;
  pthread_t *threads;
};

static void *worker_main(void *arg) {
  sv_pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    while (!p->head && !p->stopping) pthread_cond_wait(&p->cv, &p->mu);
    job *j = p->head;
    if (!j) { /* stopping and drained */
      pthread_mutex_unlock(&p->mu);
      return NULL;
    }
    p->head = j->next;
    if (!p->head) p->tail = NULL;
    pthread_mutex_unlock(&p->mu);
    j->fn(j->arg);
    free(j);
  }
}

sv_pool *sv_pool_create(int threads) {
  sv_pool *p = sg_xcalloc(1, sizeof *p);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  p->threads = sg_xcalloc((size_t)threads, sizeof *p->threads);
  for (int i = 0; i < threads; i++) {
    if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0) break;
    p->n_threads++;
  }
  if (p->n_threads == 0) SG_ERROR(0, "could not start any worker thread");
  return p;
}

void sv_pool_submit(sv_pool *p, sv_job_fn fn, void *arg) {
  if (p->n_threads == 0) { /* no thread could be started: run it here, slower but correct */
    fn(arg);
    return;
  }
  job *j = sg_xmalloc(sizeof *j);
  j->next = NULL;
  j->fn = fn;
  j->arg = arg;
  pthread_mutex_lock(&p->mu);
  if (p->tail) p->tail->next = j;
  else p->head = j;
  p->tail = j;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
}

void sv_pool_destroy(sv_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stopping = true;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  free(p->threads);
  free(p);
}
