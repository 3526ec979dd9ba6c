// SPDX-License-Identifier: Apache-2.0
/*
 * rpc.c — stagctl's two ways to call a method: in-process through the service
 * layer, or as a unary gRPC call with gRPC core's client API. Remote errors are
 * rebuilt into an sg_error, location and reason included (trailing metadata
 * stagd-file-bin, stagd-line, stagd-column, stagd-reason), so both modes print the
 * same diagnostics.
 */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc.h"
#include "transport.h"

/* The port of "host:PORT" text: 1..65535 in decimal, else 0. */
static long port_of(const char *p) {
  if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5) return 0;
  long v = strtol(p, NULL, 10);
  return v <= 65535 ? v : 0;
}

bool ctl_addr_valid(const char *addr, char *why, size_t n) {
  static const char *const uris[] = {"unix:", "unix-abstract:", "dns:", "ipv4:", "ipv6:"};
  for (size_t i = 0; i < sizeof uris / sizeof uris[0]; i++)
    if (!strncmp(addr, uris[i], strlen(uris[i]))) {
      if (addr[strlen(uris[i])]) return true;
      snprintf(why, n, "names no %s: write %sPATH", i < 2 ? "socket" : "address", uris[i]);
      return false;
    }
  const char *colon = strrchr(addr, ':');
  if (addr[0] == '[') { /* [IPv6]:port */
    const char *close = strchr(addr, ']');
    if (close && close[1] == ':' && close > addr + 1 && port_of(close + 2)) return true;
    if (close && !close[1]) {
      snprintf(why, n, "has no port: write %s:%s", addr, strrchr(SV_DEFAULT_ADDR, ':') + 1);
      return false;
    }
  } else if (colon && strchr(addr, ':') == colon) { /* host:port */
    if (colon > addr && port_of(colon + 1)) return true;
    if (colon == addr) {
      snprintf(why, n, "has no host: write HOST%s, e.g. 127.0.0.1%s", colon, colon);
      return false;
    }
  } else if (!colon && *addr) {
    snprintf(why, n, "has no port: write %s:%s (the daemon's default port) or unix:PATH", addr,
             strrchr(SV_DEFAULT_ADDR, ':') + 1);
    return false;
  } else if (colon) { /* an IPv6 address without brackets */
    snprintf(why, n, "is ambiguous: write an IPv6 address in brackets, [%s]:PORT", addr);
    return false;
  }
  snprintf(why, n, "is not an address: write HOST:PORT (1-65535), [IPv6]:PORT or unix:PATH");
  return false;
}

/* A whole PEM file, NUL-terminated (malloc'd); NULL with err naming the flag. */
static char *read_file(const char *path, const char *flag, sg_error *err) {
  size_t len;
  char *text = sg_read_file(path, &len);
  if (!text) sg_error_set(err, SG_INVALID_ARGUMENT, "%s %s: %s", flag, path, strerror(errno));
  return text;
}

sg_code ctl_rpc_open(ctl_rpc *r, sg_error *err) {
  if (r->local) {
    r->sv = sv_service_create(&r->cfg, err);
    return r->sv ? SG_OK : SG_INTERNAL;
  }
  sv_grpc_library_init();
  grpc_channel_credentials *creds;
  if (r->tls_ca || r->tls_cert) {
    char *ca = r->tls_ca ? read_file(r->tls_ca, "--tls-ca", err) : NULL;
    char *cert = r->tls_cert ? read_file(r->tls_cert, "--tls-cert", err) : NULL;
    char *key = r->tls_key ? read_file(r->tls_key, "--tls-key", err) : NULL;
    if ((r->tls_ca && !ca) || (r->tls_cert && !cert) || (r->tls_key && !key)) {
      free(ca), free(cert), free(key);
      return err->code;
    }
    grpc_ssl_pem_key_cert_pair pair = {key, cert};
    creds = grpc_ssl_credentials_create(ca, cert ? &pair : NULL, NULL, NULL);
    free(ca), free(cert), free(key);
  } else {
    creds = grpc_insecure_credentials_create();
  }
  grpc_arg arg;
  arg.type = GRPC_ARG_INTEGER;
  arg.key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
  arg.value.integer = -1;
  grpc_channel_args args = {1, &arg};
  r->channel = grpc_channel_create(r->addr, creds, &args);
  grpc_channel_credentials_release(creds);
  return SG_OK;
}

void ctl_rpc_close(ctl_rpc *r) {
  free(r->token);
  r->token = NULL;
  if (r->local) {
    sv_service_destroy(r->sv);
    return;
  }
  if (r->channel) grpc_channel_destroy(r->channel);
  grpc_shutdown();
}

static char *slice_str(grpc_slice s) {
  return sg_xstrndup((const char *)GRPC_SLICE_START_PTR(s), GRPC_SLICE_LENGTH(s));
}

/* Why a connection failed, in a few words, from gRPC's status details (which name
 * c-ares, subchannels and "last error: UNKNOWN" along the way). */
static const char *unreachable_reason(const char *details) {
  static const struct { const char *needle, *reason; } table[] = {
      {"Connection refused", "connection refused (no daemon listens there)"},
      {"Domain name not found", "the host name does not resolve"},
      {"DNS resolution failed", "the host name does not resolve"},
      {"No such file or directory", "no such socket"},
      {"Permission denied", "permission denied"},
      {"timed out", "the connection timed out"},
      {"Network is unreachable", "the network is unreachable"},
      {"No route to host", "no route to the host"},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strstr(details, table[i].needle)) return table[i].reason;
  return details;
}

