// SPDX-License-Identifier: Apache-2.0
/*
 * shm.h — the local data path (docs/security.md "The shared-memory directory"): tensor
 * payloads of unix-socket clients travel through files in a private directory of the
 * daemon instead of inside protobuf messages.
 */
#ifndef SV_SHM_H
#define SV_SHM_H

#include <stddef.h>
#include <stdint.h>

#include "sg.h"

typedef struct sv_shm sv_shm;

/* Opens (creates 0700, or checks: a directory, not a link, owned by this uid, no access
 * for others) `dir` and removes whatever a previous daemon left in it. A session's
 * results not yet read by its client may hold at most session_budget bytes there. */
sv_shm *sv_shm_open(const char *dir, uint64_t session_budget, sg_error *err);
/* Removes the directory's files and the directory. */
void sv_shm_close(sv_shm *s);
const char *sv_shm_dir(const sv_shm *s);

/* Reads the client's file `name` (exactly `n` bytes: a regular file of this uid with one
 * link, opened without following links) into alloc(ud) — called only once the file
 * checked out, so a declared size nobody wrote allocates nothing — and unlinks it.
 * With `keep`, `name` is a client's staging file (SV_SHM_KEEP_PREFIX…, at least n bytes:
 * its first n are read), left in place. Bad names, links,
 * other files and wrong sizes are INVALID_ARGUMENT naming `path`; the file is removed
 * anyway, but for a staging file that is a plain file (its client's). */
sg_code sv_shm_take(sv_shm *s, const char *name, size_t n, bool keep, void *(*alloc)(void *ud), void *ud,
                    const char *path, sg_error *err);
/* Writes n bytes at the start of the client's staging file `name` (it exists: a regular
 * file of this uid with one link), grown to n bytes when smaller. False when it is no such file or the write
 * fails: the caller then gives the bytes a new file (sv_shm_give). */
#define SV_SHM_KEEP_PREFIX "k-"
bool sv_shm_put_into(sv_shm *s, const char *name, const void *src, size_t n);
/* Writes n bytes into a new file for `session` (NULL: none) and puts its name (at most
 * SV_SHM_NAME_MAX bytes with the NUL) in name; RESOURCE_EXHAUSTED past the session's
 * budget. */
enum { SV_SHM_NAME_MAX = 48 };
sg_code sv_shm_give(sv_shm *s, const char *session, const void *src, size_t n, char *name, sg_error *err);
/* Removes the file `name` wrote by sv_shm_give (a reply that is never sent). */
void sv_shm_remove(sv_shm *s, const char *name);
/* Removes the files written for `session` (its end). */
void sv_shm_end_session(sv_shm *s, const char *session);
/* Removes files older than age_ms (a client that died between a call and its read). */
void sv_shm_sweep_older(sv_shm *s, uint64_t age_ms);

#endif
