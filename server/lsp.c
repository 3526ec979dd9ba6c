// SPDX-License-Identifier: Apache-2.0
/*
 * lsp.c — the Language Server Protocol transport: JSON-RPC 2.0 messages framed by
 * `Content-Length: N\r\n\r\n` headers, over stdio (spawned by an editor) or TCP
 * (many editors sharing one daemon), on libuv streams.
 *
 * The loop thread reads bytes, cuts them into messages (lsp_frame.c), answers the protocol's lifecycle messages
 * (initialize, shutdown, exit, $/cancelRequest) and hands every `stagd/...` request
 * to the worker pool, which calls sv_service_invoke_json. Finished replies come back
 * to the loop through a uv_async and are written in order of completion.
 *
 * Language features (diagnostics, symbols, code lenses, hover, stagd/convertedCode,
 * stagd/graph) live in lsp_*.c behind lsp_features.h: requests for them run on the
 * pool over a copy of the document's text. Every didOpen / didChange bumps the
 * document's generation; after a quiet period (the debounce timer, `debounceMs`)
 * the newest text is analysed on the pool and textDocument/publishDiagnostics is sent
 * only if no newer text arrived meanwhile (an older analysis still running is marked
 * cancelled and its result dropped). See docs/lsp.md.
 *
 * Admission (docs/lsp.md "Admission"): LSP jobs run on a pool of their own (the
 * --workers count, at least 4 threads, started with the first job), never on gRPC's.
 * A connection may have --lsp-max-requests requests unanswered at once; one more is
 * answered at once with RequestFailed (-32803) "server busy". Of its jobs at most half
 * the pool (at least two) run at once, the rest wait in the connection's own queue, so
 * a slow request does not hold up the next one on its connection, and one
 * connection's slow or flooding requests leave threads to the others.
 *
 * Bad input never stops a session: garbage between messages is reported (-32700)
 * and skipped up to the next Content-Length header; an oversized message is
 * reported (-32600) and its body skipped; invalid JSON (-32700), malformed requests
 * (-32600), unknown methods (-32601) and bad params (-32602) get error replies.
 *
 * Security (docs/security.md): a TCP client is anyone who can connect. With
 * --auth-token-file its initialize must carry initializationOptions.token (else an
 * UNAUTHENTICATED error and the connection stays uninitialized); its `python` and
 * `pythonEnv` options are ignored (the operator chooses the helper's interpreter with
 * --lsp-python), and stagd/graph runs the Python helper for it only with
 * --lsp-allow-python. The stdio client is the daemon's own user: its options apply.
 * With --tls-cert/--tls-key every TCP connection speaks TLS (lsp_tls.c): reads go
 * through sv_tls_received before the framer, writes through sv_tls_send; a TLS error
 * (a plain-text client, no client certificate under mTLS) closes the connection.
 */
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "documents.h"
#include "lsp_features.h"
#include "lsp_frame.h"
#include "lsp_tls.h"
#include "transport.h"

#ifndef STAGD_VERSION
#define STAGD_VERSION "0.0.0"
#endif

enum {
  RPC_PARSE_ERROR = -32700,
  RPC_INVALID_REQUEST = -32600,
  RPC_METHOD_NOT_FOUND = -32601,
  RPC_INVALID_PARAMS = -32602,
  RPC_SERVER_NOT_INITIALIZED = -32002,
  RPC_SERVER_ERROR = -32000,
  RPC_REQUEST_CANCELLED = -32800,
  RPC_REQUEST_FAILED = -32803, /* LSP 3.17: the request was refused (server busy) */
  DEFAULT_DEBOUNCE_MS = 20,
  DEFAULT_STAGE_TIMEOUT_MS = 30000,
};

typedef struct conn conn;
typedef struct job job;

struct sv_lsp {
  uv_loop_t *loop;
  sv_service *sv;
  sv_pool *pool;              /* LSP jobs' own, created with the first */
  int pool_threads;
  sv_lsp_hooks hooks;
  uv_async_t done_async;
  pthread_mutex_t done_mu;
  job *done_head, *done_tail; /* finished jobs, for the loop thread */
  conn *conns;                /* linked list of open connections */
  uv_tcp_t **listeners;
  size_t n_listeners;
  sv_tls_ctx *tls;            /* --tls-cert: TCP connections speak TLS; NULL: plain */
  int open_handles;           /* listeners being closed */
  bool shutting_down;
  bool drained_reported;
};

struct conn {
  sv_lsp *l;
  conn *next;
  bool is_stdio;
  union {
    uv_pipe_t pipe;
    uv_tty_t tty;
    uv_tcp_t tcp;
  } in;
  union {
    uv_pipe_t pipe;
    uv_tty_t tty;
  } out;
  uv_stream_t *in_stream;  /* NULL when stdin is a regular file */
  uv_stream_t *out_stream; /* NULL when stdout is a regular file: written with write(2) */
  bool out_is_in;          /* TCP: one handle both ways */
  uv_fs_t file_read;       /* stdin as a regular file */
  char file_buf[65536];
  lsp_framer frame;         /* bytes read, cut into messages */
  bool initialized, shutdown_requested, eof, closing, close_started;
  int pending;        /* requests running on workers */
  int requests;       /* client requests unanswered (in `running`): the busy limit */
  int on_pool;        /* jobs submitted to the pool and not back yet */
  job *wait_head, *wait_tail; /* jobs waiting for the connection's share of workers */
  int handles_open;
  sg_map running;     /* id hash → job*, for $/cancelRequest */
  sv_docs docs;       /* open documents of this session */
  bool utf8_positions; /* negotiated positionEncoding */
  uv_timer_t debounce; /* re-analysis after edits */
  uint64_t debounce_ms;
  uint64_t next_gen;   /* document generations */
  py_conv_style style; /* the style diagnostics and hovers assume */
  char *python;        /* interpreter of stagd/graph's staging helper; NULL: default */
  uint64_t stage_timeout_ms;
  uint32_t client_commands; /* bit i: the client runs sv_lsp_command_at(i) itself */
  cJSON *python_env;        /* added to the staging helper's environment; NULL: none */
  uint64_t principal;       /* fingerprint of the token initialize carried (0: none needed) */
  sv_tls *tls;              /* TCP with --tls-cert: the connection's TLS state */
};

struct job {
  job *next;
  conn *c;
  const sv_method *m;
  cJSON *id;
  cJSON *params;
  uint64_t id_hash;
  atomic_bool cancelled;
  char *reply; /* framed JSON text, filled by the worker */
  size_t reply_len;
  /* language features (lsp_features.h) and analyses: a snapshot of the document */
  const sv_lsp_feature *feat;
  bool analysis; /* a publishDiagnostics run, not a request */
  char *uri;
  char *text;
  size_t text_len;
  int64_t version;
  uint64_t gen;
  bool utf16;
  py_conv_style style;
  char *python; /* stagd/graph: the session's interpreter option (copy) */
  cJSON *python_env; /* and its environment additions (copy) */
  uint64_t stage_timeout_ms;
  /* an analysis: stagd/convertedCode requests for its text wait on it (parked,
   * linked by park_next) when want_code is set; code_json is their answer */
  atomic_bool want_code;
  char *code_json;
  job *parked;
  job *park_next;
  cJSON *diags; /* an analysis's Diagnostic[], published by the loop thread */
  /* stagd/graph: the function it staged and the verdict for its diagnostics (a
   * staging error's Diagnostic, or NULL when it staged); stage_verdict is false when
   * the request said nothing about the function (bad params, no interpreter, ...) */
  char *stage_fn;
  cJSON *stage_diag;
  bool stage_verdict;
};

static void conn_maybe_close(conn *c);
static void conn_free(conn *c);
static void run_job(void *arg);

enum { LSP_MIN_THREADS = 4 };

/* Jobs one connection may have on the pool at once: half of it, at least two. */
static int pool_share(const conn *c) {
  int w = c->l->pool_threads / 2;
  return w > 2 ? w : 2;
}

