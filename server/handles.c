// SPDX-License-Identifier: Apache-2.0
/*
 * handles.c — the tensor handle store: eager clients keep tensors (and variables) in
 * the daemon and name them by id. Each handle belongs to a device ("cpu",
 * "vulkan:0"); per device the store counts live handles and tensor bytes and refuses
 * new ones past the configured limits (--max-handles, --max-handle-bytes; a device-
 * resident tensor counts its device buffer's bytes) with a
 * RESOURCE_EXHAUSTED error that names the limit, so a leaking notebook gets a clear
 * message, not an out-of-memory kill. Ids are "DEVICE#" and 32 hex digits: 128 bits
 * from getrandom, so no client can guess another's id (and a released id, or one from
 * another replica or an earlier daemon, stays invalid).
 *
 * One mutex guards the map; lookups retain the value, so a handle released while a
 * request uses it stays valid until that request ends.
 *
 * Ownership (docs/security.md): a handle belongs to the session that made it — its
 * `stagd-session` name together with the principal (the fingerprint of the bearer token
 * the call authenticated with, 0 without --auth-token-file). Calls without a session
 * share one anonymous bucket per principal. Any other caller gets NOT_FOUND, the same
 * answer as for an id that never existed, so ids reveal nothing; an owner may grant a
 * Variable to another session name (sv_handles_grant). Each session (and each anonymous
 * bucket) may hold at most max_session_bytes over all devices, so one client cannot
 * starve the others of the global --max-handle-bytes.
 *
 * Sessions: a client that sends the `stagd-session` metadata owns the handles it makes.
 * Each of its calls renews the session; sv_handles_end_session releases them at once
 * (the client's exit), and sv_handles_expire releases the handles of every session not
 * renewed within the lease (a killed notebook kernel), so they do not stay until the
 * daemon stops. Handles made without a session never expire.
 */
#include <errno.h>
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
  int session;     /* index in sessions (the owner) */
  uint64_t n, tag; /* the id's 128 bits: n is the map key, tag the rest */
  char **grants;   /* session names it is granted to */
  int ngrants;
} entry;

/* The anonymous bucket's name: not a valid session name, so no client can claim it. */
#define ANON "*"

typedef struct sv_session {
  char name[SV_SESSION_MAX + 1]; /* "" when the slot is free */
  uint64_t principal;
  uint64_t last_ns;              /* last renewal, sg_now_ns() */
  uint64_t handles, bytes;
} sv_session;

struct sv_handles {
  pthread_mutex_t lock;
  sg_map map; /* n → entry* */
  uint64_t max_bytes, max_count, max_session_bytes;
  dev_usage devs[MAX_DEVICES];
  int ndevs;
  sv_session *sessions;
  int nsessions;
  uint64_t expired; /* handles released by expired leases, since start */
};

sv_handles *sv_handles_new(uint64_t max_bytes, uint64_t max_count, uint64_t max_session_bytes) {
  sv_handles *h = sg_xcalloc(1, sizeof *h);
  pthread_mutex_init(&h->lock, NULL);
  h->max_bytes = max_bytes;
  h->max_count = max_count;
  h->max_session_bytes = max_session_bytes;
  return h;
}

static void free_entry(entry *e) {
  gr_value_release(e->v);
  for (int i = 0; i < e->ngrants; i++) free(e->grants[i]);
  free(e->grants);
  free(e);
}

/* 128 random bits for a new id (getrandom blocks only before the kernel's pool is
 * seeded at boot; it never fails afterwards, short of a signal, which is retried). */
static void random_id(uint64_t *n, uint64_t *tag) {
  uint64_t r[2];
  size_t got = 0;
  while (got < sizeof r) {
    ssize_t k = getrandom((char *)r + got, sizeof r - got, 0);
    if (k > 0) got += (size_t)k;
    else if (k < 0 && errno != EINTR) abort(); /* no randomness: never hand out guessable ids */
  }
  *n = r[0] ? r[0] : 1; /* 0 marks a malformed id */
  *tag = r[1];
}

