// SPDX-License-Identifier: Apache-2.0
/*
 * sv.h — the public API of server/: configuration, the service layer and the
 * transports that expose it.
 *
 *   config.c   one option table: flags, STAGD_* environment variables, config file
 *   service.c  the one place requests are handled: a method table (gRPC path, LSP
 *              method, request/reply descriptors, handler), stats, deadlines
 *   pbjson.c   protobuf-c messages ↔ JSON (proto3 JSON mapping), for LSP and stagctl
 *   pool.c     worker threads that run handlers off the event loop
 *   grpc.c     gRPC core transport (completion-queue thread ↔ worker pool)
 *   lsp.c      LSP / JSON-RPC 2.0 transport (Content-Length framing, libuv streams)
 *   stagd.c    the daemon's main(): libuv loop, signals, graceful shutdown
 *
 * Transports hold no logic: they decode bytes or JSON into the request message,
 * call sv_service_invoke*, and encode the reply. stagctl --local calls the same
 * functions in-process.
 */
#ifndef STAGD_SERVER_SV_H
#define STAGD_SERVER_SV_H

#include <cjson/cJSON.h>
#include <protobuf-c/protobuf-c.h>
#include <stdatomic.h>
#include <stdio.h>

#include "sg.h"

/* ------------------------------------------------------------------ config */

typedef struct sv_strlist {
  char **items;
  size_t len;
} sv_strlist;

typedef struct sv_config {
  sv_strlist listen;        /* gRPC addresses: host:port or unix:PATH */
  sv_strlist lsp_listen;    /* LSP over TCP: host:port */
  bool lsp;                 /* --lsp */
  bool stdio;               /* --stdio (with --lsp) */
  char *device;             /* auto | cpu | vulkan[:N] */
  char *config_file;        /* where the file options came from, or NULL */
  int workers;              /* worker threads (default: number of CPUs, at least 2) */
  sg_log_level log_level;
  sg_log_format log_format;     /* --log-format text|json */
  char *metrics_listen;         /* --metrics-listen host:port, or NULL */
  char *models_dir;             /* --models DIR, or NULL */
  uint64_t models_poll_ms;      /* rescans of models_dir (0: only at start) */
  uint64_t max_message_bytes;   /* largest request/message accepted */
  uint64_t deadline_ms;         /* default and maximum time per request (0: none) */
  uint64_t shutdown_timeout_ms; /* in-flight calls get this long on SIGTERM */
  uint64_t max_ping_delay_ms;   /* upper bound of Ping.delay_ms */
  uint64_t max_handle_bytes;    /* tensor bytes held by handles, per device */
  uint64_t max_handles;         /* live handles per device */
  uint64_t max_request_bytes;   /* tensors one request's program holds at once (0: none) */
  uint64_t max_session_requests; /* requests in flight per client session (0: none) */
  uint64_t max_unnamed_requests; /* the same for calls without a session, per token or address */
  uint64_t handle_lease_ms;     /* a session's handles go after this long unrenewed (0: never) */
  bool host_handles;            /* handles on Vulkan devices hold host copies (comparisons) */
  char *shm_dir;                /* --shm-dir: the local data path's directory (default SOCKET.shm) */
  bool no_shm;                  /* --no-shm: tensor payloads only inside messages */
  bool no_frames;               /* --no-frames: no PATH.frames socket beside unix --listen ones */
  bool listen_explicit;         /* some source named --listen */
  uint64_t max_session_handle_bytes; /* tensor bytes one session's handles may hold, all devices */
  uint64_t max_session_bytes;  /* one session's handles and running requests' tensors (0: none) */
  /* security (docs/security.md) */
  char *tls_cert, *tls_key;     /* --tls-cert/--tls-key PEM files: TLS on gRPC and LSP TCP */
  char *tls_client_ca;          /* --tls-client-ca: clients must present a certificate it signed */
  char *auth_token_file;        /* --auth-token-file: bearer tokens, one per line (SIGHUP reloads) */
  bool insecure;                /* --insecure: serve non-loopback addresses without TLS+tokens */
  bool lsp_allow_python;        /* --lsp-allow-python: stagd/graph may run the helper for TCP clients */
  uint64_t lsp_max_requests;    /* requests one LSP connection may have unanswered (0: none) */
  char *lsp_python;             /* --lsp-python: the helper's interpreter (operator's choice) */
} sv_config;