/* Runs j on the pool now, or queues it behind the connection's running jobs. */
static void conn_submit(conn *c, job *j) {
  sv_lsp *l = c->l;
  if (!l->pool) {
    int w = sv_service_config(l->sv)->workers;
    l->pool_threads = w > LSP_MIN_THREADS ? w : LSP_MIN_THREADS;
    l->pool = sv_pool_create(l->pool_threads);
  }
  if (c->on_pool < pool_share(c)) {
    c->on_pool++;
    sv_pool_submit(c->l->pool, run_job, j);
    return;
  }
  j->next = NULL;
  if (c->wait_tail) c->wait_tail->next = j;
  else c->wait_head = j;
  c->wait_tail = j;
}

/* A job of c came back from the pool: the next waiting one takes its place. */
static void conn_job_back(conn *c) {
  c->on_pool--;
  while (c->wait_head && c->on_pool < pool_share(c)) {
    job *j = c->wait_head;
    c->wait_head = j->next;
    if (!c->wait_head) c->wait_tail = NULL;
    j->next = NULL;
    c->on_pool++;
    sv_pool_submit(c->l->pool, run_job, j);
  }
}

/* Whether c may take one more request; else answers it "server busy" (-32803). */
static bool conn_admit(conn *c, const cJSON *id);
static void lsp_check_drained(sv_lsp *l);

/* -------------------------------------------------------------- writing */

typedef struct write_req {
  uv_write_t req;
  char *data;
} write_req;

static void on_written(uv_write_t *req, int status) {
  write_req *w = (write_req *)req;
  free(w->data);
  free(w);
}

/* Writes b's bytes (freed) to the connection as they are. */
static void conn_write(conn *c, sg_buf *b) {
  if (c->out_stream) {
    if (uv_is_closing((uv_handle_t *)c->out_stream) || !uv_is_writable(c->out_stream)) {
      sg_buf_free(b);
      return;
    }
    write_req *w = sg_xmalloc(sizeof *w);
    size_t n;
    w->data = sg_buf_detach(b, &n);
    uv_buf_t ub = uv_buf_init(w->data, (unsigned)n);
    if (uv_write(&w->req, c->out_stream, &ub, 1, on_written) != 0) {
      free(w->data);
      free(w);
    }
  } else {
    /* stdout is a regular file: a blocking write cannot stall on a reader */
    size_t off = 0;
    while (off < b->len) {
      ssize_t k = write(STDOUT_FILENO, b->data + off, b->len - off);
      if (k <= 0) break;
      off += (size_t)k;
    }
    sg_buf_free(b);
  }
}

/* Frames body and sends it (through TLS on a TLS connection). Copies. */
static void conn_send_text(conn *c, const char *body, size_t len) {
  sg_buf b = SG_BUF_INIT;
  sg_buf_printf(&b, "Content-Length: %zu\r\n\r\n", len);
  sg_buf_append(&b, body, len);
  if (c->tls) {
    sg_buf wire = SG_BUF_INIT;
    bool ok = sv_tls_send(c->tls, b.data, b.len, &wire);
    sg_buf_free(&b);
    if (!ok) {
      sg_buf_free(&wire);
      return;
    }
    b = wire;
  }
  conn_write(c, &b);
}

static void send_json(conn *c, cJSON *msg) {
  char *text = cJSON_PrintUnformatted(msg);
  conn_send_text(c, text, strlen(text));
  cJSON_free(text);
}

static cJSON *make_response(const cJSON *id) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "jsonrpc", "2.0");
  cJSON_AddItemToObject(r, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
  return r;
}

static cJSON *make_error(const cJSON *id, int code, const char *message, cJSON *data) {
  cJSON *r = make_response(id);
  cJSON *e = cJSON_AddObjectToObject(r, "error");
  cJSON_AddNumberToObject(e, "code", code);
  cJSON_AddStringToObject(e, "message", message);
  if (data) cJSON_AddItemToObject(e, "data", data);
  return r;
}

static void send_error(conn *c, const cJSON *id, int code, const char *fmt, ...) SG_PRINTF(4, 5);
static void send_error(conn *c, const cJSON *id, int code, const char *fmt, ...) {
  sg_buf b = SG_BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  sg_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  cJSON *r = make_error(id, code, b.data, NULL);
  send_json(c, r);
  cJSON_Delete(r);
  sg_buf_free(&b);
}

/* The JSON-RPC error for a service error: bad params are -32602, a cancelled request
 * -32800, anything else -32000 with the status name, location and reason in `data`. */
static cJSON *service_error(const cJSON *id, const sg_error *err, bool decoding) {
  int code = err->code == SG_CANCELLED ? RPC_REQUEST_CANCELLED
             : decoding && err->code == SG_INVALID_ARGUMENT ? RPC_INVALID_PARAMS
                                                            : RPC_SERVER_ERROR;
  cJSON *data = cJSON_CreateObject();
  cJSON_AddStringToObject(data, "status", sg_code_name(err->code));
  if (err->file) cJSON_AddStringToObject(data, "file", err->file);
  if (err->line > 0) cJSON_AddNumberToObject(data, "line", err->line);
  if (err->col > 0) cJSON_AddNumberToObject(data, "column", err->col);
  if (err->reason) cJSON_AddStringToObject(data, "reason", sg_reason_name(err->reason));
  char *details = sv_error_details(err);
  cJSON *r = make_error(id, code, details, data);
  free(details);
  return r;
}

/* ------------------------------------------------------------ workers */

static uint64_t id_hash(const cJSON *id) {
  char *s = cJSON_PrintUnformatted(id);
  uint64_t h = sg_hash_bytes(s, strlen(s), 0);
  cJSON_free(s);
  return h;
}

static void job_done(job *j);

/* A language-feature request (lsp_features.h) on a worker. */
static void run_feature(job *j) {
  sv_lsp_request rq = {0};
  rq.method = j->feat->method;
  rq.uri = j->uri;
  rq.version = j->version;
  rq.params = j->params;
  rq.style = j->style;
  rq.cancelled = &j->cancelled;
  rq.sv = j->c->l->sv;
  rq.python = j->python;
  rq.python_env = j->python_env;
  rq.python_allowed = j->c->is_stdio || sv_service_config(rq.sv)->lsp_allow_python;
  rq.principal = j->c->principal;
  rq.stage_timeout_ms = j->stage_timeout_ms;
  sv_lsp_text_init(&rq.text, j->text, j->text_len, j->utf16);
  sg_watch w = {.cancel = &j->cancelled}; /* what the converter and stager poll */
  sg_watch *prev = sg_watch_enter(&w);
  cJSON *result = atomic_load(&j->cancelled) ? NULL : j->feat->run(&rq);
  sg_watch_leave(prev);
  if (rq.staged_function && !atomic_load(&j->cancelled)) {
    const cJSON *ds = rq.err_data ? cJSON_GetObjectItemCaseSensitive(rq.err_data, "diagnostics") : NULL;
    const cJSON *d = cJSON_GetArrayItem(ds, 0);
    j->stage_verdict = result || d;
    j->stage_fn = rq.staged_function;
    rq.staged_function = NULL;
    if (!result && d) {
      j->stage_diag = cJSON_Duplicate(d, 1);
      cJSON *data = cJSON_GetObjectItemCaseSensitive(j->stage_diag, "data");
      if (!cJSON_IsObject(data)) data = cJSON_AddObjectToObject(j->stage_diag, "data");
      cJSON_AddStringToObject(data, "function", j->stage_fn);
    }
  }
  free(rq.staged_function);
  cJSON *out;
  if (atomic_load(&j->cancelled)) {
    cJSON_Delete(result);
    out = make_error(j->id, RPC_REQUEST_CANCELLED, "Request cancelled", NULL);
  } else if (result) {
    out = make_response(j->id);
    cJSON_AddItemToObject(out, "result", result);
  } else {
    out = make_error(j->id, rq.err_code ? rq.err_code : RPC_SERVER_ERROR,
                     rq.err_message.data ? rq.err_message.data : "the request failed", rq.err_data);
    rq.err_data = NULL;
  }
  cJSON_Delete(rq.err_data);
  j->reply = cJSON_PrintUnformatted(out);
  j->reply_len = strlen(j->reply);
  cJSON_Delete(out);
  sg_buf_free(&rq.err_message);
  sv_lsp_text_free(&rq.text);
  job_done(j);
}