static sg_code remote_invoke(ctl_rpc *r, const sv_method *m, const ProtobufCMessage *req, sg_arena *arena,
                             ProtobufCMessage **reply, sg_error *err) {
  grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
  gpr_timespec deadline = r->timeout_s > 0
                              ? gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                                             gpr_time_from_millis((int64_t)(r->timeout_s * 1000), GPR_TIMESPAN))
                              : gpr_inf_future(GPR_CLOCK_REALTIME);
  grpc_slice method = grpc_slice_from_static_string(m->grpc_path);
  grpc_call *call = grpc_channel_create_call(r->channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq, method, NULL, deadline, NULL);

  size_t n = protobuf_c_message_get_packed_size(req);
  uint8_t *bytes = sg_arena_alloc(arena, n ? n : 1);
  protobuf_c_message_pack(req, bytes);
  grpc_slice body = grpc_slice_from_copied_buffer((const char *)bytes, n);
  grpc_byte_buffer *send = grpc_raw_byte_buffer_create(&body, 1);
  grpc_slice_unref(body);

  grpc_metadata_array initial, trailing;
  grpc_metadata_array_init(&initial);
  grpc_metadata_array_init(&trailing);
  grpc_byte_buffer *recv = NULL;
  grpc_status_code status = GRPC_STATUS_UNKNOWN;
  grpc_slice details = grpc_empty_slice();
  grpc_op ops[6];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  grpc_metadata auth;
  char *bearer = NULL;
  if (r->token) {
    bearer = sg_xmalloc(strlen(r->token) + 8);
    sprintf(bearer, "Bearer %s", r->token);
    auth.key = grpc_slice_from_static_string("authorization");
    auth.value = grpc_slice_from_copied_string(bearer);
    ops[0].data.send_initial_metadata.count = 1;
    ops[0].data.send_initial_metadata.metadata = &auth;
  }
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = send;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = &initial;
  ops[4].op = GRPC_OP_RECV_MESSAGE;
  ops[4].data.recv_message.recv_message = &recv;
  ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[5].data.recv_status_on_client.trailing_metadata = &trailing;
  ops[5].data.recv_status_on_client.status = &status;
  ops[5].data.recv_status_on_client.status_details = &details;
  sg_code rc = SG_OK;
  if (grpc_call_start_batch(call, ops, 6, (void *)1, NULL) != GRPC_CALL_OK) {
    rc = sg_error_set(err, SG_INTERNAL, "cannot start the gRPC call");
  } else {
    grpc_completion_queue_pluck(cq, (void *)1, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (status != GRPC_STATUS_OK) {
      char *msg = slice_str(details);
      char *file = NULL;
      int line = 0, col = 0;
      sg_reason reason = SG_REASON_NONE;
      for (size_t i = 0; i < trailing.count; i++) {
        char *k = slice_str(trailing.metadata[i].key), *v = slice_str(trailing.metadata[i].value);
        if (!strcmp(k, "stagd-file-bin")) file = sg_xstrdup(v);
        else if (!strcmp(k, "stagd-line")) line = atoi(v);
        else if (!strcmp(k, "stagd-column")) col = atoi(v);
        else if (!strcmp(k, "stagd-reason")) sg_reason_parse(v, &reason); /* unknown: none */
        free(k);
        free(v);
      }
      /* details repeat the location as a prefix for plain gRPC clients; drop it */
      const char *text = msg;
      if (file || line) {
        const char *sep = strstr(msg, ": ");
        if (sep) text = sep + 2;
      }
      if (status == GRPC_STATUS_UNAVAILABLE && !file)
        rc = sg_error_set(err, SG_UNAVAILABLE, "cannot reach stagd at %s: %s", r->addr, unreachable_reason(text));
      else
        rc = sg_error_set_at(err, (sg_code)status, file, line, col, "%s", text);
      if (err) err->reason = reason;
      free(msg);
      free(file);
    } else if (!recv) {
      rc = sg_error_set(err, SG_INTERNAL, "the daemon sent no reply message");
    } else {
      grpc_byte_buffer_reader rd;
      grpc_byte_buffer_reader_init(&rd, recv);
      grpc_slice s = grpc_byte_buffer_reader_readall(&rd);
      grpc_byte_buffer_reader_destroy(&rd);
      ProtobufCAllocator alloc = sv_arena_allocator(arena);
      *reply = protobuf_c_message_unpack(m->output, &alloc, GRPC_SLICE_LENGTH(s), GRPC_SLICE_START_PTR(s));
      grpc_slice_unref(s);
      if (!*reply) rc = sg_error_set(err, SG_INTERNAL, "the daemon's reply is not a valid %s", m->output->name);
    }
  }
  if (recv) grpc_byte_buffer_destroy(recv);
  grpc_byte_buffer_destroy(send);
  grpc_slice_unref(details);
  grpc_metadata_array_destroy(&initial);
  grpc_metadata_array_destroy(&trailing);
  if (bearer) {
    grpc_slice_unref(auth.value);
    free(bearer);
  }
  grpc_call_unref(call);
  grpc_completion_queue_shutdown(cq);
  grpc_completion_queue_destroy(cq);
  return rc;
}

sg_code ctl_rpc_invoke(ctl_rpc *r, const sv_method *m, const ProtobufCMessage *req, sg_arena *arena,
                       ProtobufCMessage **reply, sg_error *err) {
  if (!r->local) return remote_invoke(r, m, req, arena, reply, err);
  sv_call call = {.id = sv_service_next_id(r->sv), .arena = arena, .deadline_ns = 0, .cancelled = NULL};
  if (r->timeout_s > 0) call.deadline_ns = sg_now_ns() + (uint64_t)(r->timeout_s * 1e9);
  return sv_service_invoke(r->sv, m, &call, req, reply, err);
}
