// SPDX-License-Identifier: Apache-2.0
/*
 * unicode_tool.c — answers questions about the generated Unicode tables
 * (convert/unicode_data.h) for test_unicode_tables.py, one per input line:
 *   C HEX     → "HEX P S C NFKC": printable, identifier start, identifier continue
 *               (0/1) and the NFKC of the code point as hex code points joined by '.'
 *   N NAME    → "HEX" of the code point \N{NAME} names, or "-" when none
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unicode_data.h"

/* The code point's UTF-8 bytes into buf; their count. */
static size_t utf8_put(uint32_t cp, char *buf) {
  if (cp < 0x80) { buf[0] = (char)cp; return 1; }
  if (cp < 0x800) { buf[0] = (char)(0xc0 | cp >> 6); buf[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
  if (cp < 0x10000) {
    buf[0] = (char)(0xe0 | cp >> 12);
    buf[1] = (char)(0x80 | (cp >> 6 & 0x3f));
    buf[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  buf[0] = (char)(0xf0 | cp >> 18);
  buf[1] = (char)(0x80 | (cp >> 12 & 0x3f));
  buf[2] = (char)(0x80 | (cp >> 6 & 0x3f));
  buf[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

static void print_nfkc(uint32_t cp) {
  char in[4];
  size_t n = utf8_put(cp, in), len;
  char *s = py_unicode_nfkc(in, n, &len);
  const unsigned char *p = (const unsigned char *)s, *end = p + len;
  for (bool first = true; p < end; first = false) {
    uint32_t c = *p++;
    int more = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
    c &= more == 3 ? 0x07 : more == 2 ? 0x0f : more == 1 ? 0x1f : 0x7f;
    while (more-- > 0 && p < end) c = c << 6 | (*p++ & 0x3f);
    printf("%s%X", first ? "" : ".", c);
  }
  free(s);
}

int main(void) {
  char line[512];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = 0;
    if (line[0] == 'C' && line[1] == ' ') {
      uint32_t cp = (uint32_t)strtoul(line + 2, NULL, 16);
      bool surrogate = cp >= 0xd800 && cp <= 0xdfff;
      printf("%X %d %d %d ", cp, py_unicode_printable(cp), cp >= 0x80 && py_unicode_id_start(cp),
             cp >= 0x80 && py_unicode_id_continue(cp));
      if (surrogate) printf("-"); /* not valid UTF-8: NFKC is never asked */
      else print_nfkc(cp);
      printf("\n");
    } else if (line[0] == 'N' && line[1] == ' ') {
      uint32_t cp;
      if (py_unicode_lookup(line + 2, strlen(line + 2), &cp)) printf("%X\n", cp);
      else printf("-\n");
    } else {
      fprintf(stderr, "unicode_tool: bad line '%s'\n", line);
      return 2;
    }
  }
  return 0;
}