/* A document analysis on a worker: its Diagnostic[] (NULL when a newer text
 * superseded it meanwhile), published by the loop thread (publish_diagnostics). */
static void run_analysis(job *j) {
  sv_lsp_text t;
  sv_lsp_text_init(&t, j->text, j->text_len, j->utf16);
  j->diags = sv_lsp_diagnostics(&t, j->uri, j->style, &j->cancelled, &j->want_code, &j->code_json);
  sv_lsp_text_free(&t);
  job_done(j);
}

static void run_job(void *arg) {
  job *j = arg;
  if (j->analysis) {
    run_analysis(j);
    return;
  }
  if (j->feat) {
    run_feature(j);
    return;
  }
  sv_lsp *l = j->c->l;
  sg_arena arena;
  sg_arena_init(&arena, 16 * 1024);
  sv_call call = {.id = sv_service_next_id(l->sv), .arena = &arena, .deadline_ns = 0, .cancelled = &j->cancelled};
  call.principal = j->c->principal;
  sg_error err = SG_ERROR_INIT;
  /* decode first so a params error is told apart from a handler error */
  ProtobufCMessage *req;
  cJSON *out;
  sg_code rc = sv_pbjson_decode(j->m->input, j->params, &arena, &req, &err);
  if (rc != SG_OK) {
    out = service_error(j->id, &err, true);
  } else {
    ProtobufCMessage *reply;
    rc = sv_service_invoke(l->sv, j->m, &call, req, &reply, &err);
    if (rc == SG_OK) {
      out = make_response(j->id);
      cJSON_AddItemToObject(out, "result", sv_pbjson_encode(reply));
    } else {
      out = service_error(j->id, &err, false);
    }
  }
  j->reply = cJSON_PrintUnformatted(out);
  j->reply_len = strlen(j->reply);
  cJSON_Delete(out);
  sg_error_clear(&err);
  sg_arena_free(&arena);
  job_done(j);
}

/* Hands a finished job back to the loop thread. */
static void job_done(job *j) {
  sv_lsp *l = j->c->l;
  pthread_mutex_lock(&l->done_mu);
  if (l->done_tail) l->done_tail->next = j;
  else l->done_head = j;
  l->done_tail = j;
  pthread_mutex_unlock(&l->done_mu);
  uv_async_send(&l->done_async);
}

static void job_free(job *j) {
  if (j->reply) cJSON_free(j->reply);
  cJSON_Delete(j->diags);
  cJSON_Delete(j->stage_diag);
  free(j->stage_fn);
  cJSON_Delete(j->id);
  cJSON_Delete(j->params);
  free(j->uri);
  free(j->text);
  free(j->code_json);
  free(j->python);
  cJSON_Delete(j->python_env);
  free(j);
}

/* Answers a request with an already serialized result. */
static void send_raw_result(conn *c, const cJSON *id, const char *raw) {
  char *idt = cJSON_PrintUnformatted(id);
  sg_buf b = SG_BUF_INIT;
  sg_buf_reserve(&b, strlen(raw) + strlen(idt) + 40);
  sg_buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":", idt);
  sg_buf_puts(&b, raw);
  sg_buf_putc(&b, '}');
  conn_send_text(c, b.data, b.len);
  sg_buf_free(&b);
  cJSON_free(idt);
}

/* The stagd/convertedCode requests that waited for analysis a: answered with its
 * conversion, or (it was superseded, or the text has a syntax error) run on their own. */
static void answer_parked(conn *c, job *a) {
  for (job *p = a->parked, *next; p; p = next) {
    next = p->park_next;
    if (atomic_load(&p->cancelled) || (a->code_json && !c->close_started)) {
      if (atomic_load(&p->cancelled)) send_error(c, p->id, RPC_REQUEST_CANCELLED, "Request cancelled");
      else send_raw_result(c, p->id, a->code_json);
      sg_map_remove(&c->running, p->id_hash);
      c->requests--;
      c->pending--;
      job_free(p);
    } else {
      conn_submit(c, p);
    }
  }
  a->parked = NULL;
}

/* textDocument/publishDiagnostics for the document's current text: the analysis's
 * diagnostics and the staging errors of stagd/graph on the same text. */
static void publish_diagnostics(conn *c, sv_doc *doc) {
  cJSON *n = cJSON_CreateObject();
  cJSON_AddStringToObject(n, "jsonrpc", "2.0");
  cJSON_AddStringToObject(n, "method", "textDocument/publishDiagnostics");
  cJSON *p = cJSON_AddObjectToObject(n, "params");
  cJSON_AddStringToObject(p, "uri", doc->uri);
  cJSON_AddNumberToObject(p, "version", (double)doc->diags_version);
  cJSON *all = cJSON_Duplicate(doc->analysis_diags, 1);
  const cJSON *d;
  if (doc->stage_gen == doc->diags_gen) cJSON_ArrayForEach(d, doc->stage_diags) {
      cJSON_AddItemToArray(all, cJSON_Duplicate(d, 1));
    }
  cJSON_AddItemToObject(p, "diagnostics", all);
  send_json(c, n);
  cJSON_Delete(n);
}

/* A stagd/graph verdict on the document's current text: its staging error replaces
 * the function's previous one (a success removes it); published at once when the
 * analysis of that text was, else with it. */
static void record_staging(conn *c, sv_doc *doc, job *j) {
  if (doc->stage_gen != doc->gen || !doc->stage_diags) {
    cJSON_Delete(doc->stage_diags);
    doc->stage_diags = cJSON_CreateArray();
    doc->stage_gen = doc->gen;
  }
  bool changed = j->stage_diag != NULL;
  for (int i = cJSON_GetArraySize(doc->stage_diags) - 1; i >= 0; i--) {
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(doc->stage_diags, i), "data");
    const cJSON *fn = data ? cJSON_GetObjectItemCaseSensitive(data, "function") : NULL;
    if (cJSON_IsString(fn) && !strcmp(fn->valuestring, j->stage_fn)) {
      cJSON_DeleteItemFromArray(doc->stage_diags, i);
      changed = true;
    }
  }
  if (j->stage_diag) {
    cJSON_AddItemToArray(doc->stage_diags, j->stage_diag);
    j->stage_diag = NULL;
  }
  if (changed && doc->diags_gen == doc->gen && doc->analysis_diags) publish_diagnostics(c, doc);
}

static void on_jobs_done(uv_async_t *a) {
  sv_lsp *l = a->data;
  pthread_mutex_lock(&l->done_mu);
  job *j = l->done_head;
  l->done_head = l->done_tail = NULL;
  pthread_mutex_unlock(&l->done_mu);
  while (j) {
    job *next = j->next;
    conn *c = j->c;
    if (j->analysis) {
      /* publish only for the newest text of a document still open */
      sv_doc *doc = sv_docs_get(&c->docs, j->uri);
      if (doc && doc->analysis == j) doc->analysis = NULL;
      if (j->diags && doc && doc->gen == j->gen && !atomic_load(&j->cancelled)) {
        cJSON_Delete(doc->analysis_diags);
        doc->analysis_diags = j->diags;
        j->diags = NULL;
        doc->diags_gen = j->gen;
        doc->diags_version = j->version;
        publish_diagnostics(c, doc);
      }
      if (j->code_json && doc && doc->gen == j->gen) {
        free(doc->code_json);
        doc->code_json = sg_xstrdup(j->code_json);
        doc->code_gen = j->gen;
      }
      answer_parked(c, j);
    } else {
      /* the staging error's diagnostics go out before the reply: a client whose request
       * call unwinds on the error reply (Emacs's jsonrpc) drops what follows it in the
       * same read */
      sv_doc *doc = j->stage_verdict ? sv_docs_get(&c->docs, j->uri) : NULL;
      if (doc && doc->gen == j->gen) record_staging(c, doc, j);
      conn_send_text(c, j->reply, j->reply_len);
      sg_map_remove(&c->running, j->id_hash);
      c->requests--;
    }
    c->pending--;
    job_free(j);
    conn_job_back(c);
    conn_maybe_close(c);
    j = next;
  }
  lsp_check_drained(l);
}

