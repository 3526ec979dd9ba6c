// SPDX-License-Identifier: Apache-2.0
/*
 * sexpr_print.c — prints sx trees back as text that sx_read accepts unchanged (floats
 * in common/'s shortest round-trip spelling, sg_buf_put_double_g).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_ir.h"

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
  case SX_FLOAT: sg_buf_put_double_g(b, x->u.f); break;
  case SX_STR: sx_print_string(b, x->u.str.s, x->u.str.len); break;
  case SX_BOOL: sg_buf_puts(b, x->u.b ? "true" : "false"); break;
  case SX_NONE: sg_buf_puts(b, "none"); break;
  }
}
