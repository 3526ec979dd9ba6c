// SPDX-License-Identifier: Apache-2.0
/*
 * grpc.c — the gRPC transport, on gRPC core's C API.
 *
 * One thread drives a completion queue. For each call it keeps one request_call
 * outstanding, then per call: a batch that sends initial metadata and receives the
 * request, a batch that waits for the client to close (so cancellation is seen while
 * the handler runs), and — after the handler ran (on a worker; the admin lane's quick
 * calls on this thread, see dispatch) — a batch that sends the reply and the status. A call's memory is freed when both of its own batches
 * have completed (reference count 2).
 *
 * Shutdown: sv_grpc_shutdown stops accepting; calls in flight finish; when the
 * server's shutdown tag and the last call are done the queue is shut down and the
 * owner's on_stopped callback runs (on the completion-queue thread).
 *
 * Security (docs/security.md): with --tls-cert/--tls-key the TCP ports speak TLS (gRPC
 * core's SSL server credentials; --tls-client-ca requires and verifies client
 * certificates); unix sockets are created mode 0600. With --auth-token-file every call
 * needs `authorization: Bearer TOKEN` metadata, else UNAUTHENTICATED before any
 * handler runs; the token's fingerprint becomes the call's principal.
 *
 * No service logic lives here: bytes go to sv_service_invoke_bytes and back.
 */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lsp_tls.h"
#include "transport.h"

typedef enum tag_kind { TAG_NEW, TAG_RECV, TAG_CLOSE, TAG_SEND, TAG_SHUTDOWN } tag_kind;

typedef struct gcall gcall;
typedef struct tag {
  tag_kind kind;
  gcall *gc;
} tag;

struct gcall {
  sv_grpc *g;
  tag t_new, t_recv, t_close, t_send;
  grpc_call *call;
  grpc_call_details details;
  grpc_metadata_array md;
  grpc_byte_buffer *recv_buf;
  grpc_byte_buffer *send_buf;
  int close_cancelled;
  atomic_bool cancelled;
  atomic_int refs;
  grpc_slice status_details;
  bool has_details;
  grpc_metadata trailing[4]; /* the error's location and reason (add_trailing) */
  size_t n_trailing;
  sg_arena arena;
  char *admitted; /* the session counted by admission.c (malloc'd), or NULL */
  sg_error refused; /* set at dispatch: answered with this error, unrun */
};

struct sv_grpc {
  sv_service *sv;
  sv_pool *pool;
  grpc_server *server;
  grpc_completion_queue *cq;
  pthread_t thread;
  bool thread_started;
  atomic_bool shutting_down;
  atomic_bool shutdown_tag_seen;
  atomic_bool cq_shut;
  atomic_int active; /* calls accepted and not yet freed */
  tag t_shutdown;
  void (*on_stopped)(void *);
  void *ud;
};

static void maybe_shutdown_cq(sv_grpc *g) {
  /* Idle client connections would hold the server's shutdown for seconds: once no
   * call is running, end them. */
  if (atomic_load(&g->shutting_down) && atomic_load(&g->active) == 0) grpc_server_cancel_all_calls(g->server);
  if (atomic_load(&g->shutdown_tag_seen) && atomic_load(&g->active) == 0) {
    bool expected = false;
    if (atomic_compare_exchange_strong(&g->cq_shut, &expected, true)) grpc_completion_queue_shutdown(g->cq);
  }
}

static void request_new(sv_grpc *g) {
  gcall *gc = sg_xcalloc(1, sizeof *gc);
  gc->g = g;
  gc->t_new = (tag){TAG_NEW, gc};
  gc->t_recv = (tag){TAG_RECV, gc};
  gc->t_close = (tag){TAG_CLOSE, gc};
  gc->t_send = (tag){TAG_SEND, gc};
  grpc_call_details_init(&gc->details);
  grpc_metadata_array_init(&gc->md);
  grpc_call_error e = grpc_server_request_call(g->server, &gc->call, &gc->details, &gc->md, g->cq, g->cq, &gc->t_new);
  if (e != GRPC_CALL_OK) {
    grpc_call_details_destroy(&gc->details);
    grpc_metadata_array_destroy(&gc->md);
    free(gc);
  }
}