/* ------------------------------------------------------------ messages */

/* UTF-8 positions when the client offers them (LSP 3.17), else UTF-16. */
static bool client_offers_utf8(const cJSON *params) {
  const cJSON *caps = cJSON_IsObject(params) ? cJSON_GetObjectItemCaseSensitive(params, "capabilities") : NULL;
  const cJSON *general = caps ? cJSON_GetObjectItemCaseSensitive(caps, "general") : NULL;
  const cJSON *encs = general ? cJSON_GetObjectItemCaseSensitive(general, "positionEncodings") : NULL;
  const cJSON *e;
  cJSON_ArrayForEach(e, encs) {
    if (cJSON_IsString(e) && !strcmp(e->valuestring, "utf-8")) return true;
  }
  return false;
}

static cJSON *initialize_result(bool utf8, uint32_t client_commands) {
  cJSON *r = cJSON_CreateObject();
  cJSON *caps = cJSON_AddObjectToObject(r, "capabilities");
  cJSON_AddStringToObject(caps, "positionEncoding", utf8 ? "utf-8" : "utf-16");
  cJSON *sync = cJSON_AddObjectToObject(caps, "textDocumentSync");
  cJSON_AddBoolToObject(sync, "openClose", 1);
  cJSON_AddNumberToObject(sync, "change", 2); /* incremental */
  cJSON_AddBoolToObject(caps, "documentSymbolProvider", 1);
  cJSON_AddBoolToObject(caps, "hoverProvider", 1);
  cJSON_AddBoolToObject(cJSON_AddObjectToObject(caps, "codeLensProvider"), "resolveProvider", 0);
  cJSON *cmds = cJSON_AddArrayToObject(cJSON_AddObjectToObject(caps, "executeCommandProvider"), "commands");
  for (size_t i = 0; i < sv_lsp_command_count(); i++)
    if (!(client_commands & (1u << i))) cJSON_AddItemToArray(cmds, cJSON_CreateString(sv_lsp_command_at(i)));
  cJSON *exp = cJSON_AddObjectToObject(caps, "experimental");
  cJSON *stagd = cJSON_AddObjectToObject(exp, "stagd");
  cJSON *methods = cJSON_AddArrayToObject(stagd, "methods");
  for (size_t i = 0; i < sv_method_count(); i++)
    cJSON_AddItemToArray(methods, cJSON_CreateString(sv_method_at(i)->lsp_name));
  for (size_t i = 0; i < sv_lsp_feature_count(); i++)
    if (sv_lsp_feature_at(i)->custom) cJSON_AddItemToArray(methods, cJSON_CreateString(sv_lsp_feature_at(i)->method));
  cJSON *info = cJSON_AddObjectToObject(r, "serverInfo");
  cJSON_AddStringToObject(info, "name", "stagd");
  cJSON_AddStringToObject(info, "version", STAGD_VERSION);
  return r;
}

/* A problem with a notification cannot be answered: tell the client's log. */
static void log_message(conn *c, int type, const char *fmt, ...) SG_PRINTF(3, 4);
static void log_message(conn *c, int type, const char *fmt, ...) {
  sg_buf b = SG_BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  sg_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  SG_WARN(0, "LSP: %s", b.data);
  cJSON *n = cJSON_CreateObject();
  cJSON_AddStringToObject(n, "jsonrpc", "2.0");
  cJSON_AddStringToObject(n, "method", "window/logMessage");
  cJSON *p = cJSON_AddObjectToObject(n, "params");
  cJSON_AddNumberToObject(p, "type", type);
  cJSON_AddStringToObject(p, "message", b.data);
  send_json(c, n);
  cJSON_Delete(n);
  sg_buf_free(&b);
}

/* ------------------------------------------------------------ analyses */

static bool is_python(const sv_doc *doc) {
  size_t n = strlen(doc->uri);
  return !strcmp(doc->language_id, "python") || (!*doc->language_id && n > 3 && !strcmp(doc->uri + n - 3, ".py"));
}

/* Analyses the document's current text on the pool (superseding one in flight). */
static void start_analysis(conn *c, sv_doc *doc) {
  doc->dirty = false;
  if (doc->analysis) atomic_store(&((job *)doc->analysis)->cancelled, true);
  doc->analysis = NULL;
  if (c->closing || !is_python(doc)) return;
  job *j = sg_xcalloc(1, sizeof *j);
  j->c = c;
  j->analysis = true;
  j->uri = sg_xstrdup(doc->uri);
  j->text = sg_xmalloc(doc->text.len + 1);
  memcpy(j->text, doc->text.data ? doc->text.data : "", doc->text.len);
  j->text[doc->text.len] = '\0';
  j->text_len = doc->text.len;
  j->version = doc->version;
  j->gen = doc->gen;
  j->utf16 = !c->utf8_positions;
  j->style = c->style;
  doc->analysis = j;
  c->pending++;
  conn_submit(c, j);
}

static void analyse_if_dirty(sv_doc *doc, void *ud) {
  if (doc->dirty) start_analysis(ud, doc);
}

static void on_debounce(uv_timer_t *t) {
  conn *c = t->data;
  sv_docs_foreach(&c->docs, analyse_if_dirty, c);
}

/* The text changed: supersede the analysis in flight, analyse after the quiet period. */
static void doc_changed(conn *c, sv_doc *doc) {
  doc->gen = ++c->next_gen;
  doc->dirty = true;
  bool busy = doc->analysis != NULL || uv_is_active((uv_handle_t *)&c->debounce);
  if (doc->analysis) atomic_store(&((job *)doc->analysis)->cancelled, true);
  /* leading edge: an edit after a quiet period is analysed at once; edits that follow
   * within debounce_ms of the previous one wait until the quiet period has passed */
  if (c->debounce_ms == 0 || !busy) start_analysis(c, doc);
  if (c->debounce_ms > 0) uv_timer_start(&c->debounce, on_debounce, c->debounce_ms, 0);
}

static void publish_empty(conn *c, const char *uri) {
  cJSON *n = cJSON_CreateObject();
  cJSON_AddStringToObject(n, "jsonrpc", "2.0");
  cJSON_AddStringToObject(n, "method", "textDocument/publishDiagnostics");
  cJSON *p = cJSON_AddObjectToObject(n, "params");
  cJSON_AddStringToObject(p, "uri", uri);
  cJSON_AddArrayToObject(p, "diagnostics");
  send_json(c, n);
  cJSON_Delete(n);
}

/* Over TCP with --auth-token-file: whether initializationOptions.token is a valid
 * token (its principal goes to the connection). stdio needs none. */
static bool authenticate(conn *c, const cJSON *params) {
  sv_auth *auth = sv_service_auth(c->l->sv);
  if (c->is_stdio || !auth) return true;
  const cJSON *o = cJSON_IsObject(params) ? cJSON_GetObjectItemCaseSensitive(params, "initializationOptions") : NULL;
  const cJSON *t = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "token") : NULL;
  return cJSON_IsString(t) && sv_auth_check(auth, t->valuestring, strlen(t->valuestring), &c->principal);
}

