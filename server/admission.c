// SPDX-License-Identifier: Apache-2.0
/*
 * admission.c — which requests may start: the admin lane and the per-session limit.
 *
 * Lanes: Health, Version, Stats and Ping without a delay are the admin lane: they never
 * block, and grpc.c runs them on its completion-queue thread, so a daemon whose workers
 * are all busy with long requests still answers its health checks.
 *
 * Sessions: a caller may have at most max-session-requests requests running or queued
 * at once; one more is RESOURCE_EXHAUSTED naming the flag, answered at once. A caller
 * is a client session keyed as ownership keys it (handles.c): its `stagd-session`
 * name under its principal (the token's fingerprint), so one name under two tokens
 * is two callers. Calls without a session name count under their principal's
 * anonymous bucket with tokens, under their peer's host without, held to
 * max-unnamed-requests (larger: every process of a host that sends no session shares
 * the bucket), so leaving the name out does not escape a bound. Admin-lane calls do
 * not count.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sv.h"
#include "stagd.pb-c.h"

typedef struct session_count {
  char *key;
  uint64_t n;
} session_count;

struct sv_admission {
  pthread_mutex_t mu;
  sg_map counts; /* hash of the key → session_count */
  uint64_t limit;   /* per named session */
  uint64_t unnamed; /* per token or address, calls without a session */
};

sv_admission *sv_admission_new(uint64_t limit, uint64_t unnamed) {
  sv_admission *a = sg_xcalloc(1, sizeof *a);
  pthread_mutex_init(&a->mu, NULL);
  a->limit = limit;
  a->unnamed = unnamed;
  return a;
}

void sv_admission_free(sv_admission *a) {
  if (!a) return;
  void *v;
  for (size_t it = 0; sg_map_next(&a->counts, &it, NULL, &v);) {
    free(((session_count *)v)->key);
    free(v);
  }
  sg_map_free(&a->counts);
  pthread_mutex_destroy(&a->mu);
  free(a);
}

bool sv_admin_lane_reads_body(const sv_method *m) { return !strcmp(m->name, "Ping"); }

bool sv_admin_lane(const sv_method *m, const uint8_t *data, size_t len) {
  if (!strcmp(m->name, "Health.Check") || !strcmp(m->name, "Version") || !strcmp(m->name, "Stats")) return true;
  if (strcmp(m->name, "Ping")) return false;
  /* a Ping that waits is work like any other */
  Stagd__V1__PingRequest *q = stagd__v1__ping_request__unpack(NULL, len, data);
  bool quick = q && q->delay_ms == 0;
  if (q) stagd__v1__ping_request__free_unpacked(q, NULL);
  return quick;
}

/* The entry for key (created with n = 0 when create), under a->mu. Keyed by a 64-bit
 * hash of the session name: two names with one hash would share a count. */
static session_count *entry(sv_admission *a, const char *key, uint64_t *hash, bool create) {
  *hash = sg_hash_bytes(key, strlen(key), 0xad);
  void *v;
  if (sg_map_get(&a->counts, *hash, &v)) return v;
  if (!create) return NULL;
  session_count *c = sg_xcalloc(1, sizeof *c);
  c->key = sg_xstrdup(key);
  sg_map_put(&a->counts, *hash, c);
  return c;
}

/* "HOST" of gRPC's "ipv4:HOST:PORT" / "ipv6:[HOST]:PORT"; other peers (unix:PATH) whole. */
static size_t peer_host_len(const char *peer) {
  size_t n = strlen(peer);
  if (strncmp(peer, "ipv4:", 5) && strncmp(peer, "ipv6:", 5)) return n;
  const char *colon = strrchr(peer, ':');
  return colon && colon > peer + 4 ? (size_t)(colon - peer) : n;
}

sg_code sv_admission_enter(sv_admission *a, uint64_t principal, const char *session, const char *peer,
                           char **key, sg_error *err) {
  *key = NULL;
  uint64_t limit = session ? a->limit : a->unnamed;
  if (!limit) return SG_OK;
  sg_buf k = SG_BUF_INIT;
  if (session) sg_buf_printf(&k, "s%016llx:%s", (unsigned long long)principal, session);
  else if (principal) sg_buf_printf(&k, "p%016llx", (unsigned long long)principal);
  else if (peer) sg_buf_printf(&k, "h%.*s", (int)peer_host_len(peer), peer);
  else sg_buf_puts(&k, "h?");
  pthread_mutex_lock(&a->mu);
  uint64_t h;
  session_count *c = entry(a, k.data, &h, true);
  bool ok = c->n < limit;
  if (ok) c->n++;
  pthread_mutex_unlock(&a->mu);
  if (ok) {
    *key = sg_buf_detach(&k, NULL);
    return SG_OK;
  }
  if (session)
    sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                 "client session '%s' already has %llu requests running or queued, the limit "
                 "(max-session-requests)",
                 session, (unsigned long long)limit);
  else
    sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                 "calls without a stagd-session %s already have %llu requests running or queued, the "
                 "limit (max-unnamed-requests; send a session name per client)",
                 principal ? "under this token" : "from this address", (unsigned long long)limit);
  sg_buf_free(&k);
  return SG_RESOURCE_EXHAUSTED;
}

void sv_admission_leave(sv_admission *a, char *key) {
  if (!key) return;
  pthread_mutex_lock(&a->mu);
  uint64_t h;
  session_count *c = entry(a, key, &h, false);
  if (c && c->n > 0 && --c->n == 0) {
    sg_map_remove(&a->counts, h);
    free(c->key);
    free(c);
  }
  pthread_mutex_unlock(&a->mu);
  free(key);
}
