// SPDX-License-Identifier: Apache-2.0
/*
 * stagd.c — the daemon's main(): reads the configuration, starts the service, the
 * worker pool and the transports, and runs the libuv loop that owns signals,
 * timers and LSP streams until a graceful shutdown.
 *
 * Shutdown (SIGINT, SIGTERM, or the stdio LSP client's `exit`): health turns
 * NOT_SERVING, transports stop accepting, requests in flight finish; after
 * --shutdown-timeout-ms they are cancelled. A second signal cancels at once. SIGHUP
 * rereads --auth-token-file.
 */
#include <grpc/grpc.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <uv.h>

#include "metrics.h"
#include "transport.h"

#ifndef STAGD_VERSION
#define STAGD_VERSION "0.0.0"
#endif

typedef struct stagd_daemon {
  uv_loop_t *loop;
  sv_config cfg;
  sv_service *sv;
  sv_pool *pool;
  sv_grpc *grpc;
  sv_frames *frames; /* PATH.frames beside each unix socket */
  sv_lsp *lsp;
  sv_metrics_http *metrics; /* --metrics-listen */
  uv_signal_t sigint, sigterm, sighup;
  uv_timer_t shutdown_timer;
  uv_timer_t lease_timer; /* releases the handles of client sessions gone silent */
  uv_async_t stopped; /* a transport's thread has finished its shutdown */
  atomic_bool grpc_stopped, frames_stopped;
  bool grpc_done, frames_done, lsp_done, stopping, handles_closed;
  int exit_code;
} stagd_daemon;

static void close_loop_handles(stagd_daemon *d) {
  if (d->handles_closed) return;
  d->handles_closed = true;
  uv_close((uv_handle_t *)&d->sigint, NULL);
  uv_close((uv_handle_t *)&d->sigterm, NULL);
  uv_close((uv_handle_t *)&d->sighup, NULL);
  uv_close((uv_handle_t *)&d->shutdown_timer, NULL);
  uv_close((uv_handle_t *)&d->lease_timer, NULL);
  uv_close((uv_handle_t *)&d->stopped, NULL);
  sv_lsp_close_handles(d->lsp);
}

static void check_done(stagd_daemon *d) {
  if (d->stopping && d->grpc_done && d->frames_done && d->lsp_done) close_loop_handles(d);
}

static void on_stopped_async(uv_async_t *a) {
  stagd_daemon *d = a->data;
  d->grpc_done |= atomic_load(&d->grpc_stopped);
  d->frames_done |= atomic_load(&d->frames_stopped);
  check_done(d);
}

/* Run on the gRPC and framed transports' threads. */
static void on_grpc_stopped(void *ud) {
  stagd_daemon *d = ud;
  atomic_store(&d->grpc_stopped, true);
  uv_async_send(&d->stopped);
}

static void on_frames_stopped(void *ud) {
  stagd_daemon *d = ud;
  atomic_store(&d->frames_stopped, true);
  uv_async_send(&d->stopped);
}

static void on_lsp_drained(void *ud) {
  stagd_daemon *d = ud;
  d->lsp_done = true;
  check_done(d);
}

static void cancel_in_flight(stagd_daemon *d) {
  if (d->grpc) sv_grpc_cancel_all(d->grpc);
  sv_frames_cancel_all(d->frames);
  sv_lsp_cancel_all(d->lsp);
}

static void on_lease_tick(uv_timer_t *t) {
  stagd_daemon *d = t->data;
  sv_service_expire_sessions(d->sv);
}

static void on_shutdown_timeout(uv_timer_t *t) {
  stagd_daemon *d = t->data;
  SG_WARN(0, "shutdown timeout (%llu ms): cancelling the requests still running",
          (unsigned long long)d->cfg.shutdown_timeout_ms);
  cancel_in_flight(d);
}