/* initializationOptions: {debounceMs?: number >= 0, style?: "autograph" | "snek"}. */
static void read_init_options(conn *c, const cJSON *params) {
  const cJSON *o = cJSON_IsObject(params) ? cJSON_GetObjectItemCaseSensitive(params, "initializationOptions") : NULL;
  if (!cJSON_IsObject(o)) return;
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "debounceMs");
  if (cJSON_IsNumber(d) && d->valuedouble >= 0 && d->valuedouble <= 60000) c->debounce_ms = (uint64_t)d->valuedouble;
  else if (d) log_message(c, 2, "initializationOptions.debounceMs must be a number of milliseconds (0..60000)");
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "style");
  if (st && (!cJSON_IsString(st) || !sv_lsp_parse_style(st->valuestring, &c->style)))
    log_message(c, 2, "initializationOptions.style must be \"autograph\" or \"snek\"");
  const cJSON *py = cJSON_GetObjectItemCaseSensitive(o, "python");
  const cJSON *pe = cJSON_GetObjectItemCaseSensitive(o, "pythonEnv"), *var;
  if (!c->is_stdio && ((py && !cJSON_IsNull(py)) || (pe && !cJSON_IsNull(pe)))) {
    /* a network client must not choose what the daemon executes */
    log_message(c, 2, "initializationOptions.python and pythonEnv are ignored over TCP: the daemon's operator "
                      "chooses the staging helper's interpreter (--lsp-python)");
    py = pe = NULL;
  }
  if (cJSON_IsString(py) && *py->valuestring) {
    free(c->python);
    c->python = sg_xstrdup(py->valuestring);
  } else if (py && !cJSON_IsNull(py)) {
    log_message(c, 2, "initializationOptions.python must be the path or name of a Python interpreter");
  }
  bool env_ok = cJSON_IsObject(pe);
  const cJSON *vars = env_ok ? pe : NULL;
  cJSON_ArrayForEach(var, vars) {
    if (!cJSON_IsString(var) || !*var->string || strchr(var->string, '=')) env_ok = false;
  }
  if (env_ok) {
    cJSON_Delete(c->python_env);
    c->python_env = cJSON_Duplicate(pe, 1);
  } else if (pe && !cJSON_IsNull(pe)) {
    log_message(c, 2, "initializationOptions.pythonEnv must be an object of environment variables with string "
                      "values ({\"PYTHONPATH\": \"/path/to/clients/python\"})");
  }
  const cJSON *cc = cJSON_GetObjectItemCaseSensitive(o, "clientCommands"), *name;
  if (cc && !cJSON_IsArray(cc)) log_message(c, 2, "initializationOptions.clientCommands must be an array of command names");
  const cJSON *names = cJSON_IsArray(cc) ? cc : NULL;
  cJSON_ArrayForEach(name, names) {
    for (size_t i = 0; i < sv_lsp_command_count(); i++)
      if (cJSON_IsString(name) && !strcmp(name->valuestring, sv_lsp_command_at(i))) c->client_commands |= 1u << i;
  }
  const cJSON *to = cJSON_GetObjectItemCaseSensitive(o, "stageTimeoutMs");
  if (cJSON_IsNumber(to) && to->valuedouble >= 1 && to->valuedouble <= 3600000) c->stage_timeout_ms = (uint64_t)to->valuedouble;
  else if (to) log_message(c, 2, "initializationOptions.stageTimeoutMs must be a number of milliseconds (1..3600000)");
}

/* textDocument/didOpen, didChange, didClose (didSave and others are ignored). */
static void handle_sync(conn *c, const char *name, const cJSON *params) {
  const cJSON *td = cJSON_IsObject(params) ? cJSON_GetObjectItemCaseSensitive(params, "textDocument") : NULL;
  const cJSON *uri = td ? cJSON_GetObjectItemCaseSensitive(td, "uri") : NULL;
  if (!cJSON_IsString(uri)) {
    log_message(c, 1, "%s: params.textDocument.uri must be a string", name);
    return;
  }
  const cJSON *version = cJSON_GetObjectItemCaseSensitive(td, "version");
  if (!strcmp(name, "textDocument/didOpen")) {
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(td, "text");
    const cJSON *lang = cJSON_GetObjectItemCaseSensitive(td, "languageId");
    if (!cJSON_IsString(text)) {
      log_message(c, 1, "%s: params.textDocument.text must be a string", name);
      return;
    }
    sv_doc *doc = sv_docs_open(&c->docs, uri->valuestring, cJSON_IsString(lang) ? lang->valuestring : "",
                               cJSON_IsNumber(version) ? (int64_t)version->valuedouble : 0, text->valuestring,
                               strlen(text->valuestring));
    doc->gen = ++c->next_gen;
    start_analysis(c, doc);
  } else if (!strcmp(name, "textDocument/didChange")) {
    sv_doc *doc = sv_docs_get(&c->docs, uri->valuestring);
    if (!doc) {
      log_message(c, 1, "%s: %s is not open", name, uri->valuestring);
      return;
    }
    const cJSON *changes = cJSON_GetObjectItemCaseSensitive(params, "contentChanges");
    if (!cJSON_IsArray(changes)) {
      log_message(c, 1, "%s: params.contentChanges must be an array", name);
      return;
    }
    const cJSON *ch;
    cJSON_ArrayForEach(ch, changes) {
      sg_error err = SG_ERROR_INIT;
      if (sv_doc_apply_change(doc, ch, !c->utf8_positions, &err) != SG_OK) {
        log_message(c, 1, "%s: %s: %s", name, uri->valuestring, err.message);
        sg_error_clear(&err);
        doc_changed(c, doc); /* earlier changes of the batch were applied */
        return;
      }
    }
    if (cJSON_IsNumber(version)) doc->version = (int64_t)version->valuedouble;
    doc_changed(c, doc);
  } else if (!strcmp(name, "textDocument/didClose")) {
    sv_doc *doc = sv_docs_get(&c->docs, uri->valuestring);
    if (doc && doc->analysis) atomic_store(&((job *)doc->analysis)->cancelled, true);
    if (!sv_docs_close(&c->docs, uri->valuestring)) log_message(c, 2, "%s: %s was not open", name, uri->valuestring);
    else publish_empty(c, uri->valuestring);
  }
}

static void conn_exit(conn *c) {
  int code = c->shutdown_requested ? 0 : 1;
  c->closing = true;
  if (c->is_stdio && c->l->hooks.stdio_exit) c->l->hooks.stdio_exit(c->l->hooks.ud, code);
  conn_maybe_close(c);
}

/* Does a stagd/convertedCode request ask for what the analyses compute: every
 * function, in the session's style? */
static bool default_conversion(conn *c, const cJSON *params) {
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(params, "function");
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(params, "style");
  py_conv_style style;
  if (f && !cJSON_IsNull(f) && !(cJSON_IsString(f) && !*f->valuestring)) return false;
  if (st && !cJSON_IsNull(st) && !(cJSON_IsString(st) && sv_lsp_parse_style(st->valuestring, &style) && style == c->style))
    return false;
  return true;
}

/* A language-feature request: checks the document, then runs it on the pool over a
 * copy of the text (stagd/convertedCode may be answered from the document's analysis). */
static bool conn_admit(conn *c, const cJSON *id) {
  uint64_t limit = sv_service_config(c->l->sv)->lsp_max_requests;
  if (!limit || (uint64_t)c->requests < limit) return true;
  bool id_ok = !cJSON_IsString(id) || sg_utf8_valid(id->valuestring, strlen(id->valuestring), NULL);
  send_error(c, id_ok ? id : NULL, RPC_REQUEST_FAILED,
             "server busy: this connection already has %llu requests unanswered, the limit "
             "(lsp-max-requests); wait for their answers or cancel some",
             (unsigned long long)limit);
  return false;
}

