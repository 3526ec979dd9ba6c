// SPDX-License-Identifier: Apache-2.0
/*
 * aval.c — abstract values as dumps and error messages print them: "float32[2,?]",
 * "int=3", "(float, bool)". Inference (infer/) computes them; the IR only holds and
 * shows them (node->aval).
 */
#include "gr_ir.h"

void gr_aval_print(sg_buf *b, const gr_aval *a) {
  switch (a->kind) {
  case GA_ANY: sg_buf_puts(b, "any"); break;
  case GA_NONE: sg_buf_puts(b, "none"); break;
  case GA_STR: sg_buf_puts(b, "str"); break;
  case GA_FUNC: sg_buf_puts(b, "function"); break;
  case GA_VAR: sg_buf_puts(b, "variable"); break;
  case GA_RECORD: sg_buf_puts(b, "record"); break;
  case GA_SCALAR:
    sg_buf_puts(b, a->dtype == KN_BOOL ? "bool" : a->dtype == KN_INT64 ? "int" : "float");
    if (a->has_const) {
      sg_buf_putc(b, '=');
      gv_print(b, &a->cval);
    }
    break;
  case GA_TENSOR:
    sg_buf_printf(b, "%s[", kn_dtype_name(a->dtype));
    if (a->ndim < 0) sg_buf_puts(b, "...");
    for (int i = 0; i < a->ndim; i++) {
      if (i) sg_buf_putc(b, ',');
      if (a->shape[i] < 0) sg_buf_putc(b, '?');
      else sg_buf_printf(b, "%lld", (long long)a->shape[i]);
    }
    sg_buf_putc(b, ']');
    break;
  case GA_TUPLE:
    sg_buf_putc(b, '(');
    for (int i = 0; i < a->n; i++) {
      if (i) sg_buf_puts(b, ", ");
      gr_aval_print(b, a->elems[i]);
    }
    sg_buf_putc(b, ')');
    break;
  }
}
