// SPDX-License-Identifier: Apache-2.0
/*
 * lsp_frame.c — the LSP base protocol's framing (lsp_frame.h): finds Content-Length
 * headers in the bytes received, hands out complete bodies, and turns what is not a
 * well-formed header into an error event after skipping it, so a session survives
 * garbage: bytes before a header are skipped up to the next Content-Length, a header
 * block without one or with malformed lines is skipped whole, a body over the limit is
 * discarded as it arrives.
 *
 * Consumed bytes are dropped lazily (`head`), and the buffer is compacted only when
 * more room is needed, so many small messages in one read cost no repeated moves.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lsp_frame.h"

enum { RPC_PARSE_ERROR = -32700, RPC_INVALID_REQUEST = -32600 };

/* the first unconsumed byte */
#define HEAD(f) ((f)->in.data + (f)->head_)

void lsp_framer_init(lsp_framer *f) {
  memset(f, 0, sizeof *f);
  f->body_len = -1;
}

void lsp_framer_free(lsp_framer *f) { sg_buf_free(&f->in); }

static void compact(lsp_framer *f) {
  if (!f->head_) return;
  memmove(f->in.data, HEAD(f), f->in.len - f->head_);
  f->in.len -= f->head_;
  f->head_ = 0;
  f->in.data[f->in.len] = '\0';
}

void lsp_framer_reserve(lsp_framer *f, size_t want) {
  compact(f);
  sg_buf_reserve(&f->in, want);
}

void lsp_framer_received(lsp_framer *f, size_t n) {
  f->in.len += n;
  f->in.data[f->in.len] = '\0';
}

void lsp_framer_feed(lsp_framer *f, const char *data, size_t n) {
  lsp_framer_reserve(f, n);
  memcpy(f->in.data + f->in.len, data, n);
  lsp_framer_received(f, n);
}

static void consume(lsp_framer *f, size_t n) { f->head_ += n; }

static lsp_frame_kind error(lsp_frame *out, int code, const char *fmt, ...) SG_PRINTF(3, 4);
static lsp_frame_kind error(lsp_frame *out, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out->message, sizeof out->message, fmt, ap);
  va_end(ap);
  out->kind = LSP_FRAME_ERROR;
  out->code = code;
  return LSP_FRAME_ERROR;
}

static long find_ci(const char *hay, size_t n, const char *needle) {
  size_t k = strlen(needle);
  for (size_t i = 0; i + k <= n; i++)
    if (!strncasecmp(hay + i, needle, k)) return (long)i;
  return -1;
}

static long find_header_end(const char *d, size_t n) {
  for (size_t i = 0; i + 3 < n; i++)
    if (d[i] == '\r' && d[i + 1] == '\n' && d[i + 2] == '\r' && d[i + 3] == '\n') return (long)(i + 4);
  return -1;
}

/* Do bytes [0, n) consist of well-formed "Name: value\r\n" header lines? */
static bool valid_header_lines(const char *d, size_t n) {
  size_t i = 0;
  while (i < n) {
    size_t start = i;
    while (i < n && (d[i] == '-' || (d[i] >= 'A' && d[i] <= 'Z') || (d[i] >= 'a' && d[i] <= 'z') ||
                     (d[i] >= '0' && d[i] <= '9')))
      i++;
    if (i == start || i >= n || d[i] != ':') return false;
    while (i < n && d[i] != '\r') {
      if ((unsigned char)d[i] < 0x20 && d[i] != '\t') return false;
      i++;
    }
    if (i + 1 >= n || d[i + 1] != '\n') return false;
    i += 2;
  }
  return true;
}

lsp_frame_kind lsp_framer_next(lsp_framer *f, uint64_t max_body, lsp_frame *out) {
  consume(f, f->consumed);
  f->consumed = 0;
  out->kind = LSP_FRAME_MORE;
  for (;;) {
    size_t n = f->in.len - f->head_;
    const char *d = HEAD(f);
    if (f->skip) {
      size_t k = n < f->skip ? n : (size_t)f->skip;
      consume(f, k);
      f->skip -= k;
      if (f->skip) return LSP_FRAME_MORE;
      continue;
    }
    if (f->body_len >= 0) {
      if (n < (size_t)f->body_len) return LSP_FRAME_MORE;
      out->kind = LSP_FRAME_MESSAGE;
      out->body = d;
      out->len = (size_t)f->body_len;
      f->consumed = out->len; /* the caller reads the body in place until the next call */
      f->body_len = -1;
      return LSP_FRAME_MESSAGE;
    }
    if (!n) return LSP_FRAME_MORE;
    long cl = find_ci(d, n, "Content-Length:");
    long end = find_header_end(d, n);
    if (cl > 0 && (end < 0 || cl < end) && !valid_header_lines(d, (size_t)cl)) {
      consume(f, (size_t)cl);
      return error(out, RPC_PARSE_ERROR,
                   "invalid message framing: skipped %ld bytes that are not a 'Content-Length: N' header", cl);
    }
    if (end < 0) {
      if (n > LSP_MAX_HEADER_BYTES) {
        consume(f, n - 16); /* keep a tail: a header may be arriving */
        return error(out, RPC_PARSE_ERROR,
                     "invalid message framing: %zu bytes without a complete 'Content-Length: N' header were "
                     "skipped",
                     n - 16);
      }
      return LSP_FRAME_MORE;
    }
    if (cl < 0 || cl >= end) { /* the Content-Length found belongs to the next message */
      consume(f, (size_t)end);
      return error(out, RPC_PARSE_ERROR, "invalid message framing: a header without Content-Length was skipped");
    }
    /* the header block: every line "Name: value"; Content-Length digits */
    if (!valid_header_lines(d, (size_t)end - 2)) {
      consume(f, (size_t)end);
      return error(out, RPC_PARSE_ERROR, "invalid message framing: malformed header lines were skipped");
    }
    const char *v = d + cl + strlen("Content-Length:");
    while (*v == ' ' || *v == '\t') v++;
    char *stop;
    unsigned long long len = strtoull(v, &stop, 10);
    while (*stop == ' ' || *stop == '\t') stop++;
    consume(f, (size_t)end);
    if (stop == v || *stop != '\r' || *v == '-')
      return error(out, RPC_PARSE_ERROR, "invalid message framing: Content-Length is not a number");
    if (len > max_body) {
      f->skip = len;
      return error(out, RPC_INVALID_REQUEST,
                   "message of %llu bytes exceeds the limit of %llu bytes (max-message-bytes); it was skipped",
                   len, (unsigned long long)max_body);
    }
    f->body_len = (long long)len;
  }
}