static void submit_feature(conn *c, const sv_lsp_feature *feat, const cJSON *id, const cJSON *params) {
  const char *name = feat->method;
  if (!conn_admit(c, id)) return;
  if (!cJSON_IsObject(params)) {
    bool id_ok = !cJSON_IsString(id) || sg_utf8_valid(id->valuestring, strlen(id->valuestring), NULL);
    send_error(c, id_ok ? id : NULL, RPC_INVALID_PARAMS, "Invalid params: '%s' takes an object with textDocument.uri", name);
    return;
  }
  const cJSON *td = cJSON_GetObjectItemCaseSensitive(params, "textDocument");
  const cJSON *uri = cJSON_IsObject(td) ? cJSON_GetObjectItemCaseSensitive(td, "uri") : NULL;
  if (!cJSON_IsString(uri)) {
    bool id_ok = !cJSON_IsString(id) || sg_utf8_valid(id->valuestring, strlen(id->valuestring), NULL);
    send_error(c, id_ok ? id : NULL, RPC_INVALID_PARAMS, "Invalid params: '%s' needs params.textDocument.uri (a string)", name);
    return;
  }
  sv_doc *doc = sv_docs_get(&c->docs, uri->valuestring);
  if (!doc) {
    bool id_ok = !cJSON_IsString(id) || sg_utf8_valid(id->valuestring, strlen(id->valuestring), NULL);
    send_error(c, id_ok ? id : NULL, RPC_INVALID_PARAMS,
               "Invalid params: %s: unknown document '%s': it is not open (send textDocument/didOpen first)", name,
               uri->valuestring);
    return;
  }
  job *j = sg_xcalloc(1, sizeof *j);
  j->c = c;
  j->feat = feat;
  j->id = cJSON_Duplicate(id, 1);
  j->params = cJSON_Duplicate(params, 1);
  j->id_hash = id_hash(id);
  j->uri = sg_xstrdup(doc->uri);
  j->text = sg_xmalloc(doc->text.len + 1);
  memcpy(j->text, doc->text.data ? doc->text.data : "", doc->text.len);
  j->text[doc->text.len] = '\0';
  j->text_len = doc->text.len;
  j->version = doc->version;
  j->gen = doc->gen;
  j->utf16 = !c->utf8_positions;
  j->style = c->style;
  j->python = c->python ? sg_xstrdup(c->python) : NULL;
  j->python_env = c->python_env ? cJSON_Duplicate(c->python_env, 1) : NULL;
  j->stage_timeout_ms = c->stage_timeout_ms;
  if (feat->run == sv_lsp_converted_code && default_conversion(c, params)) {
    /* the answer the analysis of this very text computes (or computed) */
    if (doc->code_json && doc->code_gen == doc->gen) {
      send_raw_result(c, id, doc->code_json);
      job_free(j);
      return;
    }
    if (doc->dirty && is_python(doc)) start_analysis(c, doc); /* no need to wait for the debounce */
    job *a = doc->analysis;
    if (a && a->gen == doc->gen && !atomic_load(&a->cancelled)) {
      atomic_store(&a->want_code, true);
      j->park_next = a->parked;
      a->parked = j;
      sg_map_put(&c->running, j->id_hash, j);
      c->requests++;
      c->pending++;
      return;
    }
  }
  sg_map_put(&c->running, j->id_hash, j);
  c->requests++;
  c->pending++;
  conn_submit(c, j);
}

static void handle_message(conn *c, const char *body, size_t len) {
  cJSON *msg = cJSON_ParseWithLength(body, len);
  if (!msg) {
    const char *at = cJSON_GetErrorPtr();
    long off = at && at >= body && at <= body + len ? (long)(at - body) : -1;
    send_error(c, NULL, RPC_PARSE_ERROR, "Parse error: the message body is not valid JSON (near byte %ld)", off);
    return;
  }
  if (!cJSON_IsObject(msg)) {
    send_error(c, NULL, RPC_INVALID_REQUEST, cJSON_IsArray(msg) ? "Invalid Request: batch messages are not supported"
                                                                : "Invalid Request: a message must be a JSON object");
    cJSON_Delete(msg);
    return;
  }
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
  const cJSON *ver = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
  if (id && !cJSON_IsNumber(id) && !cJSON_IsString(id) && !cJSON_IsNull(id)) {
    send_error(c, NULL, RPC_INVALID_REQUEST, "Invalid Request: 'id' must be a number or a string");
    goto done;
  }
  if (!cJSON_IsString(ver) || strcmp(ver->valuestring, "2.0") != 0) {
    send_error(c, id, RPC_INVALID_REQUEST, "Invalid Request: 'jsonrpc' must be \"2.0\"");
    goto done;
  }
  if (!method) {
    /* a response to a request of ours: we send none, so ignore it */
    if (cJSON_GetObjectItemCaseSensitive(msg, "result") || cJSON_GetObjectItemCaseSensitive(msg, "error")) goto done;
    send_error(c, id, RPC_INVALID_REQUEST, "Invalid Request: missing 'method'");
    goto done;
  }
  if (!cJSON_IsString(method)) {
    send_error(c, id, RPC_INVALID_REQUEST, "Invalid Request: 'method' must be a string");
    goto done;
  }
  if (params && !cJSON_IsObject(params) && !cJSON_IsArray(params) && !cJSON_IsNull(params)) {
    send_error(c, id, RPC_INVALID_REQUEST, "Invalid Request: 'params' must be an object or an array");
    goto done;
  }
  size_t bad;
  if (!sg_utf8_valid(body, len, &bad)) {
    /* JSON text is UTF-8 (RFC 8259); a string we cannot echo back is refused (a
     * notification gets the error with id null, as garbage does) */
    bool id_ok = !cJSON_IsString(id) || sg_utf8_valid(id->valuestring, strlen(id->valuestring), NULL);
    send_error(c, id_ok ? id : NULL, RPC_INVALID_PARAMS,
               "Invalid params: the message is not valid UTF-8 (byte %zu of the body)", bad);
    goto done;
  }
  const char *name = method->valuestring;
  bool is_request = id != NULL;

  if (!strcmp(name, "exit")) {
    conn_exit(c);
    goto done;
  }
  if (!strcmp(name, "initialize")) {
    if (!is_request) goto done;
    if (c->initialized) {
      send_error(c, id, RPC_INVALID_REQUEST, "Invalid Request: initialize was already called");
      goto done;
    }
    if (!authenticate(c, params)) {
      sg_error e = SG_ERROR_INIT;
      sg_error_set(&e, SG_UNAUTHENTICATED,
                   "this daemon requires a token: put one of its --auth-token-file tokens in "
                   "initializationOptions.token (VS Code: the stagd.token setting)");
      cJSON *r = service_error(id, &e, false);
      send_json(c, r);
      cJSON_Delete(r);
      sg_error_clear(&e);
      SG_INFO(0, "LSP: initialize without a valid token refused");
      goto done;
    }
    c->initialized = true;
    c->utf8_positions = client_offers_utf8(params);
    read_init_options(c, params);
    cJSON *r = make_response(id);
    cJSON_AddItemToObject(r, "result", initialize_result(c->utf8_positions, c->client_commands));
    send_json(c, r);
    cJSON_Delete(r);
    goto done;
  }
  if (!c->initialized) {
    if (is_request) send_error(c, id, RPC_SERVER_NOT_INITIALIZED, "Server not initialized: send 'initialize' first");
    goto done;
  }
  if (!strcmp(name, "initialized")) goto done;
  if (!strcmp(name, "$/cancelRequest")) {
    const cJSON *target = cJSON_IsObject(params) ? cJSON_GetObjectItemCaseSensitive(params, "id") : NULL;
    void *found;
    if (target && sg_map_get(&c->running, id_hash(target), &found)) atomic_store(&((job *)found)->cancelled, true);
    goto done;
  }
  if (c->shutdown_requested && is_request) {
    send_error(c, id, RPC_INVALID_REQUEST, "Invalid Request: the server is shutting down ('shutdown' was received)");
    goto done;
  }
  if (!strcmp(name, "shutdown")) {
    c->shutdown_requested = true;
    if (is_request) {
      cJSON *r = make_response(id);
      cJSON_AddNullToObject(r, "result");
      send_json(c, r);
      cJSON_Delete(r);
    }
    goto done;
  }
  if (!strncmp(name, "textDocument/did", 16)) {
    handle_sync(c, name, params);
    goto done;
  }
  if (!strcmp(name, "workspace/executeCommand")) {
    if (!is_request) goto done;
    cJSON *fparams;
    sg_buf why = SG_BUF_INIT;
    const sv_lsp_feature *cmd_feat = sv_lsp_command_params(params, &fparams, &why);
    if (cmd_feat) submit_feature(c, cmd_feat, id, fparams);
    else send_error(c, id, RPC_INVALID_PARAMS, "%s", why.data);
    cJSON_Delete(fparams);
    sg_buf_free(&why);
    goto done;
  }
  const sv_lsp_feature *feat = sv_lsp_feature_by_name(name);
  if (feat) {
    if (is_request) submit_feature(c, feat, id, params);
    goto done;
  }
  const sv_method *m = sv_method_by_lsp_name(name);
  if (!m) {
    if (is_request) send_error(c, id, RPC_METHOD_NOT_FOUND, "Method not found: '%s'", name);
    goto done; /* unknown notifications are ignored, as LSP allows */
  }
  if (!is_request) goto done;
  if (params && cJSON_IsArray(params)) {
    bool id_ok = !cJSON_IsString(id) || sg_utf8_valid(id->valuestring, strlen(id->valuestring), NULL);
    send_error(c, id_ok ? id : NULL, RPC_INVALID_PARAMS, "Invalid params: '%s' takes an object", name);
    goto done;
  }
  if (!conn_admit(c, id)) goto done;
  job *j = sg_xcalloc(1, sizeof *j);
  j->c = c;
  j->m = m;
  j->id = cJSON_Duplicate(id, 1);
  j->params = params ? cJSON_Duplicate(params, 1) : NULL;
  j->id_hash = id_hash(id);
  sg_map_put(&c->running, j->id_hash, j);
  c->requests++;
  c->pending++;
  conn_submit(c, j);
done:
  cJSON_Delete(msg);
}

