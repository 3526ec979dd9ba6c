/*
 * unicode_data.h — the two Unicode questions the front end asks: is a code point
 * printable (for repr of str constants) and which code point a \N{NAME} escape names.
 * The tables are generated at build time by unicode_gen.py; unicode.c searches them.
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

typedef struct py_nfkc_entry {
  uint32_t cp;
  const char *utf8;
} py_nfkc_entry;

typedef struct py_codec {
  const char *name;      /* lowercase, '-' and '_' spellings both listed */
  uint32_t to_cp[256];   /* 0xffffffff: undefined byte */
} py_codec;

extern const uint32_t py_id_start_ranges[][2];
extern const size_t py_id_start_count;
extern const uint32_t py_id_continue_ranges[][2];
extern const size_t py_id_continue_count;
extern const py_nfkc_entry py_nfkc_map[];
extern const size_t py_nfkc_count;
extern const py_codec py_codecs[];
extern const size_t py_codec_count;

/* For non-ASCII code points: may start / continue an identifier. */
bool py_unicode_id_start(uint32_t cp);
bool py_unicode_id_continue(uint32_t cp);
/* NFKC form of one identifier character, as UTF-8, or NULL if unchanged. */
const char *py_unicode_nfkc(uint32_t cp);
/* A single-byte codec by (normalised) name, or NULL. */
const py_codec *py_unicode_codec(const char *name);

/* str.isprintable() for one code point. */
bool py_unicode_printable(uint32_t cp);
/* unicodedata.lookup(name) for \N{name} (case-insensitive); false if unknown. */
bool py_unicode_lookup(const char *name, size_t len, uint32_t *cp);

#endif
