/*
 * handles.h — the daemon's tensor handle store (private to server/): values that stay
 * in the daemon between requests, named by ids the eager clients hold. See handles.c.
 */
#ifndef STAGD_SERVER_HANDLES_H
#define STAGD_SERVER_HANDLES_H

#include "gr.h"
#include "sg.h"

typedef struct sv_handles sv_handles;

sv_handles *sv_handles_new(uint64_t max_bytes, uint64_t max_count);
void sv_handles_free(sv_handles *h);
/* Stores v (the store takes the caller's reference) as a handle on `device`; its id
 * ("DEVICE#N") goes to id_out. RESOURCE_EXHAUSTED (v released) past a limit. */
sg_code sv_handles_put(sv_handles *h, const char *device, gr_value *v, char *id_out, size_t cap,
                       sg_error *err);
/* RESOURCE_EXHAUSTED (the same message as sv_handles_put) when `bytes` more on
 * `device` would pass a limit now: checked before device memory is taken. */
sg_code sv_handles_check_room(sv_handles *h, const char *device, uint64_t bytes, sg_error *err);
/* The value of a live handle, retained, with its device (static storage of the store);
 * NOT_FOUND naming the id when it was released or never existed. */
gr_value *sv_handles_get(sv_handles *h, const char *id, const char **device, sg_error *err);
/* Drops the handle; false when it was not live. */
bool sv_handles_release(sv_handles *h, const char *id);
void sv_handles_stats(sv_handles *h, uint64_t *count, uint64_t *bytes);

#endif /* STAGD_SERVER_HANDLES_H */