/* ------------------------------------------------------------- framing */

static void process_input(conn *c) {
  const uint64_t max = sv_service_config(c->l->sv)->max_message_bytes;
  lsp_frame f;
  while (!c->closing && lsp_framer_next(&c->frame, max, &f) != LSP_FRAME_MORE) {
    if (f.kind == LSP_FRAME_ERROR) send_error(c, NULL, f.code, "%s", f.message);
    else handle_message(c, f.body, f.len);
  }
}

/* ------------------------------------------------------------- reading */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  conn *c = h->data;
  (void)suggested;
  if (c->tls) { /* ciphertext lands apart; the plaintext is fed to the framer */
    buf->base = c->file_buf;
    buf->len = sizeof c->file_buf;
    return;
  }
  lsp_framer_reserve(&c->frame, 65536);
  buf->base = c->frame.in.data + c->frame.in.len;
  buf->len = c->frame.in.cap - c->frame.in.len - 1;
}

static void on_eof(conn *c) {
  c->eof = true;
  if (c->is_stdio && !c->closing) {
    SG_INFO(0, "LSP client closed stdin%s", c->shutdown_requested ? "" : " without 'shutdown'");
    conn_exit(c);
  } else {
    c->closing = true;
    conn_maybe_close(c);
  }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  conn *c = s->data;
  if (nread < 0) {
    uv_read_stop(s);
    on_eof(c);
    return;
  }
  if (c->tls) {
    sg_buf plain = SG_BUF_INIT, wire = SG_BUF_INIT;
    char why[256] = "";
    bool ok = sv_tls_received(c->tls, buf->base, (size_t)nread, &plain, &wire, why, sizeof why);
    if (wire.len) conn_write(c, &wire);
    else sg_buf_free(&wire);
    if (plain.len) lsp_framer_feed(&c->frame, plain.data, plain.len);
    sg_buf_free(&plain);
    if (plain.len || ok) process_input(c);
    if (!ok) {
      SG_INFO(0, "LSP TLS connection closed: %s", why);
      uv_read_stop(s);
      on_eof(c);
    }
    return;
  }
  lsp_framer_received(&c->frame, (size_t)nread);
  process_input(c);
}

static void on_file_read(uv_fs_t *req) {
  conn *c = req->data;
  ssize_t n = req->result;
  uv_fs_req_cleanup(req);
  c->handles_open--;
  if (c->close_started) {
    if (c->handles_open == 0) conn_free(c);
    return;
  }
  if (n <= 0) {
    on_eof(c);
    return;
  }
  lsp_framer_feed(&c->frame, c->file_buf, (size_t)n);
  process_input(c);
  if (c->closing) {
    conn_maybe_close(c);
    return;
  }
  uv_buf_t ub = uv_buf_init(c->file_buf, sizeof c->file_buf);
  c->handles_open++;
  uv_fs_read(c->l->loop, &c->file_read, STDIN_FILENO, &ub, 1, -1, on_file_read);
}

/* ---------------------------------------------------------- connections */

static conn *conn_new(sv_lsp *l, bool is_stdio) {
  conn *c = sg_xcalloc(1, sizeof *c);
  c->l = l;
  c->is_stdio = is_stdio;
  lsp_framer_init(&c->frame);
  sv_docs_init(&c->docs);
  const char *env = getenv("STAGD_LSP_DEBOUNCE_MS");
  c->debounce_ms = env && *env ? strtoull(env, NULL, 10) : DEFAULT_DEBOUNCE_MS;
  c->style = PY_STYLE_AUTOGRAPH;
  c->stage_timeout_ms = DEFAULT_STAGE_TIMEOUT_MS;
  uv_timer_init(l->loop, &c->debounce);
  c->debounce.data = c;
  c->handles_open++;
  c->next = l->conns;
  l->conns = c;
  return c;
}

static void conn_free(conn *c) {
  sv_lsp *l = c->l;
  for (conn **p = &l->conns; *p; p = &(*p)->next) {
    if (*p == c) {
      *p = c->next;
      break;
    }
  }
  lsp_framer_free(&c->frame);
  sg_map_free(&c->running);
  sv_docs_free(&c->docs);
  free(c->python);
  cJSON_Delete(c->python_env);
  sv_tls_free(c->tls);
  free(c);
  lsp_check_drained(l);
}

static void on_conn_handle_closed(uv_handle_t *h) {
  conn *c = h->data;
  if (--c->handles_open == 0) conn_free(c);
}

static void on_out_shutdown(uv_shutdown_t *req, int status) {
  conn *c = req->data;
  free(req);
  if (!uv_is_closing((uv_handle_t *)c->out_stream)) uv_close((uv_handle_t *)c->out_stream, on_conn_handle_closed);
}

/* Closes a connection once it is closing and has no requests on workers. Pending
 * writes are flushed first (uv_shutdown), then the handles are closed. */
static void conn_maybe_close(conn *c) {
  if (!c->closing || c->pending > 0 || c->close_started) return;
  c->close_started = true;
  uv_timer_stop(&c->debounce);
  uv_close((uv_handle_t *)&c->debounce, on_conn_handle_closed);
  if (c->in_stream) {
    uv_read_stop(c->in_stream);
    if (!c->out_is_in) uv_close((uv_handle_t *)c->in_stream, on_conn_handle_closed);
  }
  if (c->out_stream) {
    uv_shutdown_t *req = sg_xmalloc(sizeof *req);
    req->data = c;
    if (uv_shutdown(req, c->out_stream, on_out_shutdown) != 0) {
      free(req);
      uv_close((uv_handle_t *)c->out_stream, on_conn_handle_closed);
    }
  }
  if (c->handles_open == 0) conn_free(c);
}

