// SPDX-License-Identifier: Apache-2.0
/*
 * transport.h — the private interface between the daemon's main() and its
 * transports. Transports turn wire formats into sv_service_invoke* calls and back;
 * main() owns the libuv loop and their lifecycles.
 */
#ifndef STAGD_SERVER_TRANSPORT_H
#define STAGD_SERVER_TRANSPORT_H

#include <uv.h>

#include "auth.h"
#include "sv.h"

/* The bearer tokens the network transports check (--auth-token-file), or NULL. */
sv_auth *sv_service_auth(sv_service *sv);

/* "FILE:LINE:COL: MESSAGE" (location parts only when known), malloc'd: the text a
 * client sees in a gRPC status or a JSON-RPC error. */
char *sv_error_details(const sg_error *err);

/* ---------------------------------------------------------------- gRPC */

typedef struct sv_grpc sv_grpc;

/* grpc_init for a process using gRPC (the daemon; stagctl --addr), OpenSSL told first
 * not to clean itself up at exit. Call before anything else uses OpenSSL. */
void sv_grpc_library_init(void);

/* Listens on every address and starts the completion-queue thread. on_stopped runs
 * on that thread once shutdown has finished. NULL with err set on failure. */
sv_grpc *sv_grpc_start(sv_service *sv, sv_pool *pool, const sv_strlist *addrs,
                       void (*on_stopped)(void *ud), void *ud, sg_error *err);
/* Stops accepting calls; calls in flight run to completion. */
void sv_grpc_shutdown(sv_grpc *g);
/* Cancels the calls still in flight (after the shutdown timeout). */
void sv_grpc_cancel_all(sv_grpc *g);
/* Joins the thread and frees everything; call after on_stopped ran. */
void sv_grpc_destroy(sv_grpc *g);

/* ------------------------------------------------------- unix sockets */

/* Claims a unix socket path: a socket nobody answers on (a crashed daemon's) is
 * removed; one that someone answers on, or a file that is not a socket, is an error. */
sg_code sv_unix_path_claim(const char *path, sg_error *err);
/* A non-blocking listening socket at path (claimed first), mode 0600; -1 with err set. */
int sv_unix_listen(const char *path, sg_error *err);

/* ----------------------------------------------------- framed transport */

typedef struct sv_frames sv_frames;

/* Listens on PATH.frames beside every unix:PATH address (frames.c; docs/api.md "The
 * framed transport"): before gRPC starts, so both are there when a client learns the
 * daemon is up (a connection waits in the backlog until sv_frames_serve). NULL with
 * err set on failure (another process serves there); NULL and err untouched when no
 * address is a unix socket. */
sv_frames *sv_frames_listen(sv_service *sv, sv_pool *pool, const sv_strlist *addrs,
                            void (*on_stopped)(void *ud), void *ud, sg_error *err);
/* Starts its thread; on_stopped runs on that thread once shutdown has finished. */
sg_code sv_frames_serve(sv_frames *f, sg_error *err);
/* Stops accepting; calls in flight finish and their replies are sent. NULL: nothing. */
void sv_frames_shutdown(sv_frames *f);
/* Cancels the calls still in flight and closes every connection. */
void sv_frames_cancel_all(sv_frames *f);
/* Joins the thread and frees everything. NULL: nothing. */
void sv_frames_destroy(sv_frames *f);

/* ----------------------------------------------------------------- LSP */

typedef struct sv_lsp sv_lsp;

typedef struct sv_lsp_hooks {
  /* The stdio client sent `exit` or closed stdin: the daemon should stop with this
   * exit code (0 after `shutdown`, 1 otherwise, as LSP specifies). */
  void (*stdio_exit)(void *ud, int code);
  /* After sv_lsp_shutdown: every connection closed and every request answered. */
  void (*drained)(void *ud);
  void *ud;
} sv_lsp_hooks;

sv_lsp *sv_lsp_create(uv_loop_t *loop, sv_service *sv, sv_lsp_hooks hooks);
sg_code sv_lsp_serve_stdio(sv_lsp *l, sg_error *err);
sg_code sv_lsp_listen(sv_lsp *l, const char *addr, sg_error *err);
/* Stops listening; connections close once their pending requests are answered. */
void sv_lsp_shutdown(sv_lsp *l);
/* Marks every pending request cancelled (after the shutdown timeout). */
void sv_lsp_cancel_all(sv_lsp *l);
/* Closes the transport's own loop handle; call before the loop's last run. */
void sv_lsp_close_handles(sv_lsp *l);
void sv_lsp_destroy(sv_lsp *l);

#endif /* STAGD_SERVER_TRANSPORT_H */
