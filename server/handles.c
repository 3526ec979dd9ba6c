// SPDX-License-Identifier: Apache-2.0
/*
 * handles.c — the tensor handle store: eager clients keep tensors (and variables) in
 * the daemon and name them by id. Each handle belongs to a device ("cpu",
 * "vulkan:0"); per device the store counts live handles and tensor bytes and refuses
 * new ones past the configured limits (--max-handles, --max-handle-bytes; a device-
 * resident tensor counts its device buffer's bytes) with a
 * RESOURCE_EXHAUSTED error that names the limit, so a leaking notebook gets a clear
 * message, not an out-of-memory kill. Ids are "DEVICE#N" with N increasing per store,
 * never reused, so a released id stays invalid.
 *
 * One mutex guards the map; lookups retain the value, so a handle released while a
 * request uses it stays valid until that request ends.
 *
 * Sessions: a client that sends the `stagd-session` metadata owns the handles it makes.
 * Each of its calls renews the session; sv_handles_end_session releases them at once
 * (the client's exit), and sv_handles_expire releases the handles of every session not
 * renewed within the lease (a killed notebook kernel), so they do not stay until the
 * daemon stops. Handles made without a session never expire.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "handles.h"

enum { MAX_DEVICES = 64 };

typedef struct dev_usage {
  char name[32];
  uint64_t count, bytes;
} dev_usage;

typedef struct entry {
  gr_value *v;
  uint64_t bytes;
  int dev;
  int session; /* index in sessions, -1: none */
  uint64_t n;  /* the N of its id (the map key) */
} entry;

typedef struct sv_session {
  char name[SV_SESSION_MAX + 1]; /* "" when the slot is free */
  uint64_t last_ns;              /* last renewal, sg_now_ns() */
  uint64_t handles;
} sv_session;

struct sv_handles {
  pthread_mutex_t lock;
  sg_map map; /* N → entry* */
  uint64_t next;
  uint64_t max_bytes, max_count;
  dev_usage devs[MAX_DEVICES];
  int ndevs;
  sv_session *sessions;
  int nsessions;
  uint64_t expired; /* handles released by expired leases, since start */
};

sv_handles *sv_handles_new(uint64_t max_bytes, uint64_t max_count) {
  sv_handles *h = sg_xcalloc(1, sizeof *h);
  pthread_mutex_init(&h->lock, NULL);
  /* Ids count up from a random start, so that no two daemons (replicas behind a load
   * balancer, a restarted daemon) hand out the same id: a session moved elsewhere gets
   * NOT_FOUND for its old handles, never another session's tensor. */
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = sg_now_ns() ^ (uint64_t)getpid() << 32;
  h->next = 1 + (r & ((1ULL << 40) - 1));
  h->max_bytes = max_bytes;
  h->max_count = max_count;
  return h;
}

void sv_handles_free(sv_handles *h) {
  if (!h) return;
  uint64_t k;
  void *v;
  for (size_t it = 0; sg_map_next(&h->map, &it, &k, &v);) {
    entry *e = v;
    gr_value_release(e->v);
    free(e);
  }
  sg_map_free(&h->map);
  free(h->sessions);
  pthread_mutex_destroy(&h->lock);
  free(h);
}

static int device_slot(sv_handles *h, const char *device) {
  for (int i = 0; i < h->ndevs; i++)
    if (!strcmp(h->devs[i].name, device)) return i;
  if (h->ndevs == MAX_DEVICES || strlen(device) >= sizeof h->devs[0].name) return -1;
  snprintf(h->devs[h->ndevs].name, sizeof h->devs[0].name, "%s", device);
  return h->ndevs++;
}

/* The slot of session `name`, renewed at `now`; created when absent if `create`;
 * -1 for none. */
static int session_slot(sv_handles *h, const char *name, uint64_t now, bool create) {
  if (!name || !*name) return -1;
  int free_slot = -1;
  for (int i = 0; i < h->nsessions; i++) {
    if (!strcmp(h->sessions[i].name, name)) {
      h->sessions[i].last_ns = now;
      return i;
    }
    if (!h->sessions[i].name[0] && free_slot < 0) free_slot = i;
  }
  if (!create) return -1;
  if (free_slot < 0) {
    h->sessions = sg_xrealloc(h->sessions, (size_t)(h->nsessions + 1) * sizeof *h->sessions);
    free_slot = h->nsessions++;
  }
  sv_session *se = &h->sessions[free_slot];
  snprintf(se->name, sizeof se->name, "%s", name);
  se->last_ns = now;
  se->handles = 0;
  return free_slot;
}