/* Whether ADDR (host:port, [v6]:port or unix:PATH) is reachable only from this machine. */
bool sv_addr_is_local(const char *addr);

#define SV_DEFAULT_ADDR "127.0.0.1:7420"

void sv_config_init(sv_config *c); /* defaults */
void sv_config_free(sv_config *c);
/* Applies, in increasing precedence: the config file (--config or STAGD_CONFIG),
 * STAGD_* environment variables, then argv. Sets *exit_now (with *exit_code) for
 * --help / --version, after printing. Errors name the flag, variable or FILE:LINE. */
sg_code sv_config_load(sv_config *c, int argc, char **argv, bool *exit_now, int *exit_code,
                       sg_error *err);
/* The --help text. */
void sv_config_print_help(FILE *out);

/* ---------------------------------------------------------------- service */

typedef struct sv_service sv_service;

/* What a handler knows about the request it serves. */
typedef struct sv_call {
  uint64_t id;               /* request id, for logs */
  sg_arena *arena;           /* reply and temporaries; freed by the transport */
  uint64_t deadline_ns;      /* sg_now_ns() clock; 0 = none */
  atomic_bool *cancelled;    /* set by the transport when the client gives up; may be NULL */
  const char *session;       /* the client's `stagd-session` metadata, or NULL (in arena) */
  uint64_t principal;        /* fingerprint of the caller's bearer token (0: no token checks) */
  bool local;                /* the caller came over a unix socket (the local data path) */
  struct sv_shm *shm;        /* set by sv_service_invoke for local callers when the path is on */
  uint64_t shm_min_bytes;    /* a Fetch: tensors of this size and up go through shm (0: none) */
  const char *shm_into;      /* a Fetch: the client's staging file for the first of them (in arena) */
} sv_call;

typedef sg_code (*sv_handler)(sv_service *sv, sv_call *call, const ProtobufCMessage *req,
                              ProtobufCMessage *reply, sg_error *err);

typedef struct sv_method {
  const char *name;      /* "Version" */
  const char *grpc_path; /* "/stagd.v1.Stagd/Version" */
  const char *lsp_name;  /* "stagd/version" */
  const ProtobufCMessageDescriptor *input;
  const ProtobufCMessageDescriptor *output;
  sv_handler handler;
} sv_method;

sv_service *sv_service_create(const sv_config *cfg, sg_error *err);
void sv_service_destroy(sv_service *sv);
const sv_config *sv_service_config(const sv_service *sv);
uint64_t sv_service_next_id(sv_service *sv);
/* Releases the handles of sessions whose lease ran out (the daemon's timer calls it). */
void sv_service_expire_sessions(sv_service *sv);
/* Health answers NOT_SERVING from now on (shutdown has begun). */
void sv_service_set_draining(sv_service *sv);

/* wire_check.c: the limit on nested messages in a binary request (protobuf-c unpacks
 * recursively). Well above what the value path accepts (64 nested records take 193
 * levels), so that its error, which names the argument path, comes first. */
#define SV_MAX_MESSAGE_DEPTH 500
/* Checks the wire bytes of a request before protobuf-c unpacks them: false, with the
 * problem in why, for messages nested deeper than SV_MAX_MESSAGE_DEPTH and string
 * fields that are not UTF-8 or hold a NUL. Malformed bytes pass (the unpacker refuses
 * them). */
bool sv_wire_check(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len, char *why, size_t cap);

/* Method lookup; NULL when unknown. */
const sv_method *sv_method_by_grpc_path(const char *path, size_t len);
const sv_method *sv_method_by_lsp_name(const char *name);
const sv_method *sv_method_by_name(const char *name);
size_t sv_method_count(void);
const sv_method *sv_method_at(size_t i);

/* Runs a handler: checks the deadline and shutdown state, records stats, logs.
 * *reply is allocated in call->arena (initialised even on error). */
