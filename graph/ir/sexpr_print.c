// SPDX-License-Identifier: Apache-2.0
/*
 * sexpr_print.c — prints sx trees back as text that sx_read accepts unchanged, and
 * the shared float formatting (shortest form that round-trips, always with a '.',
 * 'e', "inf" or "nan" so it reads back as a float).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_ir.h"

/* The fewest significant digits that read back as f: round-tripping is monotone in the
 * precision (more digits are never further from f), so a binary search over 1..17 finds
 * the same form as trying 1, 2, ... 17 in about four snprintf/strtod pairs instead of up
 * to seventeen (a float32 value widened to double usually needs 17). */
void gr_format_float(sg_buf *b, double f) {
  if (isnan(f)) {
    sg_buf_puts(b, "nan");
    return;
  }
  if (isinf(f)) {
    sg_buf_puts(b, f < 0 ? "-inf" : "inf");
    return;
  }
  char tmp[40];
  int lo = 1, hi = 17; /* 17 significant digits always round-trip a double */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    snprintf(tmp, sizeof tmp, "%.*g", mid, f);
    if (strtod(tmp, NULL) == f) hi = mid;
    else lo = mid + 1;
  }
  snprintf(tmp, sizeof tmp, "%.*g", lo, f);
  if (!strpbrk(tmp, ".eE")) strcat(tmp, ".0");
  sg_buf_puts(b, tmp);
}

void sx_print_string(sg_buf *b, const char *s, size_t n) {
  sg_buf_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == '"') sg_buf_puts(b, "\\\"");
    else if (c == '\\') sg_buf_puts(b, "\\\\");
    else if (c == '\n') sg_buf_puts(b, "\\n");
    else if (c == '\t') sg_buf_puts(b, "\\t");
    else sg_buf_putc(b, c);
  }
  sg_buf_putc(b, '"');
}

void sx_print(sg_buf *b, const sx *x) {
  switch (x->kind) {
  case SX_LIST:
    sg_buf_putc(b, '(');
    for (int i = 0; i < x->u.list.n; i++) {
      if (i) sg_buf_putc(b, ' ');
      sx_print(b, x->u.list.items[i]);
    }
    sg_buf_putc(b, ')');
    break;
  case SX_SYM: sg_buf_puts(b, x->u.sym); break;
  case SX_INT: sg_buf_printf(b, "%lld", (long long)x->u.i); break;
  case SX_FLOAT: gr_format_float(b, x->u.f); break;
  case SX_STR: sx_print_string(b, x->u.str.s, x->u.str.len); break;
  case SX_BOOL: sg_buf_puts(b, x->u.b ? "true" : "false"); break;
  case SX_NONE: sg_buf_puts(b, "none"); break;
  }
}
