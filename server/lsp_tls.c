// SPDX-License-Identifier: Apache-2.0
/*
 * lsp_tls.c — TLS for LSP over TCP (--tls-cert, --tls-key, --tls-client-ca), the same
 * files gRPC uses (grpc.c), so both network ports are protected alike.
 *
 * The socket belongs to libuv (lsp.c reads and writes it on the loop), so OpenSSL
 * never sees it: each connection's SSL object sits between two memory BIOs. Bytes
 * read from the socket go into the read BIO and come out of SSL_read as plaintext for
 * the LSP framer; plaintext replies go into SSL_write and the write BIO's ciphertext is
 * handed back to lsp.c to write. The handshake runs the same way, driven by the first
 * bytes the client sends. TLS 1.2 is the minimum.
 */
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lsp_tls.h"

struct sv_tls_ctx {
  SSL_CTX *ctx;
};

struct sv_tls {
  SSL *ssl;
  BIO *in, *out; /* owned by ssl */
};

/* The first OpenSSL error's text, for messages. */
static const char *ssl_reason(char *buf, size_t cap) {
  unsigned long e = ERR_get_error();
  if (!e) return "unknown error";
  ERR_error_string_n(e, buf, cap);
  ERR_clear_error();
  return buf;
}

sv_tls_ctx *sv_tls_ctx_new(const sv_config *cfg, sg_error *err) {
  char why[256];
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) {
    sg_error_set(err, SG_INTERNAL, "TLS: %s", ssl_reason(why, sizeof why));
    return NULL;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  const char *bad = NULL, *flag = NULL;
  if (SSL_CTX_use_certificate_chain_file(ctx, cfg->tls_cert) != 1) bad = cfg->tls_cert, flag = "--tls-cert";
  else if (SSL_CTX_use_PrivateKey_file(ctx, cfg->tls_key, SSL_FILETYPE_PEM) != 1) bad = cfg->tls_key, flag = "--tls-key";
  else if (SSL_CTX_check_private_key(ctx) != 1) bad = cfg->tls_key, flag = "--tls-key (not the key of --tls-cert)";
  else if (cfg->tls_client_ca) {
    if (SSL_CTX_load_verify_locations(ctx, cfg->tls_client_ca, NULL) != 1) {
      bad = cfg->tls_client_ca, flag = "--tls-client-ca";
    } else {
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
      STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(cfg->tls_client_ca);
      if (names) SSL_CTX_set_client_CA_list(ctx, names);
    }
  }
  if (bad) {
    sg_error_set(err, SG_INVALID_ARGUMENT, "%s %s: %s", flag, bad, ssl_reason(why, sizeof why));
    SSL_CTX_free(ctx);
    return NULL;
  }
  sv_tls_ctx *t = sg_xcalloc(1, sizeof *t);
  t->ctx = ctx;
  return t;
}

void sv_tls_ctx_free(sv_tls_ctx *t) {
  if (!t) return;
  SSL_CTX_free(t->ctx);
  free(t);
}

sv_tls *sv_tls_new(sv_tls_ctx *ctx) {
  sv_tls *t = sg_xcalloc(1, sizeof *t);
  t->ssl = SSL_new(ctx->ctx);
  t->in = BIO_new(BIO_s_mem());
  t->out = BIO_new(BIO_s_mem());
  if (!t->ssl || !t->in || !t->out) {
    if (t->ssl) SSL_free(t->ssl);
    BIO_free(t->in);
    BIO_free(t->out);
    free(t);
    return NULL;
  }
  SSL_set_bio(t->ssl, t->in, t->out);
  SSL_set_accept_state(t->ssl);
  return t;
}

void sv_tls_free(sv_tls *t) {
  if (!t) return;
  SSL_free(t->ssl); /* frees the BIOs */
  free(t);
}

/* Moves what the write BIO holds to *wire. */
static void drain(sv_tls *t, sg_buf *wire) {
  char chunk[16384];
  int n;
  while ((n = BIO_read(t->out, chunk, sizeof chunk)) > 0) sg_buf_append(wire, chunk, (size_t)n);
}

/* Whether the SSL result r is a wait for more input (true) or a fatal error. */
static bool ok_result(sv_tls *t, int r) {
  int e = SSL_get_error(t->ssl, r);
  return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_NONE;
}

bool sv_tls_received(sv_tls *t, const char *data, size_t n, sg_buf *plain, sg_buf *wire, char *why, size_t cap) {
  if (n && BIO_write(t->in, data, (int)n) != (int)n) {
    snprintf(why, cap, "TLS: cannot buffer input");
    return false;
  }
  bool ok = true;
  if (!SSL_is_init_finished(t->ssl)) {
    int r = SSL_do_handshake(t->ssl);
    if (r != 1 && !ok_result(t, r)) {
      ssl_reason(why, cap);
      ok = false;
    }
  }
  while (ok && SSL_is_init_finished(t->ssl)) {
    char chunk[16384];
    int r = SSL_read(t->ssl, chunk, sizeof chunk);
    if (r > 0) {
      sg_buf_append(plain, chunk, (size_t)r);
      continue;
    }
    if (!ok_result(t, r)) {
      if (SSL_get_error(t->ssl, r) == SSL_ERROR_ZERO_RETURN) snprintf(why, cap, "the client closed TLS");
      else ssl_reason(why, cap);
      ok = false;
    }
    break;
  }
  drain(t, wire); /* handshake replies, alerts */
  return ok;
}

bool sv_tls_send(sv_tls *t, const char *data, size_t n, sg_buf *wire) {
  size_t off = 0;
  while (off < n) {
    int r = SSL_write(t->ssl, data + off, (int)(n - off > (1u << 30) ? 1u << 30 : n - off));
    if (r <= 0) {
      ERR_clear_error();
      return false;
    }
    off += (size_t)r;
  }
  drain(t, wire);
  return true;
}
