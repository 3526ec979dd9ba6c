// SPDX-License-Identifier: Apache-2.0
/*
 * lsp_child.c — runs a helper process for an LSP feature (stagd/graph spawns
 * `python3 -m stagd.runtime.lsp_stage`): input on its stdin, its stdout and stderr
 * collected, killed after a time limit or as soon as the request is cancelled.
 *
 * Features run on worker threads, never on the daemon's libuv loop, so the child is
 * driven by a private loop of the worker (uv_spawn, pipes, a deadline timer and a
 * timer polling the request's cancel flag). The daemon's loop is never blocked and
 * knows nothing about the child; libuv reaps it on the private loop.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "lsp_features.h"
#include "transport.h"

enum {
  CANCEL_POLL_MS = 10,
  EXIT_GRACE_MS = 2000, /* after the exit, how long a pipe may stay open (grandchildren) */
  MAX_STDERR_BYTES = 64 * 1024,
};

typedef struct child_run {
  uv_loop_t loop;
  uv_process_t proc;
  uv_pipe_t in, out, err;
  uv_timer_t deadline, poll, grace;
  uv_write_t wreq;
  sv_lsp_child *res;
  atomic_bool *cancelled;
  size_t max_out;
  bool exited, killed;
} child_run;

static void close_if_open(uv_handle_t *h) {
  if (!uv_is_closing(h)) uv_close(h, NULL);
}

static void kill_child(child_run *r) {
  if (r->exited || r->killed) return;
  r->killed = true;
  uv_process_kill(&r->proc, SIGKILL);
}

/* The exit was seen and both output pipes reached EOF: nothing left to wait for. */
static void maybe_done(child_run *r) {
  if (r->exited && uv_is_closing((uv_handle_t *)&r->out) && uv_is_closing((uv_handle_t *)&r->err))
    uv_timer_stop(&r->grace);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  child_run *r = h->data;
  sg_buf *b = (uv_pipe_t *)h == &r->out ? &r->res->out : &r->res->err;
  (void)suggested;
  sg_buf_reserve(b, 65536);
  buf->base = b->data + b->len;
  buf->len = b->cap - b->len - 1;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  child_run *r = s->data;
  sg_buf *b = (uv_pipe_t *)s == &r->out ? &r->res->out : &r->res->err;
  (void)buf;
  if (n < 0) {
    uv_read_stop(s);
    close_if_open((uv_handle_t *)s);
    maybe_done(r);
    return;
  }
  b->len += (size_t)n;
  b->data[b->len] = '\0';
  if (b == &r->res->err && b->len > MAX_STDERR_BYTES) { /* keep the tail: the error is last */
    size_t keep = MAX_STDERR_BYTES / 2;
    memmove(b->data, b->data + b->len - keep, keep);
    b->len = keep;
    b->data[keep] = '\0';
  }
  if (b == &r->res->out && b->len > r->max_out) {
    r->res->too_large = true;
    kill_child(r);
  }
}

static void on_written(uv_write_t *w, int status) {
  child_run *r = w->data;
  (void)status; /* EPIPE: the child exited without reading; its exit status says why */
  close_if_open((uv_handle_t *)&r->in);
}

static void on_grace(uv_timer_t *t) {
  child_run *r = t->data;
  close_if_open((uv_handle_t *)&r->out);
  close_if_open((uv_handle_t *)&r->err);
}

static void on_deadline(uv_timer_t *t) {
  child_run *r = t->data;
  r->res->timed_out = true;
  kill_child(r);
}

static void on_poll(uv_timer_t *t) {
  child_run *r = t->data;
  if (r->cancelled && atomic_load(r->cancelled)) {
    r->res->cancelled = true;
    kill_child(r);
  }
}

static void close_walk(uv_handle_t *h, void *arg) {
  (void)arg;
  close_if_open(h);
}

static void exit_cb(uv_process_t *p, int64_t status, int sig) {
  child_run *r = p->data;
  r->exited = true;
  r->res->exit_status = status;
  r->res->term_signal = sig;
  uv_timer_stop(&r->deadline);
  uv_timer_stop(&r->poll);
  close_if_open((uv_handle_t *)p);
  uv_timer_start(&r->grace, on_grace, EXIT_GRACE_MS, 0);
  maybe_done(r);
}

sg_code sv_lsp_run_child(char *const argv[], char *const env[], const char *input, size_t len, uint64_t timeout_ms,
                         atomic_bool *cancelled, size_t max_out, sv_lsp_child *res, sg_error *err) {
  memset(res, 0, sizeof *res);
  child_run *r = sg_xcalloc(1, sizeof *r);
  r->res = res;
  r->cancelled = cancelled;
  r->max_out = max_out;
  int rc = uv_loop_init(&r->loop);
  if (rc != 0) {
    free(r);
    return sg_error_set(err, SG_INTERNAL, "cannot start '%s': uv_loop_init: %s", argv[0], uv_strerror(rc));
  }
  uv_pipe_t *pipes[3] = {&r->in, &r->out, &r->err};
  for (int i = 0; i < 3; i++) {
    uv_pipe_init(&r->loop, pipes[i], 0);
    pipes[i]->data = r;
  }
  uv_timer_t *timers[3] = {&r->deadline, &r->poll, &r->grace};
  for (int i = 0; i < 3; i++) {
    uv_timer_init(&r->loop, timers[i]);
    timers[i]->data = r;
  }
  uv_stdio_container_t stdio[3];
  stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
  stdio[0].data.stream = (uv_stream_t *)&r->in;
  stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[1].data.stream = (uv_stream_t *)&r->out;
  stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[2].data.stream = (uv_stream_t *)&r->err;
  uv_process_options_t opts;
  memset(&opts, 0, sizeof opts);
  opts.file = argv[0];
  opts.args = (char **)argv;
  opts.env = (char **)env;
  opts.exit_cb = exit_cb;
  opts.stdio = stdio;
  opts.stdio_count = 3;
  r->proc.data = r;
  sg_code out = SG_OK;
  rc = uv_spawn(&r->loop, &r->proc, &opts);
  if (rc != 0) {
    out = sg_error_set(err, SG_UNAVAILABLE, "cannot start '%s': %s", argv[0], uv_strerror(rc));
  } else {
    uv_buf_t b = uv_buf_init((char *)input, (unsigned)len);
    r->wreq.data = r;
    if (uv_write(&r->wreq, (uv_stream_t *)&r->in, &b, 1, on_written) != 0) close_if_open((uv_handle_t *)&r->in);
    uv_read_start((uv_stream_t *)&r->out, on_alloc, on_read);
    uv_read_start((uv_stream_t *)&r->err, on_alloc, on_read);
    if (timeout_ms > 0) uv_timer_start(&r->deadline, on_deadline, timeout_ms, 0);
    uv_timer_start(&r->poll, on_poll, CANCEL_POLL_MS, CANCEL_POLL_MS);
    uv_run(&r->loop, UV_RUN_DEFAULT); /* until the child exited and its pipes closed */
  }
  uv_walk(&r->loop, close_walk, NULL);
  uv_run(&r->loop, UV_RUN_DEFAULT);
  rc = uv_loop_close(&r->loop);
  if (rc != 0) SG_WARN(0, "helper '%s': its loop did not close: %s", argv[0], uv_strerror(rc));
  free(r);
  if (!res->out.data) sg_buf_puts(&res->out, "");
  if (!res->err.data) sg_buf_puts(&res->err, "");
  return out;
}

void sv_lsp_child_free(sv_lsp_child *res) {
  sg_buf_free(&res->out);
  sg_buf_free(&res->err);
}