static void free_unaccepted(gcall *gc) {
  grpc_call_details_destroy(&gc->details);
  grpc_metadata_array_destroy(&gc->md);
  if (gc->call) grpc_call_unref(gc->call);
  free(gc);
}

static void deref(gcall *gc) {
  if (atomic_fetch_sub(&gc->refs, 1) != 1) return;
  sv_grpc *g = gc->g;
  if (gc->recv_buf) grpc_byte_buffer_destroy(gc->recv_buf);
  if (gc->send_buf) grpc_byte_buffer_destroy(gc->send_buf);
  if (gc->has_details) grpc_slice_unref(gc->status_details);
  for (size_t i = 0; i < gc->n_trailing; i++) {
    grpc_slice_unref(gc->trailing[i].key);
    grpc_slice_unref(gc->trailing[i].value);
  }
  grpc_call_unref(gc->call);
  grpc_call_details_destroy(&gc->details);
  grpc_metadata_array_destroy(&gc->md);
  sg_arena_free(&gc->arena);
  free(gc);
  atomic_fetch_sub(&g->active, 1);
  maybe_shutdown_cq(g);
}

static uint64_t deadline_of(const gpr_timespec *d) {
  gpr_timespec mono = gpr_convert_clock_type(*d, GPR_CLOCK_MONOTONIC);
  if (gpr_time_cmp(mono, gpr_inf_future(GPR_CLOCK_MONOTONIC)) >= 0) return 0;
  gpr_timespec left = gpr_time_sub(mono, gpr_now(GPR_CLOCK_MONOTONIC));
  int64_t ns = left.tv_sec * 1000000000LL + left.tv_nsec;
  uint64_t now = sg_now_ns();
  return ns <= 0 ? now : now + (uint64_t)ns;
}

/* Trailing metadata stagd-file-bin / stagd-line / stagd-column carry an error's
 * location apart from the human-readable status details, stagd-reason its reason
 * (sg_reason_name: what clients map to exception types), docs/api.md. */
static void add_trailing(gcall *gc, const sg_error *err) {
  char num[24];
  if (err->reason) {
    gc->trailing[gc->n_trailing].key = grpc_slice_from_static_string("stagd-reason");
    gc->trailing[gc->n_trailing++].value = grpc_slice_from_static_string(sg_reason_name(err->reason));
  }
  if (err->file) {
    gc->trailing[gc->n_trailing].key = grpc_slice_from_static_string("stagd-file-bin");
    gc->trailing[gc->n_trailing++].value = grpc_slice_from_copied_string(err->file);
  }
  if (err->line > 0) {
    snprintf(num, sizeof num, "%d", err->line);
    gc->trailing[gc->n_trailing].key = grpc_slice_from_static_string("stagd-line");
    gc->trailing[gc->n_trailing++].value = grpc_slice_from_copied_string(num);
  }
  if (err->col > 0) {
    snprintf(num, sizeof num, "%d", err->col);
    gc->trailing[gc->n_trailing].key = grpc_slice_from_static_string("stagd-column");
    gc->trailing[gc->n_trailing++].value = grpc_slice_from_copied_string(num);
  }
}

/* The request's metadata `key` (its slice, not copied); NULL when absent. */
static const grpc_slice *metadata_slice(const gcall *gc, const char *key) {
  size_t klen = strlen(key);
  for (size_t i = 0; i < gc->md.count; i++) {
    const grpc_slice *k = &gc->md.metadata[i].key;
    if (GRPC_SLICE_LENGTH(*k) == klen && !memcmp(GRPC_SLICE_START_PTR(*k), key, klen)) return &gc->md.metadata[i].value;
  }
  return NULL;
}

