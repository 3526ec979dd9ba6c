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

sv_handles *sv_handles_new(uint64_t max_bytes, uint64_t max_count);
void sv_handles_free(sv_handles *h);
/* Stores v (the store takes the caller's reference) as a handle on `device`, owned by
 * `session` (NULL: none, never expires); its id ("DEVICE#N") goes to id_out.
 * RESOURCE_EXHAUSTED (v released) past a limit. */
sg_code sv_handles_put(sv_handles *h, const char *device, const char *session, gr_value *v, char *id_out,
                       size_t cap, sg_error *err);
/* RESOURCE_EXHAUSTED (the same message as sv_handles_put) when `bytes` more on
 * `device` would pass a limit now: checked before device memory is taken. */
sg_code sv_handles_check_room(sv_handles *h, const char *device, uint64_t bytes, sg_error *err);
/* The value of a live handle, retained, with its device (static storage of the store);
 * NOT_FOUND naming the id when it was released or never existed. */
gr_value *sv_handles_get(sv_handles *h, const char *id, const char **device, sg_error *err);
/* Drops the handle; false when it was not live. */
bool sv_handles_release(sv_handles *h, const char *id);
void sv_handles_stats(sv_handles *h, uint64_t *count, uint64_t *bytes);
/* The i-th device that has held handles (0, 1, ...): its name, live handles and bytes;
 * false past the last (the metrics endpoint walks them). */
bool sv_handles_device_stats(sv_handles *h, int i, char *name, size_t cap, uint64_t *count, uint64_t *bytes);

/* Sessions (see handles.c). A valid name is 1..SV_SESSION_MAX of [A-Za-z0-9_-];
 * INVALID_ARGUMENT otherwise. */
bool sv_session_name_ok(const char *name, sg_error *err);
/* Renews a session at `now` (sg_now_ns()); a session opens with its first handle. */
void sv_handles_touch(sv_handles *h, const char *session, uint64_t now);
/* Releases the session's handles and forgets it; how many were released. */
uint64_t sv_handles_end_session(sv_handles *h, const char *session);
/* Releases the handles of every session not renewed for lease_ns; how many (and, in
 * *sessions_out, how many sessions ended). */
uint64_t sv_handles_expire(sv_handles *h, uint64_t now, uint64_t lease_ns, int *sessions_out);
/* Handles held by session `name` (0 when unknown); live sessions and the handles
 * expired leases released since start. */
uint64_t sv_handles_session_count(sv_handles *h, const char *name, int *live_sessions, uint64_t *expired);

#endif /* STAGD_SERVER_HANDLES_H */
