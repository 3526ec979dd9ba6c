// SPDX-License-Identifier: Apache-2.0
/*
 * lsp_frame.h — the LSP base protocol's framing, apart from any I/O: bytes go in as
 * they arrive, complete message bodies (and framing errors) come out. A message is a
 * header block of "Name: value\r\n" lines, one of them Content-Length, an empty line,
 * then that many bytes of body.
 */
#ifndef STAGD_LSP_FRAME_H
#define STAGD_LSP_FRAME_H

#include <stdint.h>

#include "sg.h"

typedef struct lsp_framer {
  sg_buf in;          /* bytes received and not yet consumed */
  long long body_len; /* -1: reading a header */
  uint64_t skip;      /* bytes of an oversized body still to discard */
  size_t head_;       /* bytes [0, head_) of in are consumed (dropped lazily) */
  size_t consumed;    /* the last message's length, consumed at the next call */
} lsp_framer;

typedef enum { LSP_FRAME_MORE, LSP_FRAME_MESSAGE, LSP_FRAME_ERROR } lsp_frame_kind;

typedef struct lsp_frame {
  lsp_frame_kind kind;
  const char *body; /* MESSAGE: len bytes (not NUL-terminated), valid until the next call */
  size_t len;
  int code;         /* ERROR: the JSON-RPC error code (-32700, or -32600: too large) */
  char message[200];
} lsp_frame;

enum { LSP_MAX_HEADER_BYTES = 8192 };

void lsp_framer_init(lsp_framer *f);
void lsp_framer_free(lsp_framer *f);
/* Room for at least `want` more bytes at f->in.data + f->in.len (a read writes there,
 * then calls lsp_framer_received); the room is f->in.cap - f->in.len - 1. Invalidates
 * the last message's body. */
void lsp_framer_reserve(lsp_framer *f, size_t want);
void lsp_framer_received(lsp_framer *f, size_t n);
void lsp_framer_feed(lsp_framer *f, const char *data, size_t n);
/* The next event: a complete body, a framing error (the bad bytes are skipped, so
 * calling again continues), or MORE when the bytes so far hold no complete message.
 * Bodies above max_body bytes are skipped with an ERROR. */
lsp_frame_kind lsp_framer_next(lsp_framer *f, uint64_t max_body, lsp_frame *out);

#endif