/* The value of the request's metadata `key`, copied into the arena; NULL when absent. */
static const char *metadata_value(const gcall *gc, const char *key, sg_arena *arena) {
  const grpc_slice *v = metadata_slice(gc, key);
  return v ? sg_arena_strndup(arena, (const char *)GRPC_SLICE_START_PTR(*v), GRPC_SLICE_LENGTH(*v)) : NULL;
}

/* With --auth-token-file: whether the call carries a valid bearer token (its principal
 * goes to the call). */
static bool authenticated(sv_grpc *g, const gcall *gc, sv_call *call) {
  sv_auth *auth = sv_service_auth(g->sv);
  if (!auth) return true;
  const grpc_slice *v = metadata_slice(gc, "authorization");
  return v && sv_auth_check_bearer(auth, (const char *)GRPC_SLICE_START_PTR(*v), GRPC_SLICE_LENGTH(*v),
                                   &call->principal);
}

/* The request's bytes in one slice: a message that arrived in one uncompressed slice
 * is that slice (a reference, no copy); else its slices joined once. */
static grpc_slice request_bytes(grpc_byte_buffer *bb) {
  if (bb->type == GRPC_BB_RAW && bb->data.raw.compression == GRPC_COMPRESS_NONE &&
      bb->data.raw.slice_buffer.count == 1)
    return grpc_slice_ref(bb->data.raw.slice_buffer.slices[0]);
  grpc_byte_buffer_reader r;
  grpc_slice s = grpc_empty_slice();
  if (grpc_byte_buffer_reader_init(&r, bb)) {
    s = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
  }
  return s;
}

/* Whether the client is on one of the daemon's unix sockets (the local data path). */
static bool is_unix_peer(grpc_call *c) {
  char *peer = grpc_call_get_peer(c);
  bool local = peer && !strncmp(peer, "unix:", 5);
  gpr_free(peer);
  return local;
}

/* Runs on a worker (the admin lane: on the completion-queue thread): decode, invoke,
 * start the batch that sends the reply. */
static void run_call(void *arg) {
  gcall *gc = arg;
  sv_grpc *g = gc->g;
  sg_arena_init(&gc->arena, 16 * 1024);
  sv_call call = {.id = sv_service_next_id(g->sv), .arena = &gc->arena, .deadline_ns = deadline_of(&gc->details.deadline), .cancelled = &gc->cancelled};
  call.session = metadata_value(gc, "stagd-session", &gc->arena);
  call.local = is_unix_peer(gc->call);
  sg_error err = SG_ERROR_INIT;
  sg_buf out = SG_BUF_INIT;
  const char *path = (const char *)GRPC_SLICE_START_PTR(gc->details.method);
  size_t path_len = GRPC_SLICE_LENGTH(gc->details.method);
  const sv_method *m = sv_method_by_grpc_path(path, path_len);
  sg_code rc;
  if (!authenticated(g, gc, &call)) {
    rc = sg_error_set(&err, SG_UNAUTHENTICATED,
                      "this daemon requires a bearer token: send the metadata 'authorization: Bearer TOKEN' "
                      "with a token from its --auth-token-file (stagctl --token-file, stagd.connect(token=...))");
    SG_INFO(call.id, "%s: missing or unknown bearer token", m ? m->name : "call");
  } else if (gc->refused.code) {
    sg_error_move(&err, &gc->refused);
    rc = err.code;
    if (m) SG_INFO(call.id, "%s: %s", m->name, err.message);
  } else if (!m) {
    rc = sg_error_set(&err, SG_UNIMPLEMENTED, "unknown method '%.*s'", (int)path_len, path);
    SG_INFO(call.id, "%s", err.message);
  } else if (!gc->recv_buf) {
    rc = sg_error_set(&err, SG_INVALID_ARGUMENT, "%s: the client sent no request message", m->name);
  } else {
    grpc_slice s = request_bytes(gc->recv_buf);
    rc = sv_service_invoke_bytes(g->sv, m, &call, GRPC_SLICE_START_PTR(s), GRPC_SLICE_LENGTH(s), &out, &err);
    grpc_slice_unref(s);
  }
  sv_admission_leave(sv_service_admission(g->sv), gc->admitted);
  gc->admitted = NULL;

  grpc_op ops[2];
  memset(ops, 0, sizeof ops);
  size_t n = 0;
  if (rc == SG_OK) {
    /* the packed reply itself, no copy: the slice frees it when gRPC has sent it */
    size_t len = out.len;
    char *packed = sg_buf_detach(&out, NULL);
    grpc_slice body = len ? grpc_slice_new(packed, len, free) : grpc_empty_slice();
    if (!len) free(packed);
    gc->send_buf = grpc_raw_byte_buffer_create(&body, 1);
    grpc_slice_unref(body);
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n].data.send_message.send_message = gc->send_buf;
    n++;
  }
  char *details = rc == SG_OK ? NULL : sv_error_details(&err);
  if (rc != SG_OK) add_trailing(gc, &err);
  gc->status_details = grpc_slice_from_copied_string(details ? details : "");
  gc->has_details = true;
  free(details);
  ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  ops[n].data.send_status_from_server.trailing_metadata_count = gc->n_trailing;
  ops[n].data.send_status_from_server.trailing_metadata = gc->trailing;
  ops[n].data.send_status_from_server.status = (grpc_status_code)rc;
  ops[n].data.send_status_from_server.status_details = &gc->status_details;
  n++;
  sg_buf_free(&out);
  sg_error_clear(&err);
  if (grpc_call_start_batch(gc->call, ops, n, &gc->t_send, NULL) != GRPC_CALL_OK) deref(gc);
}

