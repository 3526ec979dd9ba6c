// SPDX-License-Identifier: Apache-2.0
/*
 * unicode_data.h — the Unicode questions the front end asks: is a code point printable
 * (for repr of str constants), which code point a \N{NAME} escape names (names and
 * aliases), may a code point start / continue an identifier, the NFKC form of an
 * identifier, and the single-byte source encodings. The tables are generated at build
 * time by unicode_gen.py (from the Unicode 15.0.0 database, with CPython 3.12's rules);
 * unicode.c searches them.
 */
#ifndef STAGD_CONVERT_UNICODE_DATA_H
#define STAGD_CONVERT_UNICODE_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct py_uname_range {
  const char *prefix;
  uint32_t first, last;
} py_uname_range;

extern const uint32_t py_nonprintable_ranges[][2];
extern const size_t py_nonprintable_count;
extern const char py_uname_blob[];
extern const uint32_t py_uname_index[][2];
extern const size_t py_uname_count;
extern const py_uname_range py_uname_ranges[];
extern const size_t py_uname_range_count;

typedef struct py_codec {
  const char *name;      /* lowercase, '-' and '_' spellings both listed */
  uint32_t to_cp[256];   /* 0xffffffff: undefined byte */
} py_codec;

extern const uint32_t py_id_start_ranges[][2];
extern const size_t py_id_start_count;
extern const uint32_t py_id_continue_ranges[][2];
extern const size_t py_id_continue_count;
extern const uint32_t py_nfkd_data[];
extern const uint32_t py_nfkd_index[][3]; /* code point, offset into data, length */
extern const size_t py_nfkd_count;
extern const uint32_t py_ccc_ranges[][3];  /* first, last, canonical combining class */
extern const size_t py_ccc_count;
extern const uint32_t py_comp_pairs[][3];  /* first, second → primary composite (sorted) */
extern const size_t py_comp_count;
extern const py_codec py_codecs[];
extern const size_t py_codec_count;

typedef struct py_mb_codec {
  const char *name;   /* as find_coding spells it: lowercase, '-' for '_' */
  const char *python; /* the Python codec's name, for messages */
  const char *iconv;  /* glibc iconv's name */
  int quirk;          /* 1: Shift_JIS family (single bytes 0x5c, 0x7e are ASCII in Python);
                         2: GBK (the single byte 0x80 is an error in Python) */
} py_mb_codec;
extern const py_mb_codec py_mb_codecs[];
extern const size_t py_mb_codec_count;
extern const char *const py_nontext_codecs[];
extern const size_t py_nontext_codec_count;

/* For non-ASCII code points: may start / continue an identifier. */
bool py_unicode_id_start(uint32_t cp);
bool py_unicode_id_continue(uint32_t cp);
/* unicodedata.normalize("NFKC", s) of the valid UTF-8 string s[0..len): a malloc'd,
 * NUL-terminated UTF-8 string, its length in *out_len. */
char *py_unicode_nfkc(const char *s, size_t len, size_t *out_len);
/* A single-byte codec by (normalised) name, or NULL. */
const py_codec *py_unicode_codec(const char *name);
/* A multi-byte codec (decoded with iconv) by normalised name, or NULL. */
const py_mb_codec *py_unicode_mb_codec(const char *name);
/* Is name a codec that is not a text encoding (hex, rot13, zlib, ...)? */
bool py_unicode_nontext_codec(const char *name);

/* str.isprintable() for one code point. */
bool py_unicode_printable(uint32_t cp);
/* unicodedata.lookup(name) for \N{name} (case-insensitive); false if unknown. */
bool py_unicode_lookup(const char *name, size_t len, uint32_t *cp);

#endif
