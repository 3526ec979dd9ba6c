// SPDX-License-Identifier: Apache-2.0
/*
 * auth.c — bearer tokens for the network transports (docs/security.md).
 *
 * The operator lists tokens in --auth-token-file, one per line; SIGHUP rereads it, so
 * a token is added or revoked without a restart (calls already running keep going).
 * Tokens are kept as SHA-256 digests: a presented token is hashed and compared with
 * every digest by CRYPTO_memcmp, always all of them, so neither the comparison nor its
 * position in the list leaks through timing. The first 8 bytes of the digest are the
 * caller's principal: sessions and handles made under one token are invisible to the
 * callers of another (handles.c), even with the same session name.
 */
#include <ctype.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"

enum { MIN_TOKEN = 16 };

typedef struct digest {
  unsigned char d[SHA256_DIGEST_LENGTH];
} digest;

struct sv_auth {
  pthread_rwlock_t lock;
  char *path;
  digest *tokens;
  size_t n;
};

/* Parses the file into *out (malloc'd) and *n. */
static sg_code read_tokens(const char *path, digest **out, size_t *n, sg_error *err) {
  *out = NULL;
  *n = 0;
  FILE *f = fopen(path, "r");
  if (!f) return sg_error_set(err, SG_INVALID_ARGUMENT, "--auth-token-file %s: %s", path, strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  int lineno = 0;
  sg_code rc = SG_OK;
  while (!rc && (len = getline(&line, &cap, f)) >= 0) {
    lineno++;
    char *p = line, *e = line + len;
    while (e > p && isspace((unsigned char)e[-1])) e--;
    while (p < e && isspace((unsigned char)*p)) p++;
    if (p == e || *p == '#') continue;
    if (e - p < MIN_TOKEN) {
      rc = sg_error_set_at(err, SG_INVALID_ARGUMENT, path, lineno, 1,
                           "a token must be at least %d characters (use e.g. `openssl rand -hex 32`)", MIN_TOKEN);
      break;
    }
    *out = sg_xrealloc(*out, (*n + 1) * sizeof **out);
    SHA256((const unsigned char *)p, (size_t)(e - p), (*out)[(*n)++].d);
  }
  free(line);
  fclose(f);
  if (!rc && !*n) rc = sg_error_set(err, SG_INVALID_ARGUMENT, "--auth-token-file %s holds no tokens", path);
  if (rc) {
    OPENSSL_cleanse(*out, *n * sizeof **out);
    free(*out);
    *out = NULL;
  }
  return rc;
}

sv_auth *sv_auth_load(const char *path, sg_error *err) {
  digest *t;
  size_t n;
  if (read_tokens(path, &t, &n, err)) return NULL;
  sv_auth *a = sg_xcalloc(1, sizeof *a);
  pthread_rwlock_init(&a->lock, NULL);
  a->path = sg_xstrdup(path);
  a->tokens = t;
  a->n = n;
  return a;
}

void sv_auth_free(sv_auth *a) {
  if (!a) return;
  OPENSSL_cleanse(a->tokens, a->n * sizeof *a->tokens);
  free(a->tokens);
  free(a->path);
  pthread_rwlock_destroy(&a->lock);
  free(a);
}

sg_code sv_auth_reload(sv_auth *a, sg_error *err) {
  digest *t;
  size_t n;
  sg_code rc = read_tokens(a->path, &t, &n, err);
  if (rc) return rc;
  pthread_rwlock_wrlock(&a->lock);
  digest *old = a->tokens;
  size_t oldn = a->n;
  a->tokens = t;
  a->n = n;
  pthread_rwlock_unlock(&a->lock);
  OPENSSL_cleanse(old, oldn * sizeof *old);
  free(old);
  SG_INFO(0, "reread %s: %zu token(s)", a->path, n);
  return SG_OK;
}

bool sv_auth_check(sv_auth *a, const char *token, size_t len, uint64_t *principal) {
  digest d;
  SHA256((const unsigned char *)token, len, d.d);
  int match = 0;
  pthread_rwlock_rdlock(&a->lock);
  for (size_t i = 0; i < a->n; i++) match |= CRYPTO_memcmp(d.d, a->tokens[i].d, sizeof d.d) == 0;
  pthread_rwlock_unlock(&a->lock);
  uint64_t p = 0;
  for (int i = 0; i < 8; i++) p = p << 8 | d.d[i];
  *principal = match ? (p ? p : 1) : 0;
  return match;
}

bool sv_auth_check_bearer(sv_auth *a, const char *value, size_t len, uint64_t *principal) {
  static const char prefix[] = "Bearer ";
  size_t pl = sizeof prefix - 1;
  *principal = 0;
  if (len <= pl || strncasecmp(value, prefix, pl) != 0) return false;
  return sv_auth_check(a, value + pl, len - pl, principal);
}

char *sv_read_pem(const char *path, const char *flag, sg_error *err) {
  size_t len;
  char *text = sg_read_file(path, &len);
  if (!text) {
    sg_error_set(err, SG_INVALID_ARGUMENT, "%s %s: %s", flag, path, strerror(errno));
  } else if (!strstr(text, "-----BEGIN ")) {
    free(text);
    text = NULL;
    sg_error_set(err, SG_INVALID_ARGUMENT, "%s %s: not a PEM file (no -----BEGIN line)", flag, path);
  }
  return text;
}
