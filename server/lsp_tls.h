// SPDX-License-Identifier: Apache-2.0
/*
 * lsp_tls.h — private to server/: TLS for LSP TCP connections, OpenSSL over memory
 * BIOs so that the libuv stream stays the only thing touching the socket. See lsp_tls.c.
 */
#ifndef STAGD_SERVER_LSP_TLS_H
#define STAGD_SERVER_LSP_TLS_H

#include "sv.h"

typedef struct sv_tls_ctx sv_tls_ctx; /* the server's certificate, key and client CA */
typedef struct sv_tls sv_tls;         /* one connection */

/* From --tls-cert, --tls-key and --tls-client-ca (mutual TLS: a client certificate
 * signed by that CA is required). NULL with err naming the file on failure. */
sv_tls_ctx *sv_tls_ctx_new(const sv_config *cfg, sg_error *err);
void sv_tls_ctx_free(sv_tls_ctx *t);

/* NULL when OpenSSL cannot make one (out of memory). */
sv_tls *sv_tls_new(sv_tls_ctx *ctx);
void sv_tls_free(sv_tls *t);
/* n bytes read from the socket: the plaintext they complete goes to *plain, the bytes
 * to write back (handshake) to *wire. false after a fatal TLS error (a plain-text
 * client, a missing or untrusted client certificate): why says what, the connection
 * should close. */
bool sv_tls_received(sv_tls *t, const char *data, size_t n, sg_buf *plain, sg_buf *wire, char *why, size_t cap);
/* Encrypts n bytes of plaintext into *wire; false after a fatal error. */
bool sv_tls_send(sv_tls *t, const char *data, size_t n, sg_buf *wire);

#endif /* STAGD_SERVER_LSP_TLS_H */
