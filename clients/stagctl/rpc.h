// SPDX-License-Identifier: Apache-2.0
/*
 * rpc.h — how stagctl reaches the service: in-process (--local, the same
 * sv_service_invoke the daemon's transports call) or over gRPC to a daemon.
 */
#ifndef STAGD_STAGCTL_RPC_H
#define STAGD_STAGCTL_RPC_H

#include "sv.h"

typedef struct ctl_rpc {
  bool local;
  const char *addr;
  double timeout_s; /* 0: none */
  sv_config cfg;    /* --local */
  sv_service *sv;   /* --local */
  void *channel;    /* grpc_channel*, remote */
  const char *tls_ca, *tls_cert, *tls_key; /* PEM files: TLS (and mutual TLS) */
  char *token;      /* bearer token (--token-file or $STAGD_TOKEN), malloc'd; NULL: none */
} ctl_rpc;

/* Is addr one stagctl can dial: host:port, [IPv6]:port, unix:PATH (or a gRPC target
 * URI: dns:, ipv4:, ipv6:, unix-abstract:)? When not, why[0..n) says what is wrong
 * and what to write (gRPC would dial a host without a port at port 443). */
bool ctl_addr_valid(const char *addr, char *why, size_t n);
sg_code ctl_rpc_open(ctl_rpc *r, sg_error *err);
void ctl_rpc_close(ctl_rpc *r);
/* Calls method m with req; *reply is allocated in arena. On failure err holds the
 * status code, the message and, when the service gave one, the location. */
sg_code ctl_rpc_invoke(ctl_rpc *r, const sv_method *m, const ProtobufCMessage *req, sg_arena *arena,
                       ProtobufCMessage **reply, sg_error *err);

#endif