static void on_new(sv_grpc *g, gcall *gc, bool ok) {
  if (!ok) { /* the server is shutting down */
    free_unaccepted(gc);
    return;
  }
  if (!atomic_load(&g->shutting_down)) request_new(g);
  atomic_fetch_add(&g->active, 1);
  atomic_store(&gc->refs, 2);
  grpc_op close_op;
  memset(&close_op, 0, sizeof close_op);
  close_op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  close_op.data.recv_close_on_server.cancelled = &gc->close_cancelled;
  if (grpc_call_start_batch(gc->call, &close_op, 1, &gc->t_close, NULL) != GRPC_CALL_OK) deref(gc);

  grpc_op ops[2];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[0].data.send_initial_metadata.count = 0;
  ops[1].op = GRPC_OP_RECV_MESSAGE;
  ops[1].data.recv_message.recv_message = &gc->recv_buf;
  if (grpc_call_start_batch(gc->call, ops, 2, &gc->t_recv, NULL) != GRPC_CALL_OK) deref(gc);
}

/* Which lane a received call runs in, and whether its session may start one more
 * (admission.c). Runs on the completion-queue thread, and so do the admin lane's calls
 * (Health, Version, Stats, a Ping that does not wait, refusals): their handlers never
 * block, so they answer without a hop to another thread, and while every worker is
 * busy. Every other call goes to the workers. */
static void dispatch(sv_grpc *g, gcall *gc) {
  const sv_method *m = sv_method_by_grpc_path((const char *)GRPC_SLICE_START_PTR(gc->details.method),
                                              GRPC_SLICE_LENGTH(gc->details.method));
  bool admin = false;
  if (m && gc->recv_buf) {
    /* only a Ping's body matters here: a large Put is not joined on this thread */
    if (sv_admin_lane_reads_body(m)) {
      grpc_slice s = request_bytes(gc->recv_buf);
      admin = sv_admin_lane(m, GRPC_SLICE_START_PTR(s), GRPC_SLICE_LENGTH(s));
      grpc_slice_unref(s);
    } else {
      admin = sv_admin_lane(m, NULL, 0);
    }
  }
  if (m && !admin) {
    sg_arena a;
    sg_arena_init(&a, 512);
    const char *session = metadata_value(gc, "stagd-session", &a);
    sv_call who = {0};
    (void)authenticated(g, gc, &who); /* the principal; a bad token is refused later */
    char *peer = grpc_call_get_peer(gc->call);
    if (sv_admission_enter(sv_service_admission(g->sv), who.principal, session, peer, &gc->admitted,
                           &gc->refused) != SG_OK)
      admin = true; /* the refusal is answered at once */
    gpr_free(peer);
    sg_arena_free(&a);
  }
  if (admin) run_call(gc);
  else sv_pool_submit(g->pool, run_call, gc);
}