bool sv_session_name_ok(const char *name, sg_error *err) {
  size_t n = strlen(name);
  bool ok = n >= 1 && n <= SV_SESSION_MAX;
  for (size_t i = 0; ok && i < n; i++)
    ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
         (name[i] >= '0' && name[i] <= '9') || name[i] == '-' || name[i] == '_';
  if (!ok)
    sg_error_set(err, SG_INVALID_ARGUMENT,
                 "the stagd-session metadata must be 1 to %d letters, digits, '-' or '_'", SV_SESSION_MAX);
  return ok;
}

void sv_handles_touch(sv_handles *h, const char *session, uint64_t now) {
  pthread_mutex_lock(&h->lock);
  session_slot(h, session, now, false); /* a session exists once it holds a handle */
  pthread_mutex_unlock(&h->lock);
}

/* The limit check of one more handle of `bytes` on device slot d (lock held). */
static sg_code room(sv_handles *h, int d, const char *device, uint64_t bytes, sg_error *err) {
  sg_code rc = SG_OK;
  if (d < 0) {
    rc = sg_error_set(err, SG_INVALID_ARGUMENT, "device name '%s' is not one the daemon serves", device);
  } else if (h->devs[d].count + 1 > h->max_count) {
    rc = sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                      "%s already holds %llu tensor handles, the limit (--max-handles); release tensors "
                      "you no longer need (del t, or let them go out of scope)",
                      device, (unsigned long long)h->devs[d].count);
  } else if (h->devs[d].bytes + bytes > h->max_bytes) {
    rc = sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                      "a %llu-byte tensor on %s would exceed the handle memory limit of %llu bytes "
                      "(--max-handle-bytes; %llu bytes held now); release tensors you no longer need",
                      (unsigned long long)bytes, device, (unsigned long long)h->max_bytes,
                      (unsigned long long)h->devs[d].bytes);
  }
  return rc;
}

sg_code sv_handles_check_room(sv_handles *h, const char *device, uint64_t bytes, sg_error *err) {
  pthread_mutex_lock(&h->lock);
  sg_code rc = room(h, device_slot(h, device), device, bytes, err);
  pthread_mutex_unlock(&h->lock);
  return rc;
}

sg_code sv_handles_put(sv_handles *h, const char *device, const char *session, gr_value *v, char *id_out,
                       size_t cap, sg_error *err) {
  if (gr_value_escape(v, err)) { /* variables inside it now outlive their request */
    gr_value_release(v);
    return err->code;
  }
  uint64_t bytes = gr_value_bytes(v); /* device bytes for a device-resident tensor */
  pthread_mutex_lock(&h->lock);
  int d = device_slot(h, device);
  sg_code rc = room(h, d, device, bytes, err);
  if (rc) {
    pthread_mutex_unlock(&h->lock);
    gr_value_release(v);
    return rc;
  }
  entry *e = sg_xmalloc(sizeof *e);
  e->v = v;
  e->bytes = bytes;
  e->dev = d;
  e->session = session_slot(h, session, sg_now_ns(), true);
  if (e->session >= 0) h->sessions[e->session].handles++;
  uint64_t n = h->next++;
  e->n = n;
  sg_map_put(&h->map, n, e);
  h->devs[d].count++;
  h->devs[d].bytes += bytes;
  pthread_mutex_unlock(&h->lock);
  snprintf(id_out, cap, "%s#%llu", device, (unsigned long long)n);
  return SG_OK;
}

/* "DEVICE#N" → N; 0 when malformed. */
static uint64_t id_number(const char *id) {
  const char *hash = strrchr(id, '#');
  if (!hash || !hash[1]) return 0;
  char *end;
  unsigned long long n = strtoull(hash + 1, &end, 10);
  return *end ? 0 : (uint64_t)n;
}

gr_value *sv_handles_get(sv_handles *h, const char *id, const char **device, sg_error *err) {
  uint64_t n = id_number(id);
  void *v = NULL;
  pthread_mutex_lock(&h->lock);
  bool found = n && sg_map_get(&h->map, n, &v);
  entry *e = v;
  /* the device part must match too: "cpu#3" never names vulkan:0's handle 3 */
  if (found && (strncmp(id, h->devs[e->dev].name, strlen(h->devs[e->dev].name)) != 0 ||
                id[strlen(h->devs[e->dev].name)] != '#'))
    found = false;
  gr_value *r = found ? gr_value_retain(e->v) : NULL;
  if (found && device) *device = h->devs[e->dev].name;
  pthread_mutex_unlock(&h->lock);
  if (!r)
    sg_error_set(err, SG_NOT_FOUND, n ? "tensor handle '%s' was released (or never existed in this daemon: a restarted "
                                        "daemon, or a load balancer that moved the session to another replica, "
                                        "has none of the session's tensors)"
                                      : "'%s' is not a tensor handle id (expected DEVICE#N)",
                 id);
  return r;
}

