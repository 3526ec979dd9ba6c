// SPDX-License-Identifier: Apache-2.0
/*
 * buf.c — sg_buf, the growable byte buffer used for building strings, messages and
 * serialised output. The buffer is always NUL-terminated once it holds anything.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sg.h"

void sg_buf_reserve(sg_buf *b, size_t extra) {
  size_t need = b->len + extra + 1; /* + NUL */
  if (need <= b->cap) return;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap *= 2;
  b->data = sg_xrealloc(b->data, cap);
  b->cap = cap;
}

void sg_buf_append(sg_buf *b, const void *data, size_t len) {
  sg_buf_reserve(b, len);
  if (len) memcpy(b->data + b->len, data, len);
  b->len += len;
  b->data[b->len] = '\0';
}

void sg_buf_puts(sg_buf *b, const char *s) { sg_buf_append(b, s, strlen(s)); }

void sg_buf_putc(sg_buf *b, char c) {
  sg_buf_reserve(b, 1);
  b->data[b->len++] = c;
  b->data[b->len] = '\0';
}

void sg_buf_vprintf(sg_buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  sg_buf_reserve(b, 64);
  int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
  if (n < 0) {
    va_end(ap2);
    return;
  }
  if ((size_t)n >= b->cap - b->len) {
    sg_buf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap2);
  }
  va_end(ap2);
  b->len += (size_t)n;
}

void sg_buf_printf(sg_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sg_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

void sg_buf_put_json_string(sg_buf *b, const char *s, size_t len) {
  static const char hex[] = "0123456789abcdef";
  sg_buf_reserve(b, len + 2);
  sg_buf_putc(b, '"');
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
      case '"': sg_buf_puts(b, "\\\""); break;
      case '\\': sg_buf_puts(b, "\\\\"); break;
      case '\n': sg_buf_puts(b, "\\n"); break;
      case '\r': sg_buf_puts(b, "\\r"); break;
      case '\t': sg_buf_puts(b, "\\t"); break;
      case '\b': sg_buf_puts(b, "\\b"); break;
      case '\f': sg_buf_puts(b, "\\f"); break;
      default:
        if (c < 0x20) {
          char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
          sg_buf_append(b, esc, sizeof esc);
        } else {
          sg_buf_putc(b, (char)c);
        }
    }
  }
  sg_buf_putc(b, '"');
}

void sg_buf_clear(sg_buf *b) {
  b->len = 0;
  if (b->data) b->data[0] = '\0';
}

void sg_buf_free(sg_buf *b) {
  free(b->data);
  *b = (sg_buf)SG_BUF_INIT;
}

char *sg_buf_detach(sg_buf *b, size_t *len) {
  if (!b->data) {
    sg_buf_reserve(b, 0);
    b->data[0] = '\0';
  }
  char *d = b->data;
  if (len) *len = b->len;
  *b = (sg_buf)SG_BUF_INIT;
  return d;
}

char *sg_read_file(const char *path, size_t *len) {
  FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
  if (!f) return NULL;
  sg_buf b = SG_BUF_INIT;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sg_buf_append(&b, chunk, n);
  bool failed = ferror(f);
  if (f != stdin) fclose(f);
  if (failed) {
    sg_buf_free(&b);
    errno = EIO;
    return NULL;
  }
  return sg_buf_detach(&b, len);
}