static void *cq_main(void *arg) {
  sv_grpc *g = arg;
  for (;;) {
    grpc_event ev = grpc_completion_queue_next(g->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN) break;
    if (ev.type != GRPC_OP_COMPLETE) continue;
    tag *t = ev.tag;
    switch (t->kind) {
      case TAG_NEW: on_new(g, t->gc, ev.success); break;
      case TAG_RECV:
        if (ev.success) dispatch(g, t->gc);
        else deref(t->gc); /* the client went away before sending */
        break;
      case TAG_CLOSE:
        if (t->gc->close_cancelled) atomic_store(&t->gc->cancelled, true);
        deref(t->gc);
        break;
      case TAG_SEND: deref(t->gc); break;
      case TAG_SHUTDOWN:
        atomic_store(&g->shutdown_tag_seen, true);
        maybe_shutdown_cq(g);
        break;
    }
  }
  if (g->on_stopped) g->on_stopped(g->ud);
  return NULL;
}

/* SSL server credentials from the PEM files of --tls-cert, --tls-key and
 * --tls-client-ca (mutual TLS: a client certificate is required and verified). */
static grpc_server_credentials *tls_credentials(const sv_config *cfg, sg_error *err) {
  /* gRPC reads the files only at the first handshake: OpenSSL checks them now, so a
   * bad certificate or a key that does not match stops the start with a clear error */
  sv_tls_ctx *check = sv_tls_ctx_new(cfg, err);
  if (!check) return NULL;
  sv_tls_ctx_free(check);
  char *cert = sv_read_pem(cfg->tls_cert, "--tls-cert", err);
  char *key = cert ? sv_read_pem(cfg->tls_key, "--tls-key", err) : NULL;
  char *ca = key && cfg->tls_client_ca ? sv_read_pem(cfg->tls_client_ca, "--tls-client-ca", err) : NULL;
  grpc_server_credentials *c = NULL;
  if (key && (ca || !cfg->tls_client_ca)) {
    grpc_ssl_pem_key_cert_pair pair = {key, cert};
    c = grpc_ssl_server_credentials_create_ex(ca, &pair, 1,
                                              ca ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                                 : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
                                              NULL);
    if (!c) sg_error_set(err, SG_INVALID_ARGUMENT, "--tls-cert %s / --tls-key %s: gRPC cannot use them", cfg->tls_cert, cfg->tls_key);
  }
  if (key) OPENSSL_cleanse(key, strlen(key));
  free(cert);
  free(key);
  free(ca);
  return c;
}