void sv_handles_free(sv_handles *h) {
  if (!h) return;
  uint64_t k;
  void *v;
  for (size_t it = 0; sg_map_next(&h->map, &it, &k, &v);) free_entry(v);
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

static const char *owner_name(const sv_owner *who) { return who && who->session ? who->session : ANON; }
static uint64_t owner_principal(const sv_owner *who) { return who ? who->principal : 0; }

/* The slot of `who`'s session (the anonymous bucket without a session name), renewed at
 * `now`; created when absent if `create`; -1 for none. */
static int session_slot(sv_handles *h, const sv_owner *who, uint64_t now, bool create) {
  const char *name = owner_name(who);
  uint64_t principal = owner_principal(who);
  int free_slot = -1;
  for (int i = 0; i < h->nsessions; i++) {
    if (h->sessions[i].name[0] && h->sessions[i].principal == principal && !strcmp(h->sessions[i].name, name)) {
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
  se->principal = principal;
  se->last_ns = now;
  se->handles = se->bytes = 0;
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

void sv_handles_touch(sv_handles *h, const sv_owner *who, uint64_t now) {
  if (!who || !who->session) return;
  pthread_mutex_lock(&h->lock);
  session_slot(h, who, now, false); /* a session exists once it holds a handle */
  pthread_mutex_unlock(&h->lock);
}

/* The limit check of one more handle of `bytes` on device slot d for session slot s
 * (-1: not opened yet, holds nothing) (lock held). */
static sg_code room(sv_handles *h, int d, int s, const char *device, uint64_t bytes, sg_error *err) {
  uint64_t held = s >= 0 ? h->sessions[s].bytes : 0;
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
  } else if (held + bytes > h->max_session_bytes) {
    rc = sg_error_set(err, SG_RESOURCE_EXHAUSTED,
                      "a %llu-byte tensor would exceed this session's handle memory limit of %llu bytes "
                      "(--max-session-handle-bytes; %llu bytes held by the session now); release tensors "
                      "you no longer need",
                      (unsigned long long)bytes, (unsigned long long)h->max_session_bytes,
                      (unsigned long long)held);
  }
  return rc;
}

uint64_t sv_handles_session_bytes(sv_handles *h, const sv_owner *who) {
  pthread_mutex_lock(&h->lock);
  int s = session_slot(h, who, sg_now_ns(), false);
  uint64_t bytes = s >= 0 ? h->sessions[s].bytes : 0;
  pthread_mutex_unlock(&h->lock);
  return bytes;
}

sg_code sv_handles_check_room(sv_handles *h, const char *device, const sv_owner *who, uint64_t bytes, sg_error *err) {
  pthread_mutex_lock(&h->lock);
  int s = session_slot(h, who, sg_now_ns(), false);
  sg_code rc = room(h, device_slot(h, device), s, device, bytes, err);
  pthread_mutex_unlock(&h->lock);
  return rc;
}

static bool parse_id(const char *id, uint64_t *n, uint64_t *tag);

/* Stores v under `want` (a client-chosen id; NULL: a fresh random one) — see handles.h. */
static sg_code put_as(sv_handles *h, const char *device, const sv_owner *who, gr_value *v, const char *want,
                      char *id_out, size_t cap, sg_error *err) {
  uint64_t wn = 0, wtag = 0;
  size_t dl = strlen(device);
  if (want && (!parse_id(want, &wn, &wtag) || strncmp(want, device, dl) != 0 || want[dl] != '#')) {
    gr_value_release(v);
    return sg_error_set(err, SG_INVALID_ARGUMENT,
                        "result id '%s' is not DEVICE#HEX for device %s (32 hex digits, not all zero in "
                        "the first 16)", want, device);
  }
  if (gr_value_escape(v, err)) { /* variables inside it now outlive their request */
    gr_value_release(v);
    return err->code;
  }
  uint64_t bytes = gr_value_bytes(v); /* device bytes for a device-resident tensor */
  pthread_mutex_lock(&h->lock);
  int d = device_slot(h, device);
  uint64_t now = sg_now_ns();
  int s = session_slot(h, who, now, false);
  void *taken;
  sg_code rc = want && sg_map_get(&h->map, wn, &taken)
                   ? sg_error_set(err, SG_ALREADY_EXISTS, "result id '%s' is already in use (ids are 128 random "
                                  "bits chosen by the client, each used once)", want)
                   : room(h, d, s, device, bytes, err);
  if (rc) {
    pthread_mutex_unlock(&h->lock);
    gr_value_release(v);
    return rc;
  }
  entry *e = sg_xcalloc(1, sizeof *e);
  e->v = v;
  e->bytes = bytes;
  e->dev = d;
  e->session = session_slot(h, who, now, true);
  h->sessions[e->session].handles++;
  h->sessions[e->session].bytes += bytes;
  if (want) {
    e->n = wn;
    e->tag = wtag;
  } else {
    do random_id(&e->n, &e->tag);
    while (sg_map_get(&h->map, e->n, &taken));
  }
  sg_map_put(&h->map, e->n, e);
  h->devs[d].count++;
  h->devs[d].bytes += bytes;
  pthread_mutex_unlock(&h->lock);
  if (id_out) snprintf(id_out, cap, "%s#%016llx%016llx", device, (unsigned long long)e->n, (unsigned long long)e->tag);
  return SG_OK;
}

sg_code sv_handles_put(sv_handles *h, const char *device, const sv_owner *who, gr_value *v, char *id_out,
                       size_t cap, sg_error *err) {
  return put_as(h, device, who, v, NULL, id_out, cap, err);
}

sg_code sv_handles_put_as(sv_handles *h, const char *device, const sv_owner *who, gr_value *v, const char *id,
                          sg_error *err) {
  return put_as(h, device, who, v, id, NULL, 0, err);
}

/* Each byte's value as a lowercase hex digit, plus one; 0 for any other byte. */
static const unsigned char HEX_PLUS_1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
};

/* "DEVICE#" + 32 hex digits → its two halves; false when malformed. Every id of every
 * op goes through here (a few times per eager op): a table, no branch per digit. */
static bool parse_id(const char *id, uint64_t *n, uint64_t *tag) {
  const char *hash = strrchr(id, '#');
  if (!hash || strlen(hash + 1) != 32) return false;
  const unsigned char *d = (const unsigned char *)hash + 1;
  uint64_t w[2] = {0, 0};
  unsigned bad = 0;
  for (int half = 0; half < 2; half++)
    for (int i = 0; i < 16; i++) {
      unsigned x = HEX_PLUS_1[d[16 * half + i]];
      bad |= x == 0;
      w[half] = w[half] << 4 | (uint64_t)((x - 1) & 15);
    }
  if (bad) return false;
  *n = w[0];
  *tag = w[1];
  return *n != 0;
}

/* The live entry named by the whole id — device part and all 128 bits — or NULL (lock
 * held). "cpu#X" never names vulkan:0's handle X. */
static entry *lookup(sv_handles *h, const char *id) {
  uint64_t n, tag;
  void *v;
  if (!parse_id(id, &n, &tag) || !sg_map_get(&h->map, n, &v)) return NULL;
  entry *e = v;
  size_t dl = strlen(h->devs[e->dev].name);
  if (e->tag != tag || strncmp(id, h->devs[e->dev].name, dl) != 0 || id[dl] != '#') return NULL;
  return e;
}

/* Whether `who` owns e (lock held). */
static bool owns(sv_handles *h, const entry *e, const sv_owner *who) {
  const sv_session *se = &h->sessions[e->session];
  return se->principal == owner_principal(who) && !strcmp(se->name, owner_name(who));
}

/* Whether `who` may use e: its own, or granted to its session name (lock held). */
static bool visible(sv_handles *h, const entry *e, const sv_owner *who) {
  if (owns(h, e, who)) return true;
  for (int i = 0; who && who->session && i < e->ngrants; i++)
    if (!strcmp(e->grants[i], who->session)) return true;
  return false;
}

static sg_code not_found(sg_error *err, const char *id) {
  uint64_t n, tag;
  return sg_error_set(err, SG_NOT_FOUND,
                      parse_id(id, &n, &tag)
                          ? "tensor handle '%s' was released or is not this session's (or never existed in "
                            "this daemon: a restarted daemon, or a load balancer that moved the session to "
                            "another replica, has none of the session's tensors)"
                          : "'%s' is not a tensor handle id (expected DEVICE#HEX)",
                      id);
}

gr_value *sv_handles_get(sv_handles *h, const sv_owner *who, const char *id, const char **device, sg_error *err) {
  pthread_mutex_lock(&h->lock);
  entry *e = lookup(h, id);
  gr_value *r = e && visible(h, e, who) ? gr_value_retain(e->v) : NULL;
  if (r && device) *device = h->devs[e->dev].name;
  pthread_mutex_unlock(&h->lock);
  if (!r) not_found(err, id);
  return r;
}

sg_code sv_handles_grant(sv_handles *h, const sv_owner *who, const char *id, const char *to, sg_error *err) {
  if (!sv_session_name_ok(to, err)) return sg_error_prefix(err, SG_INVALID_ARGUMENT, "grant to '%.80s'", to);
  pthread_mutex_lock(&h->lock);
  entry *e = lookup(h, id);
  sg_code rc = SG_OK;
  if (!e || !owns(h, e, who)) {
    rc = not_found(err, id);
  } else if (gr_value_kind_of(e->v) != GR_VALUE_VARIABLE) {
    rc = sg_error_set(err, SG_INVALID_ARGUMENT,
                      "'%s' is a tensor, not a Variable: only Variables are shared across sessions "
                      "(a tensor can be copied with Fetch and Put)",
                      id);
  } else {
    bool have = false;
    for (int i = 0; i < e->ngrants && !have; i++) have = !strcmp(e->grants[i], to);
    if (!have) {
      e->grants = sg_xrealloc(e->grants, (size_t)(e->ngrants + 1) * sizeof *e->grants);
      e->grants[e->ngrants++] = sg_xstrdup(to);
    }
  }
  pthread_mutex_unlock(&h->lock);
  return rc;
}

/* Takes a removed entry off the per-device and per-session counts (lock held). */
static void forget(sv_handles *h, entry *e) {
  h->devs[e->dev].count--;
  h->devs[e->dev].bytes -= e->bytes;
  h->sessions[e->session].handles--;
  h->sessions[e->session].bytes -= e->bytes;
}

bool sv_handles_release(sv_handles *h, const sv_owner *who, const char *id) {
  pthread_mutex_lock(&h->lock);
  entry *e = lookup(h, id);
  if (e && !owns(h, e, who)) e = NULL; /* a grantee uses it, only its owner releases it */
  if (e) {
    sg_map_remove(&h->map, e->n);
    forget(h, e);
  }
  pthread_mutex_unlock(&h->lock);
  if (e) free_entry(e);
  return e != NULL;
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
    if (!drop[e->session]) continue;
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
  for (size_t i = 0; i < n; i++) free_entry(gone[i]);
  free(gone);
  free(drop);
  return n;
}

uint64_t sv_handles_end_session(sv_handles *h, const sv_owner *who) {
  if (!who || !who->session) return 0;
  pthread_mutex_lock(&h->lock);
  bool *drop = sg_xcalloc((size_t)h->nsessions + 1, sizeof *drop);
  int s = session_slot(h, who, sg_now_ns(), false);
  if (s >= 0) drop[s] = true;
  return release_sessions(h, drop);
}

uint64_t sv_handles_expire(sv_handles *h, uint64_t now, uint64_t lease_ns, int *sessions_out) {
  pthread_mutex_lock(&h->lock);
  bool *drop = sg_xcalloc((size_t)h->nsessions + 1, sizeof *drop);
  int nd = 0;
  for (int i = 0; i < h->nsessions; i++)
    if (h->sessions[i].name[0] && strcmp(h->sessions[i].name, ANON) != 0 && now > h->sessions[i].last_ns &&
        now - h->sessions[i].last_ns > lease_ns)
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

uint64_t sv_handles_session_count(sv_handles *h, const sv_owner *who, int *live_sessions, uint64_t *expired) {
  pthread_mutex_lock(&h->lock);
  uint64_t n = 0;
  int live = 0;
  for (int i = 0; i < h->nsessions; i++)
    if (h->sessions[i].name[0] && strcmp(h->sessions[i].name, ANON) != 0) live++;
  int s = who && who->session ? session_slot(h, who, sg_now_ns(), false) : -1;
  if (s >= 0) n = h->sessions[s].handles;
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
