// SPDX-License-Identifier: Apache-2.0
/*
 * session_memory.c — the per-session memory budget (--max-session-bytes): one client
 * session's handles and the tensors of all its running requests together.
 *
 * Each request's watch (common/watch.c) charges its tensors to its session's share as
 * well as to its own budget; the executor checks both after every instruction. The
 * share lives while the session has requests running: the first one creates it, the
 * last one frees it. Sessions are keyed as ownership keys them (handles.c): the name
 * under the principal, calls without a name in one anonymous bucket per principal.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "handles.h"
#include "sv.h"

typedef struct mem_entry {
  sg_share share; /* first: a share is its entry */
  uint64_t key;
  uint64_t users; /* requests running with it */
} mem_entry;

struct sv_session_memory {
  pthread_mutex_t mu;
  sg_map shares; /* key → mem_entry */
  uint64_t max;
};

sv_session_memory *sv_session_memory_new(uint64_t max) {
  sv_session_memory *m = sg_xcalloc(1, sizeof *m);
  pthread_mutex_init(&m->mu, NULL);
  m->max = max;
  return m;
}

void sv_session_memory_free(sv_session_memory *m) {
  if (!m) return;
  void *v;
  for (size_t it = 0; sg_map_next(&m->shares, &it, NULL, &v);) free(v);
  sg_map_free(&m->shares);
  pthread_mutex_destroy(&m->mu);
  free(m);
}

/* 64 bits of (principal, name): two sessions with one hash would share a budget. */
static uint64_t key_of(const sv_owner *who) {
  const char *name = who && who->session ? who->session : "";
  uint64_t principal = who ? who->principal : 0;
  return sg_hash_bytes(name, strlen(name), principal ^ 0x5e55);
}

sg_share *sv_session_memory_enter(sv_session_memory *m, const sv_owner *who) {
  if (!m || !m->max) return NULL;
  uint64_t k = key_of(who);
  pthread_mutex_lock(&m->mu);
  void *v;
  mem_entry *e;
  if (sg_map_get(&m->shares, k, &v)) {
    e = v;
  } else {
    e = sg_xcalloc(1, sizeof *e);
    atomic_init(&e->share.live, 0);
    e->share.max = m->max;
    e->share.flag = "max-session-bytes";
    e->key = k;
    sg_map_put(&m->shares, k, e);
  }
  e->users++;
  pthread_mutex_unlock(&m->mu);
  return &e->share;
}

void sv_session_memory_leave(sv_session_memory *m, sg_share *s) {
  if (!s) return;
  mem_entry *e = (mem_entry *)s;
  pthread_mutex_lock(&m->mu);
  if (--e->users == 0) {
    sg_map_remove(&m->shares, e->key);
    free(e);
  }
  pthread_mutex_unlock(&m->mu);
}
