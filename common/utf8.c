// SPDX-License-Identifier: Apache-2.0
/*
 * utf8.c — strict UTF-8 validation (RFC 3629) for every string that enters the daemon
 * from a client: protobuf string fields and LSP / JSON-RPC message bodies. Overlong
 * forms, surrogates (U+D800..U+DFFF), code points above U+10FFFF and truncated
 * sequences are invalid, as for Python's bytes.decode("utf-8").
 */
#include <stdint.h>
#include <string.h>

#include "sg.h"

bool sg_utf8_valid(const char *s, size_t n, size_t *bad) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    /* ASCII runs (every id, op and name of a request) eight bytes at a time */
    uint64_t w;
    while (i + 8 <= n && (memcpy(&w, p + i, 8), !(w & 0x8080808080808080ULL))) i += 8;
    if (i >= n) break;
    unsigned c = p[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t len;
    unsigned lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0;      /* overlong */
      else if (c == 0xed) hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;      /* overlong */
      else if (c == 0xf4) hi = 0x8f; /* above U+10FFFF */
    } else {
      break;
    }
    if (i + len > n || p[i + 1] < lo || p[i + 1] > hi) break;
    size_t k = 2;
    while (k < len && p[i + k] >= 0x80 && p[i + k] <= 0xbf) k++;
    if (k < len) break;
    i += len;
  }
  if (bad) *bad = i;
  return i == n;
}