static void begin_shutdown(stagd_daemon *d, int exit_code, const char *why) {
  if (d->stopping) return;
  d->stopping = true;
  d->exit_code = exit_code;
  SG_INFO(0, "shutting down (%s): finishing requests in flight", why);
  sv_service_set_draining(d->sv);
  if (d->grpc) sv_grpc_shutdown(d->grpc);
  sv_frames_shutdown(d->frames);
  sv_lsp_shutdown(d->lsp);
  uv_timer_start(&d->shutdown_timer, on_shutdown_timeout, d->cfg.shutdown_timeout_ms, 0);
  check_done(d);
}

static void on_signal(uv_signal_t *s, int signum) {
  stagd_daemon *d = s->data;
  if (d->stopping) {
    SG_WARN(0, "second signal: cancelling the requests still running");
    cancel_in_flight(d);
    return;
  }
  begin_shutdown(d, 0, signum == SIGINT ? "SIGINT" : "SIGTERM");
}

/* SIGHUP rereads --auth-token-file; a file that no longer parses keeps the tokens in
 * force (and says why). */
static void on_sighup(uv_signal_t *s, int signum) {
  stagd_daemon *d = s->data;
  (void)signum;
  sv_auth *auth = sv_service_auth(d->sv);
  if (!auth) {
    SG_INFO(0, "SIGHUP: nothing to reread (no --auth-token-file)");
    return;
  }
  sg_error err = SG_ERROR_INIT;
  if (sv_auth_reload(auth, &err) != SG_OK) {
    char *msg = sg_error_format(&err);
    SG_WARN(0, "SIGHUP: keeping the tokens in force: %s", msg);
    free(msg);
    sg_error_clear(&err);
  }
}

/* Says which addresses anyone on the network may use without TLS and tokens. */
static void warn_exposed(const sv_config *c) {
  if (c->metrics_listen && !c->auth_token_file && !sv_addr_is_local(c->metrics_listen))
    SG_WARN(0, "--insecure: metrics on %s are served to the network without tokens", c->metrics_listen);
  if (c->tls_cert && c->auth_token_file) return;
  const sv_strlist *lists[2] = {&c->listen, &c->lsp_listen};
  for (int k = 0; k < 2; k++)
    for (size_t i = 0; i < lists[k]->len; i++)
      if (!sv_addr_is_local(lists[k]->items[i]))
        SG_WARN(0, "--insecure: %s is served to the network without %s%s%s: anyone who can connect may use the daemon",
                lists[k]->items[i], c->tls_cert ? "" : "TLS", !c->tls_cert && !c->auth_token_file ? " and " : "",
                c->auth_token_file ? "" : "tokens");
}

static void on_stdio_exit(void *ud, int code) {
  begin_shutdown(ud, code, "the LSP client ended the session");
}

/* "stagd: FILE:LINE:COL: error: MESSAGE" on stderr, then the error is cleared. */
static void print_error(sg_error *err) {
  char *msg = sg_error_format(err);
  fprintf(stderr, "stagd: %s\n", msg);
  free(msg);
  sg_error_clear(err);
}

