// SPDX-License-Identifier: Apache-2.0
/*
 * auth.h — private to server/: bearer tokens (--auth-token-file) and the TLS settings
 * both network transports share. See auth.c.
 */
#ifndef STAGD_SERVER_AUTH_H
#define STAGD_SERVER_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "sg.h"

typedef struct sv_auth sv_auth;

/* Reads the token file: one token per line; blank lines and lines starting with '#'
 * are skipped, surrounding spaces trimmed. INVALID_ARGUMENT naming FILE:LINE for a
 * token shorter than 16 characters, or a file without tokens. */
sv_auth *sv_auth_load(const char *path, sg_error *err);
void sv_auth_free(sv_auth *a);
/* Rereads the file (SIGHUP); on an error the tokens in force stay and err says why. */
sg_code sv_auth_reload(sv_auth *a, sg_error *err);
/* Whether `token` (len bytes) is one of the tokens, compared in constant time over
 * every token; its principal (a fingerprint: the first 8 bytes of its SHA-256, never 0)
 * goes to *principal. */
bool sv_auth_check(sv_auth *a, const char *token, size_t len, uint64_t *principal);
/* The same for an `authorization` header value "Bearer TOKEN". */
bool sv_auth_check_bearer(sv_auth *a, const char *value, size_t len, uint64_t *principal);

/* The whole of a PEM file, NUL-terminated, malloc'd; NULL with err naming it. */
char *sv_read_pem(const char *path, const char *flag, sg_error *err);

#endif /* STAGD_SERVER_AUTH_H */
