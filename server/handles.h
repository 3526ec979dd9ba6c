// SPDX-License-Identifier: Apache-2.0
/*
 * handles.h — the daemon's tensor handle store (private to server/): values that stay
 * in the daemon between requests, named by ids the eager clients hold. See handles.c.
 */
#ifndef STAGD_SERVER_HANDLES_H
#define STAGD_SERVER_HANDLES_H

#include "gr.h"
#include "sg.h"

typedef struct sv_handles sv_handles;

/* Longest session name (the `stagd-session` metadata). */
#define SV_SESSION_MAX 64

/* Who makes a call: its session name (NULL: none) and its principal, a fingerprint of
 * the bearer token it authenticated with (0: the daemon checks no tokens). A handle
 * belongs to the session (and principal) that made it; calls without a session share
 * one anonymous bucket per principal. Everyone else gets NOT_FOUND for it, as for an
 * id that never existed, unless its owner granted it to their session name. */
typedef struct sv_owner {
  const char *session;
  uint64_t principal;
} sv_owner;

/* max_session_bytes: tensor bytes one session (or the anonymous bucket of one
 * principal) may hold, over all devices (--max-session-handle-bytes). */
sv_handles *sv_handles_new(uint64_t max_bytes, uint64_t max_count, uint64_t max_session_bytes);
void sv_handles_free(sv_handles *h);
/* Stores v (the store takes the caller's reference) as a handle on `device`, owned by
 * `who` (NULL: anonymous, principal 0); its id ("DEVICE#" and 32 hex digits of 128
 * random bits) goes to id_out (at least SV_HANDLE_ID_MAX bytes). RESOURCE_EXHAUSTED (v
 * released) past a limit. */
#define SV_HANDLE_ID_MAX 72
sg_code sv_handles_put(sv_handles *h, const char *device, const sv_owner *who, gr_value *v, char *id_out,
                       size_t cap, sg_error *err);
/* As sv_handles_put, under `id`, chosen by the client (EagerBatch, docs/client.md
 * "Asynchronous eager"): "DEVICE#" and 32 hex digits, DEVICE the handle's device.
 * INVALID_ARGUMENT for a malformed id, ALREADY_EXISTS for one in use (anyone's: the
 * client draws 128 random bits, so a clash means a reused id); v released on error. */
sg_code sv_handles_put_as(sv_handles *h, const char *device, const sv_owner *who, gr_value *v, const char *id,
                          sg_error *err);
/* RESOURCE_EXHAUSTED (the same message as sv_handles_put) when `bytes` more on
 * `device` for `who` would pass a limit now: checked before device memory is taken. */
sg_code sv_handles_check_room(sv_handles *h, const char *device, const sv_owner *who, uint64_t bytes, sg_error *err);
/* The value of a handle `who` may use (its own, or one granted to its session),
 * retained, with its device (static storage of the store); NOT_FOUND naming the id
 * when it was released, never existed or is someone else's. */
gr_value *sv_handles_get(sv_handles *h, const sv_owner *who, const char *id, const char **device, sg_error *err);
/* Drops the handle when `who` owns it (the whole id, device part included, must
 * match); false otherwise. */
bool sv_handles_release(sv_handles *h, const sv_owner *who, const char *id);
/* Lets session `to` (any principal's) use `who`'s handle `id` too, until it is
 * released; NOT_FOUND unless `who` owns it; INVALID_ARGUMENT for a bad name or a handle
 * that is not a Variable. */
sg_code sv_handles_grant(sv_handles *h, const sv_owner *who, const char *id, const char *to, sg_error *err);
void sv_handles_stats(sv_handles *h, uint64_t *count, uint64_t *bytes);
/* The i-th device that has held handles (0, 1, ...): its name, live handles and bytes;
 * false past the last (the metrics endpoint walks them). */
bool sv_handles_device_stats(sv_handles *h, int i, char *name, size_t cap, uint64_t *count, uint64_t *bytes);

/* Sessions (see handles.c). A valid name is 1..SV_SESSION_MAX of [A-Za-z0-9_-];
 * INVALID_ARGUMENT otherwise. */
bool sv_session_name_ok(const char *name, sg_error *err);
/* Renews `who`'s session at `now` (sg_now_ns()); a session opens with its first handle. */
void sv_handles_touch(sv_handles *h, const sv_owner *who, uint64_t now);
/* Releases `who`'s session's handles and forgets it; how many were released. Only the
 * owner can: the same name under another principal is another session. */
uint64_t sv_handles_end_session(sv_handles *h, const sv_owner *who);
/* Releases the handles of every session not renewed for lease_ns; how many (and, in
 * *sessions_out, how many sessions ended). */
uint64_t sv_handles_expire(sv_handles *h, uint64_t now, uint64_t lease_ns, int *sessions_out);
/* Tensor bytes the handles of `who`'s session hold, over all devices. */
uint64_t sv_handles_session_bytes(sv_handles *h, const sv_owner *who);
/* session_memory.c: the budget shared by one session's running requests and its
 * handles (--max-session-bytes; max 0: none, enter returns NULL). enter is called as a
 * request of `who` starts, leave with its result as it ends. */
typedef struct sv_session_memory sv_session_memory;
sv_session_memory *sv_session_memory_new(uint64_t max);
void sv_session_memory_free(sv_session_memory *m);
sg_share *sv_session_memory_enter(sv_session_memory *m, const sv_owner *who);
void sv_session_memory_leave(sv_session_memory *m, sg_share *s);
/* Handles held by `who`'s session (0 when unknown or NULL); live sessions and the
 * handles expired leases released since start. */
uint64_t sv_handles_session_count(sv_handles *h, const sv_owner *who, int *live_sessions, uint64_t *expired);

#endif /* STAGD_SERVER_HANDLES_H */
