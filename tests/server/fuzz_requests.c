// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_requests.c — libFuzzer target for what a client's request goes through before
 * a handler sees it, per method of the service (chosen by the first byte):
 *
 *   byte 1 even: gRPC. The bytes are a binary request: sv_wire_check (depth, UTF-8,
 *     NUL), protobuf-c unpack; an accepted message must survive pack → unpack and
 *     protobuf → JSON → protobuf (the LSP codec) unchanged.
 *   byte 1 odd: LSP. The bytes go through the framer in pieces of the size byte 2
 *     picks; each body is parsed as JSON-RPC (cJSON), UTF-8-checked, and its params
 *     decoded as the method's request (sv_pbjson_decode), then encoded, decoded and
 *     encoded again: the JSON texts must be equal.
 *
 * Descriptor-driven (every method's input message, field by field), not a protobuf
 * custom mutator. Built with clang by tests/server/CMakeLists.txt; ctest runs it for a
 * bounded time, scripts/fuzz_soak.sh for minutes (docs/daemon.md "Fuzzing").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lsp_frame.h"
#include "stagd.pb-c.h"
#include "sv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t *pack(const ProtobufCMessage *m, size_t *n) {
  *n = protobuf_c_message_get_packed_size(m);
  uint8_t *b = malloc(*n + 1);
  protobuf_c_message_pack(m, b);
  return b;
}

/* m → JSON → message → JSON gives the same JSON text (unknown binary fields, which
 * JSON drops, do not matter) and a message that packs. */
static void json_round_trip(const ProtobufCMessageDescriptor *d, const ProtobufCMessage *m, sg_arena *a) {
  cJSON *j = sv_pbjson_encode(m);
  char *t1 = cJSON_PrintUnformatted(j);
  ProtobufCMessage *back = NULL;
  sg_error err = SG_ERROR_INIT;
  if (sv_pbjson_decode(d, j, a, &back, &err) != SG_OK) {
    fprintf(stderr, "%s: its own JSON does not decode: %s\n%s\n", d->name, err.message, t1);
    abort();
  }
  cJSON *j2 = sv_pbjson_encode(back);
  char *t2 = cJSON_PrintUnformatted(j2);
  if (strcmp(t1, t2)) {
    fprintf(stderr, "%s: protobuf → JSON → protobuf changed the message\n%s\n%s\n", d->name, t1, t2);
    abort();
  }
  size_t n;
  free(pack(back, &n));
  sg_error_clear(&err);
  cJSON_Delete(j);
  cJSON_Delete(j2);
  free(t1);
  free(t2);
}

static void grpc_request(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n) {
  char why[256];
  if (!sv_wire_check(d, p, n, why, sizeof why)) return;
  sg_arena a;
  sg_arena_init(&a, 0);
  ProtobufCAllocator alloc = sv_arena_allocator(&a);
  ProtobufCMessage *m = protobuf_c_message_unpack(d, &alloc, n, p);
  if (m) {
    size_t k;
    uint8_t *b = pack(m, &k);
    ProtobufCMessage *again = protobuf_c_message_unpack(d, &alloc, k, b);
    if (!again) {
      fprintf(stderr, "%s: a packed message does not unpack\n", d->name);
      abort();
    }
    json_round_trip(d, m, &a);
    free(b);
  }
  sg_arena_free(&a);
}

static void lsp_body(const ProtobufCMessageDescriptor *d, const char *body, size_t n) {
  cJSON *msg = cJSON_ParseWithLength(body, n);
  if (!msg) return;
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
  if (params && sg_utf8_valid(body, n, NULL)) {
    sg_arena a;
    sg_arena_init(&a, 0);
    ProtobufCMessage *m = NULL;
    sg_error err = SG_ERROR_INIT;
    if (sv_pbjson_decode(d, params, &a, &m, &err) == SG_OK) {
      json_round_trip(d, m, &a);
    } else if (!err.message) {
      fprintf(stderr, "%s: params refused without a message\n", d->name);
      abort();
    }
    sg_error_clear(&err);
    sg_arena_free(&a);
  }
  cJSON_Delete(msg);
}

static void lsp_stream(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n, size_t piece) {
  lsp_framer f;
  lsp_framer_init(&f);
  for (size_t i = 0; i < n; i += piece) {
    lsp_framer_feed(&f, (const char *)p + i, n - i < piece ? n - i : piece);
    lsp_frame fr;
    lsp_frame_kind k;
    while ((k = lsp_framer_next(&f, 1 << 20, &fr)) != LSP_FRAME_MORE)
      if (k == LSP_FRAME_MESSAGE) lsp_body(d, fr.body, fr.len);
  }
  lsp_framer_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  const ProtobufCServiceDescriptor *s = &stagd__v1__stagd__descriptor;
  const ProtobufCMessageDescriptor *d = s->methods[data[0] % s->n_methods].input;
  if (data[1] & 1) lsp_stream(d, data + 3, size - 3, (size_t)data[2] + 1);
  else grpc_request(d, data + 3, size - 3);
  return 0;
}