sv_grpc *sv_grpc_start(sv_service *sv, sv_pool *pool, const sv_strlist *addrs,
                       void (*on_stopped)(void *), void *ud, sg_error *err) {
  const sv_config *cfg = sv_service_config(sv);
  sv_grpc *g = sg_xcalloc(1, sizeof *g);
  g->sv = sv;
  g->pool = pool;
  g->on_stopped = on_stopped;
  g->ud = ud;
  g->t_shutdown = (tag){TAG_SHUTDOWN, NULL};
  g->cq = grpc_completion_queue_create_for_next(NULL);

  grpc_arg args[2];
  args[0].type = GRPC_ARG_INTEGER;
  args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
  args[0].value.integer = cfg->max_message_bytes > INT_MAX ? INT_MAX : (int)cfg->max_message_bytes;
  args[1].type = GRPC_ARG_INTEGER;
  args[1].key = (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
  args[1].value.integer = -1;
  grpc_channel_args ca = {2, args};
  g->server = grpc_server_create(&ca, NULL);
  grpc_server_register_completion_queue(g->server, g->cq, NULL);

  grpc_server_credentials *tls = NULL;
  if (cfg->tls_cert && !(tls = tls_credentials(cfg, err))) goto fail;
  /* the sockets are ours (no other daemon answers on them) before the local data path's
   * directory is swept, and the directory is ready before the first call is served */
  for (size_t i = 0; i < addrs->len; i++)
    if (!strncmp(addrs->items[i], "unix:", 5) && sv_unix_path_claim(addrs->items[i] + 5, err) != SG_OK) goto fail;
  if (sv_service_start_shm(sv, err) != SG_OK) goto fail;
  for (size_t i = 0; i < addrs->len; i++) {
    const char *a = addrs->items[i];
    bool is_unix = !strncmp(a, "unix:", 5);
    /* TLS on TCP; a unix socket is reachable only through its file, made 0600 */
    grpc_server_credentials *creds = tls && !is_unix ? tls : grpc_insecure_server_credentials_create();
    mode_t old_mask = umask(0177);
    int port = grpc_server_add_http2_port(g->server, a, creds);
    umask(old_mask);
    if (is_unix && port) chmod(a + 5, 0600);
    if (creds != tls) grpc_server_credentials_release(creds);
    if (port == 0) {
      sg_error_set(err, SG_UNAVAILABLE, "cannot listen for gRPC on '%s' (address in use, or not host:port / unix:PATH)", a);
      goto fail;
    }
    if (strncmp(a, "unix:", 5) != 0) {
      const char *colon = strrchr(a, ':');
      int len = colon ? (int)(colon - a) : (int)strlen(a);
      SG_INFO(0, "serving gRPC on %.*s:%d", len, a, port);
    } else {
      SG_INFO(0, "serving gRPC on %s", a);
    }
  }
  if (tls) grpc_server_credentials_release(tls);
  tls = NULL;
  grpc_server_start(g->server);
  request_new(g);
  if (pthread_create(&g->thread, NULL, cq_main, g) != 0) {
    sg_error_set(err, SG_INTERNAL, "cannot start the gRPC thread");
    grpc_server_shutdown_and_notify(g->server, g->cq, &g->t_shutdown);
    grpc_server_cancel_all_calls(g->server);
    /* drain here, since no thread does */
    atomic_store(&g->shutting_down, true);
    g->on_stopped = NULL;
    cq_main(g);
    grpc_server_destroy(g->server);
    grpc_completion_queue_destroy(g->cq);
    free(g);
    return NULL;
  }
  g->thread_started = true;
  return g;

fail:
  if (tls) grpc_server_credentials_release(tls);
  grpc_server_destroy(g->server);
  grpc_completion_queue_shutdown(g->cq);
  while (grpc_completion_queue_next(g->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type != GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(g->cq);
  free(g);
  return NULL;
}

/* Why OpenSSL must not clean up at exit: grpc_shutdown returns before gRPC's
 * event-engine threads have ended (gRPC 1.51, Debian 12). One that ends after
 * OpenSSL's atexit handler deleted its thread-state key never frees its error queue
 * (a 904-byte leak LeakSanitizer reports now and then: grpc/grpc#38539), and one
 * ending during the cleanup can free twice. Without the atexit handler each thread
 * frees its own state when it ends; OpenSSL's globals are released with the process
 * (what gRPC itself does in later releases, grpc/grpc#42608). */
void sv_grpc_library_init(void) {
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
  grpc_init();
}

void sv_grpc_shutdown(sv_grpc *g) {
  bool expected = false;
  if (!atomic_compare_exchange_strong(&g->shutting_down, &expected, true)) return;
  grpc_server_shutdown_and_notify(g->server, g->cq, &g->t_shutdown);
  maybe_shutdown_cq(g); /* ends idle connections now when no call is running */
}

void sv_grpc_cancel_all(sv_grpc *g) { grpc_server_cancel_all_calls(g->server); }

void sv_grpc_destroy(sv_grpc *g) {
  if (!g) return;
  sv_grpc_shutdown(g);
  if (g->thread_started) pthread_join(g->thread, NULL);
  grpc_server_destroy(g->server);
  grpc_completion_queue_destroy(g->cq);
  free(g);
}
