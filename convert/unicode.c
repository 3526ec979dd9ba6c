/*
 * unicode.c — lookups in the generated Unicode tables (see unicode_data.h).
 */
#include "unicode_data.h"

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

const char *py_unicode_nfkc(uint32_t cp) {
  size_t lo = 0, hi = py_nfkc_count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cp < py_nfkc_map[mid].cp) hi = mid;
    else if (cp > py_nfkc_map[mid].cp) lo = mid + 1;
    else return py_nfkc_map[mid].utf8;
  }
  return NULL;
}

const py_codec *py_unicode_codec(const char *name) {
  for (size_t i = 0; i < py_codec_count; i++)
    if (strcmp(py_codecs[i].name, name) == 0) return &py_codecs[i];
  return NULL;
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
