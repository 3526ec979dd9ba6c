// SPDX-License-Identifier: Apache-2.0
/*
 * unicode.c — lookups in the generated Unicode tables (see unicode_data.h), and NFKC
 * normalisation of identifiers (decompose, reorder by combining class, compose).
 */
#include "unicode_data.h"

#include <stdlib.h>
#include <string.h>

static bool in_ranges(const uint32_t (*r)[2], size_t n, uint32_t cp) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cp < r[mid][0]) hi = mid;
    else if (cp > r[mid][1]) lo = mid + 1;
    else return true;
  }
  return false;
}

bool py_unicode_id_start(uint32_t cp) {
  return in_ranges(py_id_start_ranges, py_id_start_count, cp);
}

bool py_unicode_id_continue(uint32_t cp) {
  return in_ranges(py_id_continue_ranges, py_id_continue_count, cp);
}

/* ---------------------------------------------------------------- NFKC (UAX #15) */
enum { SBASE = 0xac00, LBASE = 0x1100, VBASE = 0x1161, TBASE = 0x11a7, LCOUNT = 19, VCOUNT = 21,
       TCOUNT = 28, NCOUNT = VCOUNT * TCOUNT, SCOUNT = LCOUNT * NCOUNT };

static int ccc_of(uint32_t cp) {
  size_t lo = 0, hi = py_ccc_count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cp < py_ccc_ranges[mid][0]) hi = mid;
    else if (cp > py_ccc_ranges[mid][1]) lo = mid + 1;
    else return (int)py_ccc_ranges[mid][2];
  }
  return 0;
}

/* Appends the full compatibility decomposition of cp to out; returns the new count. */
static size_t decompose(uint32_t cp, uint32_t *out, size_t n) {
  if (cp >= SBASE && cp < SBASE + SCOUNT) {
    uint32_t s = cp - SBASE;
    out[n++] = LBASE + s / NCOUNT;
    out[n++] = VBASE + (s % NCOUNT) / TCOUNT;
    if (s % TCOUNT) out[n++] = TBASE + s % TCOUNT;
    return n;
  }
  size_t lo = 0, hi = cp < 0x80 ? 0 : py_nfkd_count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cp < py_nfkd_index[mid][0]) hi = mid;
    else if (cp > py_nfkd_index[mid][0]) lo = mid + 1;
    else {
      memcpy(out + n, py_nfkd_data + py_nfkd_index[mid][1], sizeof(uint32_t) * py_nfkd_index[mid][2]);
      return n + py_nfkd_index[mid][2];
    }
  }
  out[n++] = cp;
  return n;
}

/* The primary composite of a + b, or 0. */
static uint32_t compose(uint32_t a, uint32_t b) {
  if (a >= LBASE && a < LBASE + LCOUNT && b >= VBASE && b < VBASE + VCOUNT)
    return SBASE + ((a - LBASE) * VCOUNT + (b - VBASE)) * TCOUNT;
  if (a >= SBASE && a < SBASE + SCOUNT && (a - SBASE) % TCOUNT == 0 && b > TBASE && b < TBASE + TCOUNT)
    return a + (b - TBASE);
  size_t lo = 0, hi = py_comp_count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const uint32_t *e = py_comp_pairs[mid];
    if (a < e[0] || (a == e[0] && b < e[1])) hi = mid;
    else if (a > e[0] || b > e[1]) lo = mid + 1;
    else return e[2];
  }
  return 0;
}

static uint32_t utf8_next(const unsigned char **p) {
  const unsigned char *u = *p;
  uint32_t cp;
  if (u[0] < 0x80) cp = u[0], *p += 1;
  else if (u[0] < 0xe0) cp = ((u[0] & 0x1fu) << 6) | (u[1] & 0x3fu), *p += 2;
  else if (u[0] < 0xf0) cp = ((u[0] & 0x0fu) << 12) | ((u[1] & 0x3fu) << 6) | (u[2] & 0x3fu), *p += 3;
  else cp = ((u[0] & 0x07u) << 18) | ((u[1] & 0x3fu) << 12) | ((u[2] & 0x3fu) << 6) | (u[3] & 0x3fu), *p += 4;
  return cp;
}