sg_code sv_service_invoke(sv_service *sv, const sv_method *m, sv_call *call,
                          const ProtobufCMessage *req, ProtobufCMessage **reply, sg_error *err);
/* Protobuf bytes in, protobuf bytes out (gRPC). */
sg_code sv_service_invoke_bytes(sv_service *sv, const sv_method *m, sv_call *call,
                                const uint8_t *data, size_t len, sg_buf *out, sg_error *err);
/* JSON params in (NULL = empty message), JSON reply out (LSP, stagctl --local). */
sg_code sv_service_invoke_json(sv_service *sv, const sv_method *m, sv_call *call,
                               const cJSON *params, cJSON **reply, sg_error *err);

/* ------------------------------------------------------------- admission */

/* admission.c: the admin lane (Health, Version, Stats, Ping without delay), given the
 * request's bytes; and the per-session count of requests running or queued. */
bool sv_admin_lane(const sv_method *m, const uint8_t *data, size_t len);
/* Whether sv_admin_lane looks at m's request bytes (only Ping's): the others are not
 * joined into one buffer on the completion-queue thread. */
bool sv_admin_lane_reads_body(const sv_method *m);
typedef struct sv_admission sv_admission;
/* limit: requests per named session; unnamed: per token or client address for calls
 * without a session name (0: none) */
sv_admission *sv_admission_new(uint64_t limit, uint64_t unnamed);
void sv_admission_free(sv_admission *a);
/* Counts one more request of its caller: the session (principal, session) as handles
 * own data, or for a call without a session name its principal's anonymous bucket
 * (with tokens) or, without tokens, its peer's host (`peer` as gRPC spells it,
 * "ipv4:HOST:PORT"; the port is dropped, so new connections share the count).
 * RESOURCE_EXHAUSTED naming max-session-requests (max-unnamed-requests for calls without
 * a session name) when that caller is at its limit;
 * else SG_OK and *key (malloc'd, NULL when nothing was counted) for
 * sv_admission_leave, which frees it. */
sg_code sv_admission_enter(sv_admission *a, uint64_t principal, const char *session, const char *peer,
                           char **key, sg_error *err);
void sv_admission_leave(sv_admission *a, char *key);
sv_admission *sv_service_admission(sv_service *sv);
/* Opens the local data path's directory (shm.c; --shm-dir, default the first unix
 * socket's path + ".shm"; nothing with --no-shm or no unix socket). The gRPC transport
 * calls it once no other daemon answers on its sockets (so a second daemon refused the
 * socket never sweeps the first's files) and before it serves a call. */
sg_code sv_service_start_shm(sv_service *sv, sg_error *err);
/* The local data path's directory (shm.c), or NULL when off or no unix socket. */
struct sv_shm *sv_service_shm(sv_service *sv);

/* ----------------------------------------------------------------- pbjson */

/* A protobuf-c allocator that takes memory from an arena (free is a no-op). */
ProtobufCAllocator sv_arena_allocator(sg_arena *arena);
/* proto3 JSON mapping. Output omits fields at their default value. */
cJSON *sv_pbjson_encode(const ProtobufCMessage *msg);
/* Decodes json (an object, or NULL for an empty message) into a new message in arena.
 * Unknown fields, wrong types and bad enum names are INVALID_ARGUMENT errors naming the
 * field path. */
sg_code sv_pbjson_decode(const ProtobufCMessageDescriptor *desc, const cJSON *json,
                         sg_arena *arena, ProtobufCMessage **out, sg_error *err);

/* JSON text indented by two spaces, for people (stagctl); malloc'd. */
char *sv_json_pretty(const cJSON *json);

/* ------------------------------------------------------------ worker pool */

typedef struct sv_pool sv_pool;
typedef void (*sv_job_fn)(void *arg);

sv_pool *sv_pool_create(int threads);
void sv_pool_submit(sv_pool *p, sv_job_fn fn, void *arg);
/* Runs every queued job, then joins the threads. */
void sv_pool_destroy(sv_pool *p);

#endif /* STAGD_SERVER_SV_H */