int main(int argc, char **argv) {
  sg_memory_tune_for_reuse();
  signal(SIGPIPE, SIG_IGN); /* a vanished client is an error on its write, not a crash */
  stagd_daemon d = {0};
  sv_config_init(&d.cfg);
  sg_error err = SG_ERROR_INIT;
  bool exit_now;
  int exit_code;
  if (sv_config_load(&d.cfg, argc, argv, &exit_now, &exit_code, &err) != SG_OK) {
    print_error(&err);
    sv_config_free(&d.cfg);
    return 2;
  }
  if (exit_now) {
    sv_config_free(&d.cfg);
    return exit_code;
  }
  sg_log_set_level(d.cfg.log_level);
  sg_log_set_format(d.cfg.log_format);

  sv_grpc_library_init(); /* before the service: OpenSSL's first use sets its exit behaviour */
  d.loop = uv_default_loop();
  d.sv = sv_service_create(&d.cfg, &err);
  if (!d.sv) {
    print_error(&err);
    sv_config_free(&d.cfg);
    grpc_shutdown();
    return 2;
  }
  d.pool = sv_pool_create(d.cfg.workers);
  uv_async_init(d.loop, &d.stopped, on_stopped_async);
  d.stopped.data = &d;
  uv_timer_init(d.loop, &d.shutdown_timer);
  d.shutdown_timer.data = &d;
  uv_timer_init(d.loop, &d.lease_timer);
  d.lease_timer.data = &d;
  if (d.cfg.handle_lease_ms) { /* a session is released within 1.25 leases of its last call */
    uint64_t tick = d.cfg.handle_lease_ms / 4;
    tick = tick < 20 ? 20 : tick > 10000 ? 10000 : tick;
    uv_timer_start(&d.lease_timer, on_lease_tick, tick, tick);
  }
  uv_signal_init(d.loop, &d.sigint);
  uv_signal_init(d.loop, &d.sigterm);
  d.sigint.data = d.sigterm.data = &d;
  uv_signal_start(&d.sigint, on_signal, SIGINT);
  uv_signal_start(&d.sigterm, on_signal, SIGTERM);
  uv_signal_init(d.loop, &d.sighup);
  d.sighup.data = &d;
  uv_signal_start(&d.sighup, on_sighup, SIGHUP);
  warn_exposed(&d.cfg);
  d.lsp = sv_lsp_create(d.loop, d.sv, (sv_lsp_hooks){on_stdio_exit, on_lsp_drained, &d});

  int rc = 0;
  if (d.cfg.listen.len && !d.cfg.no_frames &&
      !(d.frames = sv_frames_listen(d.sv, d.pool, &d.cfg.listen, on_frames_stopped, &d, &err)) && err.code)
    rc = 2;
  if (rc == 0 && d.cfg.listen.len) {
    d.grpc = sv_grpc_start(d.sv, d.pool, &d.cfg.listen, on_grpc_stopped, &d, &err);
    if (!d.grpc) rc = 2;
  }
  if (rc == 0 && d.frames && sv_frames_serve(d.frames, &err) != SG_OK) rc = 2;
  if (rc != 0 && d.frames) { /* never served: its sockets go now */
    sv_frames_destroy(d.frames);
    d.frames = NULL;
  }
  d.grpc_done = d.grpc == NULL;
  d.frames_done = d.frames == NULL;
  if (rc == 0 && d.cfg.lsp && d.cfg.stdio && sv_lsp_serve_stdio(d.lsp, &err) != SG_OK) rc = 2;
  for (size_t i = 0; rc == 0 && i < d.cfg.lsp_listen.len; i++)
    if (sv_lsp_listen(d.lsp, d.cfg.lsp_listen.items[i], &err) != SG_OK) rc = 2;
  if (rc == 0 && d.cfg.metrics_listen && !(d.metrics = sv_metrics_http_start(d.sv, d.cfg.metrics_listen, &err)))
    rc = 2;

  if (rc != 0) {
    print_error(&err);
    begin_shutdown(&d, 2, "start-up failed");
  } else {
    SG_INFO(0, "stagd %s ready: %d workers, device %s", STAGD_VERSION, d.cfg.workers, d.cfg.device);
  }
  uv_run(d.loop, UV_RUN_DEFAULT);

  sv_metrics_http_stop(d.metrics);
  sv_grpc_destroy(d.grpc);
  sv_frames_destroy(d.frames);
  sv_pool_destroy(d.pool);
  sv_lsp_destroy(d.lsp);
  sv_service_destroy(d.sv);
  uv_loop_close(d.loop);
  grpc_shutdown();
  SG_INFO(0, "stopped");
  rc = d.exit_code;
  sg_error_clear(&err);
  sv_config_free(&d.cfg);
  return rc;
}