char *py_unicode_nfkc(const char *s, size_t len, size_t *out_len) {
  /* a code point decomposes into at most 18 (U+FDFA) */
  uint32_t *cps = malloc(sizeof(uint32_t) * (len * 18 + 1));
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)s, *end = p + len; p < end;) n = decompose(utf8_next(&p), cps, n);
  /* canonical ordering: a stable sort of each run of non-starters by class */
  for (size_t i = 1; i < n; i++) {
    int c = ccc_of(cps[i]);
    if (!c) continue;
    for (size_t j = i; j > 0; j--) {
      int pc = ccc_of(cps[j - 1]);
      if (pc <= c) break;
      uint32_t t = cps[j];
      cps[j] = cps[j - 1];
      cps[j - 1] = t;
    }
  }
  /* canonical composition */
  size_t w = 0;
  if (n) {
    size_t starter = 0;
    int last = ccc_of(cps[0]) ? 256 : 0;
    w = 1;
    for (size_t i = 1; i < n; i++) {
      uint32_t ch = cps[i];
      int c = ccc_of(ch);
      uint32_t comp = compose(cps[starter], ch);
      if (comp && (last < c || last == 0)) {
        cps[starter] = comp;
        continue;
      }
      if (c == 0) starter = w;
      last = c;
      cps[w++] = ch;
    }
  }
  char *out = malloc(w * 4 + 1);
  size_t o = 0;
  for (size_t i = 0; i < w; i++) {
    uint32_t cp = cps[i];
    if (cp < 0x80) out[o++] = (char)cp;
    else if (cp < 0x800) {
      out[o++] = (char)(0xc0 | (cp >> 6));
      out[o++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out[o++] = (char)(0xe0 | (cp >> 12));
      out[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
      out[o++] = (char)(0x80 | (cp & 0x3f));
    } else {
      out[o++] = (char)(0xf0 | (cp >> 18));
      out[o++] = (char)(0x80 | ((cp >> 12) & 0x3f));
      out[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
      out[o++] = (char)(0x80 | (cp & 0x3f));
    }
  }
  out[o] = 0;
  *out_len = o;
  free(cps);
  return out;
}

const py_codec *py_unicode_codec(const char *name) {
  for (size_t i = 0; i < py_codec_count; i++)
    if (strcmp(py_codecs[i].name, name) == 0) return &py_codecs[i];
  return NULL;
}

const py_mb_codec *py_unicode_mb_codec(const char *name) {
  for (size_t i = 0; i < py_mb_codec_count; i++)
    if (strcmp(py_mb_codecs[i].name, name) == 0) return &py_mb_codecs[i];
  return NULL;
}

bool py_unicode_nontext_codec(const char *name) {
  for (size_t i = 0; i < py_nontext_codec_count; i++)
    if (strcmp(py_nontext_codecs[i], name) == 0) return true;
  return false;
}

bool py_unicode_printable(uint32_t cp) {
  size_t lo = 0, hi = py_nonprintable_count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cp < py_nonprintable_ranges[mid][0]) hi = mid;
    else if (cp > py_nonprintable_ranges[mid][1]) lo = mid + 1;
    else return false;
  }
  return true;
}

bool py_unicode_lookup(const char *name, size_t len, uint32_t *cp) {
  char up[128];
  if (len == 0 || len >= sizeof up) return false;
  for (size_t i = 0; i < len; i++) {
    char c = name[i];
    up[i] = (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
  }
  up[len] = 0;
  size_t lo = 0, hi = py_uname_count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int r = strcmp(up, py_uname_blob + py_uname_index[mid][0]);
    if (r == 0) {
      *cp = py_uname_index[mid][1];
      return true;
    }
    if (r < 0) hi = mid;
    else lo = mid + 1;
  }
  for (size_t i = 0; i < py_uname_range_count; i++) {
    size_t pl = strlen(py_uname_ranges[i].prefix);
    if (len <= pl || len > pl + 6 || memcmp(up, py_uname_ranges[i].prefix, pl) != 0) continue;
    uint32_t v = 0;
    size_t k;
    for (k = pl; k < len; k++) {
      char c = up[k];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) break;
      v = v * 16 + (uint32_t)d;
    }
    if (k != len || len - pl < 4) continue;
    if (v >= py_uname_ranges[i].first && v <= py_uname_ranges[i].last) {
      *cp = v;
      return true;
    }
  }
  return false;
}