/* stdin/stdout may be pipes, sockets, terminals or regular files. */
static int open_std_stream(sv_lsp *l, conn *c, int fd, bool readable, uv_stream_t **out, void *storage) {
  uv_handle_type t = uv_guess_handle(fd);
  int rc;
  if (t == UV_NAMED_PIPE || t == UV_TCP || t == UV_UDP) {
    uv_pipe_t *p = storage;
    if ((rc = uv_pipe_init(l->loop, p, 0)) != 0) return rc;
    if ((rc = uv_pipe_open(p, fd)) != 0) {
      uv_close((uv_handle_t *)p, NULL);
      return rc;
    }
    *out = (uv_stream_t *)p;
  } else if (t == UV_TTY) {
    uv_tty_t *tty = storage;
    if ((rc = uv_tty_init(l->loop, tty, fd, readable)) != 0) return rc;
    *out = (uv_stream_t *)tty;
  } else {
    *out = NULL; /* regular file or unknown: plain read(2)/write(2) */
    return 0;
  }
  (*out)->data = c;
  c->handles_open++;
  return 0;
}

sg_code sv_lsp_serve_stdio(sv_lsp *l, sg_error *err) {
  conn *c = conn_new(l, true);
  int rc = open_std_stream(l, c, STDIN_FILENO, true, &c->in_stream, &c->in);
  if (rc == 0) rc = open_std_stream(l, c, STDOUT_FILENO, false, &c->out_stream, &c->out);
  if (rc != 0) {
    c->closing = true;
    conn_maybe_close(c);
    return sg_error_set(err, SG_UNAVAILABLE, "cannot use stdin/stdout for LSP: %s", uv_strerror(rc));
  }
  if (c->in_stream) {
    uv_read_start(c->in_stream, on_alloc, on_read);
  } else {
    c->file_read.data = c;
    uv_buf_t ub = uv_buf_init(c->file_buf, sizeof c->file_buf);
    c->handles_open++;
    uv_fs_read(l->loop, &c->file_read, STDIN_FILENO, &ub, 1, -1, on_file_read);
  }
  SG_INFO(0, "serving LSP on stdio");
  return SG_OK;
}

static void on_connection(uv_stream_t *server, int status) {
  sv_lsp *l = server->data;
  if (status < 0) {
    SG_WARN(0, "LSP accept failed: %s", uv_strerror(status));
    return;
  }
  conn *c = conn_new(l, false);
  uv_tcp_init(l->loop, &c->in.tcp);
  c->in.tcp.data = c;
  c->handles_open++;
  if (uv_accept(server, (uv_stream_t *)&c->in.tcp) != 0) {
    c->closing = true;
    uv_close((uv_handle_t *)&c->in.tcp, on_conn_handle_closed);
    return;
  }
  c->in_stream = c->out_stream = (uv_stream_t *)&c->in.tcp;
  c->out_is_in = true;
  if (l->tls && !(c->tls = sv_tls_new(l->tls))) {
    SG_WARN(0, "LSP: cannot set up TLS for a connection (out of memory)");
    c->closing = true;
    conn_maybe_close(c);
    return;
  }
  if (l->shutting_down) {
    c->closing = true;
    conn_maybe_close(c);
    return;
  }
  uv_read_start(c->in_stream, on_alloc, on_read);
}

sg_code sv_lsp_listen(sv_lsp *l, const char *addr, sg_error *err) {
  const sv_config *cfg = sv_service_config(l->sv);
  if (cfg->tls_cert && !l->tls && !(l->tls = sv_tls_ctx_new(cfg, err))) return err->code;
  const char *colon = strrchr(addr, ':');
  if (!colon || colon == addr || !colon[1])
    return sg_error_set(err, SG_INVALID_ARGUMENT, "--lsp-listen '%s': expected host:port", addr);
  char host[256];
  size_t hl = (size_t)(colon - addr);
  if (hl >= sizeof host) return sg_error_set(err, SG_INVALID_ARGUMENT, "--lsp-listen '%s': host too long", addr);
  memcpy(host, addr, hl);
  host[hl] = '\0';
  if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
    memmove(host, host + 1, hl - 2);
    host[hl - 2] = '\0';
  }
  struct addrinfo hints = {0}, *res = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  int gai = getaddrinfo(host, colon + 1, &hints, &res);
  if (gai != 0) return sg_error_set(err, SG_INVALID_ARGUMENT, "--lsp-listen '%s': %s", addr, gai_strerror(gai));
  uv_tcp_t *t = sg_xcalloc(1, sizeof *t);
  uv_tcp_init(l->loop, t);
  t->data = l;
  int rc = uv_tcp_bind(t, res->ai_addr, 0);
  freeaddrinfo(res);
  if (rc == 0) rc = uv_listen((uv_stream_t *)t, 128, on_connection);
  if (rc != 0) {
    uv_close((uv_handle_t *)t, (uv_close_cb)free);
    return sg_error_set(err, SG_UNAVAILABLE, "cannot listen for LSP on '%s': %s", addr, uv_strerror(rc));
  }
  struct sockaddr_storage ss;
  int len = sizeof ss;
  char ip[64] = "?";
  int port = 0;
  if (uv_tcp_getsockname(t, (struct sockaddr *)&ss, &len) == 0) {
    if (ss.ss_family == AF_INET6) {
      uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof ip);
      port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    } else {
      uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof ip);
      port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
  }
  SG_INFO(0, "serving LSP on %s:%d", ss.ss_family == AF_INET6 ? "[::]" : ip, port);
  l->listeners = sg_xrealloc(l->listeners, (l->n_listeners + 1) * sizeof *l->listeners);
  l->listeners[l->n_listeners++] = t;
  return SG_OK;
}

/* ------------------------------------------------------------- lifecycle */

sv_lsp *sv_lsp_create(uv_loop_t *loop, sv_service *sv, sv_lsp_hooks hooks) {
  sv_lsp *l = sg_xcalloc(1, sizeof *l);
  l->loop = loop;
  l->sv = sv;
  l->hooks = hooks;
  pthread_mutex_init(&l->done_mu, NULL);
  uv_async_init(loop, &l->done_async, on_jobs_done);
  l->done_async.data = l;
  return l;
}

static void on_listener_closed(uv_handle_t *h) {
  sv_lsp *l = h->data;
  free(h);
  l->open_handles--;
  lsp_check_drained(l);
}

static void lsp_check_drained(sv_lsp *l) {
  if (!l->shutting_down || l->drained_reported || l->conns || l->open_handles) return;
  l->drained_reported = true;
  if (l->hooks.drained) l->hooks.drained(l->hooks.ud);
}

void sv_lsp_shutdown(sv_lsp *l) {
  if (l->shutting_down) return;
  l->shutting_down = true;
  for (size_t i = 0; i < l->n_listeners; i++) {
    l->open_handles++;
    uv_close((uv_handle_t *)l->listeners[i], on_listener_closed);
  }
  l->n_listeners = 0;
  for (conn *c = l->conns, *next; c; c = next) {
    next = c->next;
    c->closing = true;
    conn_maybe_close(c);
  }
  lsp_check_drained(l);
}

void sv_lsp_cancel_all(sv_lsp *l) {
  for (conn *c = l->conns; c; c = c->next) {
    size_t it = 0;
    void *j;
    while (sg_map_next(&c->running, &it, NULL, &j)) atomic_store(&((job *)j)->cancelled, true);
  }
}

void sv_lsp_destroy(sv_lsp *l) {
  if (!l) return;
  if (l->pool) sv_pool_destroy(l->pool); /* idle by now: the loop drained every connection */
  free(l->listeners);
  sv_tls_ctx_free(l->tls);
  pthread_mutex_destroy(&l->done_mu);
  free(l);
}

/* The async handle must be closed on the loop before the loop ends. */
void sv_lsp_close_handles(sv_lsp *l) { uv_close((uv_handle_t *)&l->done_async, NULL); }