/* Takes a removed entry off the per-device and per-session counts (lock held). */
static void forget(sv_handles *h, entry *e) {
  h->devs[e->dev].count--;
  h->devs[e->dev].bytes -= e->bytes;
  if (e->session >= 0) h->sessions[e->session].handles--;
}

bool sv_handles_release(sv_handles *h, const char *id) {
  uint64_t n = id_number(id);
  void *v = NULL;
  pthread_mutex_lock(&h->lock);
  bool found = n && sg_map_get(&h->map, n, &v);
  if (found) {
    sg_map_remove(&h->map, n);
    forget(h, v);
  }
  pthread_mutex_unlock(&h->lock);
  if (found) {
    entry *e = v;
    gr_value_release(e->v);
    free(e);
  }
  return found;
}

/* Releases every handle of the sessions marked in `drop` and frees their slots; the
 * number of handles released. Called with the lock held, returns with it dropped
 * (values are released outside it); frees `drop`. */
static uint64_t release_sessions(sv_handles *h, bool *drop) {
  entry **gone = NULL;
  size_t n = 0, cap = 0;
  uint64_t k;
  void *v;
  for (size_t it = 0; sg_map_next(&h->map, &it, &k, &v);) {
    entry *e = v;
    if (e->session < 0 || !drop[e->session]) continue;
    if (n == cap) gone = sg_xrealloc(gone, (cap = cap ? 2 * cap : 16) * sizeof *gone);
    gone[n++] = e;
  }
  for (size_t i = 0; i < n; i++) {
    sg_map_remove(&h->map, gone[i]->n);
    forget(h, gone[i]);
  }
  for (int i = 0; i < h->nsessions; i++)
    if (drop[i]) h->sessions[i].name[0] = '\0';
  pthread_mutex_unlock(&h->lock);
  for (size_t i = 0; i < n; i++) {
    gr_value_release(gone[i]->v);
    free(gone[i]);
  }
  free(gone);
  free(drop);
  return n;
}

uint64_t sv_handles_end_session(sv_handles *h, const char *name) {
  pthread_mutex_lock(&h->lock);
  bool *drop = sg_xcalloc((size_t)h->nsessions + 1, sizeof *drop);
  for (int i = 0; i < h->nsessions; i++) drop[i] = h->sessions[i].name[0] && !strcmp(h->sessions[i].name, name);
  return release_sessions(h, drop);
}

uint64_t sv_handles_expire(sv_handles *h, uint64_t now, uint64_t lease_ns, int *sessions_out) {
  pthread_mutex_lock(&h->lock);
  bool *drop = sg_xcalloc((size_t)h->nsessions + 1, sizeof *drop);
  int nd = 0;
  for (int i = 0; i < h->nsessions; i++)
    if (h->sessions[i].name[0] && now > h->sessions[i].last_ns && now - h->sessions[i].last_ns > lease_ns)
      drop[i] = true, nd++;
  if (sessions_out) *sessions_out = nd;
  if (!nd) {
    pthread_mutex_unlock(&h->lock);
    free(drop);
    return 0;
  }
  uint64_t n = release_sessions(h, drop);
  pthread_mutex_lock(&h->lock);
  h->expired += n;
  pthread_mutex_unlock(&h->lock);
  return n;
}

uint64_t sv_handles_session_count(sv_handles *h, const char *name, int *live_sessions, uint64_t *expired) {
  pthread_mutex_lock(&h->lock);
  uint64_t n = 0;
  int live = 0;
  for (int i = 0; i < h->nsessions; i++) {
    if (!h->sessions[i].name[0]) continue;
    live++;
    if (name && !strcmp(h->sessions[i].name, name)) n = h->sessions[i].handles;
  }
  if (live_sessions) *live_sessions = live;
  if (expired) *expired = h->expired;
  pthread_mutex_unlock(&h->lock);
  return n;
}

void sv_handles_stats(sv_handles *h, uint64_t *count, uint64_t *bytes) {
  pthread_mutex_lock(&h->lock);
  *count = *bytes = 0;
  for (int i = 0; i < h->ndevs; i++) {
    *count += h->devs[i].count;
    *bytes += h->devs[i].bytes;
  }
  pthread_mutex_unlock(&h->lock);
}

bool sv_handles_device_stats(sv_handles *h, int i, char *name, size_t cap, uint64_t *count, uint64_t *bytes) {
  pthread_mutex_lock(&h->lock);
  bool ok = i >= 0 && i < h->ndevs;
  if (ok) {
    snprintf(name, cap, "%s", h->devs[i].name);
    *count = h->devs[i].count;
    *bytes = h->devs[i].bytes;
  }
  pthread_mutex_unlock(&h->lock);
  return ok;
}
